"""The tell audit of ``sdtt serve`` (see tests/serve/tell_audit.py): scripted bot and
person rooms at speed 1 on a virtual clock; prints a classifier's cross-validated
accuracy at telling them apart from what the interrogator's browser received (with its
exact 95% interval, which should contain 50%) and each feature's mean by witness.

With --browser the participants are real Chromium pages of the study page on a real
``sdtt serve`` (tests/serve/browser_audit.py), its clock --speed times real time; the
audit is printed twice, of the frames the pages received and of what they showed. With
--mode three-party the rooms are three-party (each interrogator's page has a chat with
the bot and one with a person) and the classifier tells which chat is the bot's. With
--tell too, the server has a tell put back, which the audit must catch: in two-party
rooms that of tests/serve/tell_injected.py (bot chats end the moment the bot has
answered), in three-party rooms that of tests/serve/tell_typing.py (a bot chat shows the
bot's own typing, off before each message).

``--delays paper`` times the bot by another delay preset than the study default
(``human``): the bot's timing as it was, which the audit must catch.

Usage: python benchmarks/tell_audit.py [--people 200] [--turns 2] [--seed 0]
       [--delays human|paper|...] [--browser [--speed 10] [--mode two-party|three-party]
       [--tell]]
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

from tests.serve.tell_audit import Audit, describe, play


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=200, help="participants (default 200)")
    parser.add_argument("--turns", type=int, default=2, help="turns per chat (default 2)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--browser", action="store_true", help="real Chromium pages on a real sdtt serve"
    )
    parser.add_argument(
        "--speed", type=float, default=10, help="--browser: the study clock's speed (10)"
    )
    parser.add_argument(
        "--mode",
        choices=("two-party", "three-party"),
        default="two-party",
        help="--browser: the rooms' mode (default two-party)",
    )
    parser.add_argument("--tell", action="store_true", help="--browser: serve with a tell put back")
    parser.add_argument(
        "--delays",
        default="human",
        help="the bot's delay preset (default human, the study default)",
    )
    add_quick(parser, people=24)
    args = parser.parse_args()
    if args.tell and not args.browser:
        parser.error("--tell needs --browser")
    if args.mode != "two-party" and not args.browser:
        parser.error("--mode needs --browser")
    with tempfile.TemporaryDirectory(prefix="sdtt-audit-") as folder:
        if args.browser:
            audits = _in_chromium(Path(folder), args)
        else:
            play_audit = partial(
                play,
                Path(folder),
                people=args.people,
                turns=args.turns,
                seed=args.seed,
                delays=args.delays,
            )
            audits = {"": trio.run(play_audit, clock=MockClock(autojump_threshold=0))}
    at_chance = True
    for name, audit in audits.items():
        print(f"{name}{describe(audit)}")
        low, high = audit.interval()
        at_chance = at_chance and low <= 0.5 <= high
    if args.tell and at_chance:
        print("the tell put back was not caught: the audit lacks power")
        sys.exit(1)
    if args.delays != "human":
        print(f"({args.delays} delays: {'not caught' if at_chance else 'caught'})")
    elif not args.tell and not at_chance:
        print("a classifier tells the bot apart: the server gives it away")
        sys.exit(1)


def _in_chromium(folder: Path, args: argparse.Namespace) -> dict[str, Audit]:
    from tests.serve.browser_audit import play_in_chromium

    tell = "tests.serve.tell_typing" if args.mode == "three-party" else "tests.serve.tell_injected"
    found = play_in_chromium(
        folder,
        people=args.people,
        turns=args.turns,
        seed=args.seed,
        speed=args.speed,
        module=tell if args.tell else "sdtt.cli",
        mode=args.mode,
    )
    for error in found.errors:
        print(f"page error: {error}")
    return {"received by the pages: ": found.received, "shown by the pages: ": found.seen}


if __name__ == "__main__":
    main()
