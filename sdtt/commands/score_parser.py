"""The parser of ``sdtt score`` and the options ``sdtt report`` shares with it (scoring
itself is :mod:`sdtt.commands.score`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from sdtt.analysis.defaults import BREAKDOWNS, DEFAULT_BOOTSTRAP, DEFAULT_MARGIN
from sdtt.commands import lazy_command
from sdtt.commands.common import add_out_argument


def add_scoring_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by ``score`` and ``report``."""
    parser.add_argument(
        "judgements",
        type=Path,
        nargs="+",
        metavar="JUDGEMENTS",
        help="judgement files (.jsonl) from 'sdtt judge', 'judge-ui' or 'responses import'",
    )
    parser.add_argument(
        "--bootstrap",
        type=int,
        default=DEFAULT_BOOTSTRAP,
        metavar="N",
        help=f"cluster bootstrap replicates (default {DEFAULT_BOOTSTRAP}; 0 for none)",
    )
    parser.add_argument(
        "--margin",
        type=float,
        default=DEFAULT_MARGIN,
        help=f"equivalence margin around 50%% for the TOST (default {DEFAULT_MARGIN})",
    )
    parser.add_argument(
        "--pool",
        action="store_true",
        help="also show figures and breakdowns pooled over every condition, judge type and "
        "bot model, titled as pooled (off by default: conditions, human vs LLM judges and "
        "a baseline vs the model under test are not comparable)",
    )


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``sdtt score``."""
    parser = subparsers.add_parser(
        "score",
        description=(
            "Score judgements (human and LLM alike): one row per condition (model x mode x "
            "total turns N+X), human and LLM judges in separate tables, with pair-averaged "
            "and pooled X-Turn Pass Rate, Wilson and cluster-bootstrap intervals, exact "
            "binomial test against 50%, TOST equivalence, d', detectability, LLM position "
            "bias and order consistency. Catch pairs and excluded judgements are counted, "
            "never used."
        ),
    )
    add_scoring_options(parser)
    parser.add_argument(
        "--by",
        default="",
        help=(
            "comma-separated breakdowns, each within one judge group and bot model "
            "(--pool adds one over all): "
            + ", ".join(BREAKDOWNS)
            + ", demographics or a demographic question name (turns: total turn index "
            "N+X; n: pseudo-dialogue turns; x: live turns shown)"
        ),
    )
    parser.add_argument(
        "--sequential",
        action="store_true",
        help="also show, per condition, the anytime-valid confidence sequence of the pass "
        "rate over the judgements in the order recorded, and whether (and at which "
        "judgement) the stopping rule was met: 50%% left the sequence, or it lies within "
        "--margin of 50%%",
    )
    parser.add_argument(
        "--format",
        choices=("table", "json", "csv"),
        default="table",
        help="table: Rich tables (default); json or csv: every pass-rate table as tidy rows, "
        "one per table x judge group x condition (or --by level) x statistic, with n, the "
        "interval and its method, e.g. sdtt score judgements.jsonl --format csv > rates.csv",
    )
    add_out_argument(
        parser,
        folder=False,
        help="file to write the --format json|csv rows to (default: standard output)",
    )
    parser.set_defaults(func=lazy_command("sdtt.commands.score"))
