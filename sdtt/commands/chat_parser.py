"""The parser of ``sdtt chat``; the command runs in :mod:`sdtt.commands.chat`."""

from __future__ import annotations

import argparse

from sdtt.commands import lazy_command
from sdtt.commands.session_flags import add_session_flags


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``sdtt chat``."""
    parser = subparsers.add_parser(
        "chat",
        description=(
            "Chat with a persona bot in a messenger-like terminal app: send several "
            "messages in a row, watch the bot type and answer in bursts. Without --persona "
            "and --model, a setup screen asks what to chat with. Writes <id>.jsonl "
            "(transcript) and <id>.events.jsonl (event log) to --out as the chat goes."
        ),
    )
    add_session_flags(parser, simulated=False)
    parser.add_argument(
        "--participant",
        action="store_true",
        help="study participant mode: hide the model, persona and mode",
    )
    parser.set_defaults(func=lazy_command("sdtt.commands.chat"))
