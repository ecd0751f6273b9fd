"""The parser of ``sdtt plan``; the command runs in :mod:`sdtt.commands.plan`."""

from __future__ import annotations

import argparse

from sdtt.analysis.defaults import DEFAULT_MARGIN
from sdtt.commands import lazy_command


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``sdtt plan``."""
    parser = subparsers.add_parser(
        "plan",
        description=(
            "Power of the exact binomial test against 50% (to detect a pass rate other "
            "than 50%) or of the TOST (to claim the bot is indistinguishable within a "
            "margin), for a grid of pairs x judges per pair. Clustering of judgements "
            "within pairs is allowed for with --icc. With --sequential: how many "
            "judgements the anytime-valid stopping rule of 'sdtt score --sequential' "
            "needs, expected and worst case, by seeded simulation."
        ),
    )
    parser.add_argument(
        "--pass-rate",
        type=float,
        default=None,
        help="true pass rate: to detect (default 0.4), or with --equivalence (default 0.5)",
    )
    parser.add_argument("--equivalence", action="store_true", help="plan a TOST instead")
    parser.add_argument(
        "--margin",
        type=float,
        default=DEFAULT_MARGIN,
        help=f"TOST margin (default {DEFAULT_MARGIN})",
    )
    parser.add_argument("--alpha", type=float, default=0.05, help="significance (default 0.05)")
    parser.add_argument("--power", type=float, default=0.8, help="target power (default 0.8)")
    parser.add_argument("--icc", type=float, default=0.0, help="within-pair correlation (0)")
    parser.add_argument("--pairs", default="10,20,40,80,160", help="pairs to try")
    parser.add_argument("--judges", default="1,5,10,20,40", help="judges per pair to try")
    parser.add_argument(
        "--sequential",
        action="store_true",
        help="plan sequential judging instead: stop as soon as the confidence sequence "
        "concludes (simulated stopping times, not a power grid)",
    )
    parser.add_argument(
        "--max-judgements",
        type=int,
        default=2000,
        metavar="N",
        help="with --sequential: the most judgements a study would collect (default 2000)",
    )
    parser.add_argument(
        "--simulations",
        type=int,
        default=2000,
        metavar="N",
        help="with --sequential: simulated studies (default 2000)",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="with --sequential: simulation seed (default 0)"
    )
    parser.set_defaults(func=lazy_command("sdtt.commands.plan"))
