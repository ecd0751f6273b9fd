"""The parser of ``sdtt report`` (the report itself is :mod:`sdtt.commands.report`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from sdtt.commands import lazy_command
from sdtt.commands.common import add_out_argument
from sdtt.commands.score_parser import add_scoring_options


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``sdtt report``."""
    parser = subparsers.add_parser(
        "report",
        description=(
            "Write report.html (standalone, figures embedded), report.md and PNG figures: "
            "one row per condition (model x mode x total turns), human and LLM judges "
            "apart; pass rate against total turns N+X per model (log axis, intervals); a "
            "length curve for chunked studies; verdicts by truth, tells, and every breakdown."
        ),
    )
    add_scoring_options(parser)
    add_out_argument(
        parser, folder=True, required=True, help="folder for the report and its figures"
    )
    parser.add_argument(
        "--study",
        type=Path,
        default=None,
        help="study folder, for the tells (bot vs human), the human side of the pairs and "
        "the messages caught out of character per condition",
    )
    parser.add_argument("--title", default="sdtt report", help="report title")
    parser.set_defaults(func=lazy_command("sdtt.commands.report"))
