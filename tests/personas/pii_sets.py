"""The labelled PII message sets and how scrubbing is scored on them.

Each line of ``data/pii_messages*.jsonl`` is a chat message written for the purpose,
``{"text": ..., "spans": [{"start", "end", "kind"}]}``, with the kinds of
:data:`sdtt.personas.scrub.KINDS`; messages with no personal data have no spans. The
development set was used while writing the detectors, the check set for one round of
fixes after it was first scored, and the held-out set never. A labelled span is *found*
when scrubbing replaced all of its characters, whatever kind the scrubber called it; a
replacement is *correct* when it overlaps a labelled span. No participant names are
given, so every name is one the scrubber has to find by itself.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from sdtt.personas.scrub import Scrubber

DATA_DIR = Path(__file__).parent / "data"
SETS = {
    "development": DATA_DIR / "pii_messages.jsonl",
    "check": DATA_DIR / "pii_messages_check.jsonl",
    "held-out": DATA_DIR / "pii_messages_heldout.jsonl",
}


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

    def recall(self, kind: str | None = None) -> float:
        """Share of labelled spans (of ``kind``, or all) replaced in full."""
        labelled = self.labelled[kind] if kind else sum(self.labelled.values())
        found = self.found[kind] if kind else sum(self.found.values())
        return found / labelled if labelled else 1.0

    def precision(self, kind: str | None = None) -> float:
        """Share of replacements (of ``kind``, or all) that touch labelled personal data."""
        replaced = self.replaced[kind] if kind else sum(self.replaced.values())
        correct = self.correct[kind] if kind else sum(self.correct.values())
        return correct / replaced if replaced else 1.0


def messages(*paths: Path) -> list[dict[str, object]]:
    """The labelled messages of the given sets (all sets when none is given)."""
    return [
        json.loads(line)
        for path in paths or SETS.values()
        for line in path.read_text(encoding="utf-8").splitlines()
    ]


def score(*paths: Path) -> Scores:
    """Scrub every message (a fresh scrubber each) and count what was found."""
    scores = Scores()
    for message in messages(*paths):
        text = str(message["text"])
        spans: list[dict[str, int | str]] = message["spans"]  # type: ignore[assignment]
        _, replaced = Scrubber().scrub_with_spans(text)
        covered = [False] * len(text)
        for item in replaced:
            covered[item.start : item.end] = [True] * (item.end - item.start)
        for span in spans:
            kind, start, end = str(span["kind"]), int(span["start"]), int(span["end"])
            scores.labelled[kind] += 1
            if all(covered[start:end]):
                scores.found[kind] += 1
            else:
                scores.partly[kind] += any(covered[start:end])
                scores.misses.append(f"{kind}: {text[start:end]!r} in {text!r}")
        for item in replaced:
            scores.replaced[item.kind] += 1
            if any(item.start < int(s["end"]) and int(s["start"]) < item.end for s in spans):
                scores.correct[item.kind] += 1
            else:
                scores.wrong.append(f"{item.kind}: {text[item.start : item.end]!r} in {text!r}")
    return scores
