"""The parser of ``sdtt drift``; the command runs in :mod:`sdtt.commands.drift`."""

from __future__ import annotations

import argparse
from pathlib import Path

from sdtt.analysis.drift import DEFAULT_WINDOW
from sdtt.commands import lazy_command


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``sdtt drift``."""
    parser = subparsers.add_parser(
        "drift",
        description=(
            "Compare the persona side of pseudo-dialogue chain files with the person's real "
            "messages, window by window: words and characters per message, messages per "
            "burst, emoji and punctuation rates, and the words-per-message delta (the "
            "paper's '# Words'). Several files are pooled; give files of one persona and mode."
        ),
    )
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE", help="chain file(s)")
    parser.add_argument(
        "--window",
        type=int,
        default=DEFAULT_WINDOW,
        help=f"turns per window (default {DEFAULT_WINDOW})",
    )
    parser.add_argument(
        "--persona",
        help="persona to compare with (default: the chains' persona; if it cannot be found, "
        "the history stored in the chain file)",
    )
    parser.add_argument("--json", action="store_true", help="print the rows as JSON lines")
    parser.set_defaults(func=lazy_command("sdtt.commands.drift"))
