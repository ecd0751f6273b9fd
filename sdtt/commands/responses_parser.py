"""The parser of ``sdtt responses``; the command runs in :mod:`sdtt.commands.responses`."""

from __future__ import annotations

import argparse
from pathlib import Path

from sdtt.commands import lazy_command
from sdtt.commands.common import add_actions, add_out_argument
from sdtt.surveys.tools import either, readable_tools, reveal_tools


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``sdtt responses import``."""
    actions = add_actions(
        subparsers,
        "responses",
        dest="responses_command",
        description="Turn survey answers into scored judgements (JSONL), one per judge and pair.",
    )
    importing = actions.add_parser(
        "import",
        help="import answer files of one survey tool",
        description=(
            "Read answer files exported by a survey tool, score them with the study's answer "
            "key and write judgements as JSONL. Judges who fail catch pairs or topic checks, "
            "unfinished and preview responses and repeat participants are kept and marked "
            "excluded, with the reason. Formats: "
            + "; ".join(f"{tool.name}: {tool.answers}" for tool in readable_tools())
            + "."
        ),
    )
    importing.add_argument(
        "files", type=Path, nargs="+", metavar="FILE", help="answer files exported by the tool"
    )
    importing.add_argument(
        "--study", type=Path, required=True, help="study folder (questionnaire and answer key)"
    )
    importing.add_argument(
        "--format",
        required=True,
        choices=[tool.name for tool in readable_tools()],
        dest="format_name",
        help="the survey tool the files come from (see the formats above)",
    )
    add_out_argument(
        importing, folder=False, required=True, help="file of judgements to write (.jsonl)"
    )
    importing.add_argument(
        "--append",
        action="store_true",
        help="add to an existing judgement file (judges already in it count as repeats)",
    )
    importing.add_argument(
        "--force", action="store_true", help="replace --out when it exists (instead of --append)"
    )
    importing.add_argument(
        "--reveal",
        action="store_true",
        help=f"the answers come from a reveal-mode export ({either(reveal_tools())}): write belief "
        "traces (one per judge and pair, a belief after every turn) instead of judgements",
    )
    importing.set_defaults(func=lazy_command("sdtt.commands.responses", "run_import"))
