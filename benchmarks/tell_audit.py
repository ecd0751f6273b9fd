"""The tell audit of ``sdtt serve`` (see tests/serve/tell_audit.py): scripted bot and
person rooms at speed 1 on a virtual clock; prints a classifier's cross-validated
accuracy at telling them apart from what the interrogator's browser received (with its
exact 95% interval, which should contain 50%) and each feature's mean by witness.

Usage: python benchmarks/tell_audit.py [--people 200] [--turns 2] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from functools import partial
from pathlib import Path

import trio
from _quick import add_quick
from trio.testing import MockClock

from tests.serve.tell_audit import describe, play


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=200, help="participants (default 200)")
    parser.add_argument("--turns", type=int, default=2, help="turns per chat (default 2)")
    parser.add_argument("--seed", type=int, default=0)
    add_quick(parser, people=24)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sdtt-audit-") as folder:
        audit = trio.run(
            partial(play, Path(folder), people=args.people, turns=args.turns, seed=args.seed),
            clock=MockClock(autojump_threshold=0),
        )
    print(describe(audit))
    low, high = audit.interval()
    if not low <= 0.5 <= high:
        print("a classifier tells the bot apart: the server gives it away")
        sys.exit(1)


if __name__ == "__main__":
    main()
