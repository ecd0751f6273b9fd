"""Recall and precision of PII scrubbing per kind, on the labelled messages in tests/.

The sets and the scoring rules are described in ``tests/personas/pii_sets.py``: chat
messages written for the purpose with their personal data marked by kind, plus messages
with none. The held-out set was never used for tuning, so its figures are the fairest.

Usage: PYTHONPATH=. python benchmarks/scrub_recall.py [--show-misses]
"""

from __future__ import annotations

import argparse

from _quick import add_quick

from sdtt.personas.scrub import KINDS
from tests.personas.pii_sets import SETS, Scores, score


def report(title: str, scores: Scores, show_misses: bool) -> None:
    """Print one table of recall and precision per kind."""
    print(f"\n{title}")
    print(
        f"{'kind':<9} {'labelled':>8} {'found':>6} {'partly':>6} {'recall':>7}"
        f" {'replaced':>8} {'precision':>9}"
    )
    rows = [(kind, kind) for kind in KINDS] + [("all", None)]
    for label, kind in rows:
        labelled = scores.labelled[kind] if kind else sum(scores.labelled.values())
        found = scores.found[kind] if kind else sum(scores.found.values())
        partly = scores.partly[kind] if kind else sum(scores.partly.values())
        replaced = scores.replaced[kind] if kind else sum(scores.replaced.values())
        print(
            f"{label:<9} {labelled:>8} {found:>6} {partly:>6} {scores.recall(kind):>7.1%} "
            f"{replaced:>8} {scores.precision(kind):>9.1%}"
        )
    if show_misses:
        print("missed or partly replaced:", *scores.misses, sep="\n  ")
        print("replaced but not personal data:", *scores.wrong, sep="\n  ")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show-misses", action="store_true", help="list misses and mistakes")
    add_quick(parser)
    args = parser.parse_args()
    for title, path in SETS.items():
        report(f"{title} set ({path.name})", score(path), args.show_misses)
    report("all sets", score(), show_misses=False)


if __name__ == "__main__":
    main()
