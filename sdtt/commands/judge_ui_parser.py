"""The parser of ``sdtt judge-ui``; the command runs in :mod:`sdtt.commands.judge_ui`."""

from __future__ import annotations

import argparse
from pathlib import Path

from sdtt.commands import lazy_command
from sdtt.commands.common import add_out_argument


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``sdtt judge-ui``."""
    parser = subparsers.add_parser(
        "judge-ui",
        description=(
            "Present a built study's questionnaire to one judge in the terminal: the "
            "demographic questions first, then each pair one at a time. Answers are appended "
            "to <out>.answers.csv as they are given; at the end they are scored against the "
            "answer key (never shown) and appended to the judgement file --out, in the same "
            "format as 'sdtt responses import'."
        ),
    )
    parser.add_argument(
        "study", type=Path, metavar="STUDY", help="study folder (questionnaire and answer key)"
    )
    parser.add_argument(
        "--judge", help="participant id (default: a fresh random id, e.g. lab-1a2b3c4d)"
    )
    add_out_argument(
        parser,
        folder=False,
        help="file of judgements to append to (default STUDY/judgements-lab.jsonl)",
    )
    parser.add_argument(
        "--form",
        type=int,
        metavar="N",
        help="under a judge design, the form this judge gets (default: picked from the "
        "judge id; give judges forms 1, 2, 3... in turn to keep the design balanced)",
    )
    parser.set_defaults(func=lazy_command("sdtt.commands.judge_ui"))
