"""Recall and precision of PII scrubbing per kind, on the labelled messages in tests/.

The sets (``tests/personas/data/pii_messages*.jsonl``) hold chat messages written for
the purpose, each with the character spans of its personal data and their kinds, and
messages with none. The detectors were tuned while looking at the development set; the
held-out set was written afterwards and not used for tuning, so its figures are the
fairer estimate. A labelled span is *found* when scrubbing replaced all of its
characters (whatever kind the scrubber called it), *partly* when some of them. A
replacement is *correct* when it overlaps a labelled span; precision is per kind the
scrubber gave. No participant names are given: every name in the set is one the
scrubber has to find by itself.

Usage: PYTHONPATH=. python benchmarks/scrub_recall.py [--show-misses]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from sdtt.personas.scrub import KINDS, Scrubber

DATA_DIR = Path(__file__).resolve().parents[1] / "tests" / "personas" / "data"
DATA = DATA_DIR / "pii_messages.jsonl"
HELD_OUT = DATA_DIR / "pii_messages_heldout.jsonl"
SETS = {"development": DATA, "held-out": HELD_OUT}


@dataclass
class Scores:
    """Counts behind recall and precision, per kind."""

    labelled: Counter[str] = field(default_factory=Counter)
    found: Counter[str] = field(default_factory=Counter)
    partly: Counter[str] = field(default_factory=Counter)
    replaced: Counter[str] = field(default_factory=Counter)
    correct: Counter[str] = field(default_factory=Counter)
    misses: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)

    def recall(self, kind: str) -> float:
        """Share of labelled spans of ``kind`` replaced in full."""
        return self.found[kind] / self.labelled[kind] if self.labelled[kind] else 1.0

    def precision(self, kind: str) -> float:
        """Share of ``kind`` replacements that touch labelled personal data."""
        return self.correct[kind] / self.replaced[kind] if self.replaced[kind] else 1.0


def score(path: Path = DATA) -> Scores:
    """Scrub every message of the set (one scrubber per message) and count."""
    scores = Scores()
    for line in path.read_text(encoding="utf-8").splitlines():
        message = json.loads(line)
        text = message["text"]
        _, replaced = Scrubber().scrub_with_spans(text)
        covered = [False] * len(text)
        for item in replaced:
            covered[item.start : item.end] = [True] * (item.end - item.start)
        for span in message["spans"]:
            kind = span["kind"]
            inside = covered[span["start"] : span["end"]]
            scores.labelled[kind] += 1
            if all(inside):
                scores.found[kind] += 1
            else:
                scores.partly[kind] += any(inside)
                scores.misses.append(f"{kind}: {text[span['start'] : span['end']]!r} in {text!r}")
        for item in replaced:
            scores.replaced[item.kind] += 1
            if any(item.start < s["end"] and s["start"] < item.end for s in message["spans"]):
                scores.correct[item.kind] += 1
            else:
                scores.wrong.append(f"{item.kind}: {text[item.start : item.end]!r} in {text!r}")
    return scores


def report(title: str, scores: Scores, show_misses: bool) -> None:
    """Print one table of recall and precision per kind."""
    print(f"\n{title}")
    print(
        f"{'kind':<9} {'labelled':>8} {'found':>6} {'partly':>6} {'recall':>7}"
        f" {'replaced':>8} {'precision':>9}"
    )
    for kind in KINDS:
        print(
            f"{kind:<9} {scores.labelled[kind]:>8} {scores.found[kind]:>6} "
            f"{scores.partly[kind]:>6} {scores.recall(kind):>7.1%} "
            f"{scores.replaced[kind]:>8} {scores.precision(kind):>9.1%}"
        )
    total = sum(scores.labelled.values())
    found = sum(scores.found.values())
    replaced = sum(scores.replaced.values())
    correct = sum(scores.correct.values())
    print(
        f"{'all':<9} {total:>8} {found:>6} {sum(scores.partly.values()):>6} "
        f"{found / total:>7.1%} {replaced:>8} {correct / replaced:>9.1%}"
    )
    if show_misses:
        print("missed or partly replaced:", *scores.misses, sep="\n  ")
        print("replaced but not personal data:", *scores.wrong, sep="\n  ")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show-misses", action="store_true", help="list misses and mistakes")
    args = parser.parse_args()
    for title, path in SETS.items():
        report(f"{title} set ({path.name})", score(path), args.show_misses)


if __name__ == "__main__":
    main()
