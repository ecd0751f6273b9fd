"""The parser of ``sdtt chat``; the command runs in :mod:`sdtt.commands.chat`."""

from __future__ import annotations

import argparse
from pathlib import Path

from sdtt.commands import lazy_command
from sdtt.commands.common import (
    TRANSCRIPTS_DIR,
    add_base_url_argument,
    add_out_argument,
    setting_default,
)
from sdtt.engine.schedule import PRESETS
from sdtt.engine.settings import SessionSettings
from sdtt.personas.store import DEFAULT_PERSONA


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
    parser.add_argument("--persona", help=f"persona name or file (e.g. {DEFAULT_PERSONA})")
    parser.add_argument("--model", help="provider/model playing the persona, e.g. mock/chatty")
    add_base_url_argument(parser)
    parser.add_argument(
        "--pseudo",
        type=Path,
        metavar="FILE",
        help="pseudo-dialogue to put in the bot's prompt (a chain file from 'sdtt generate')",
    )
    parser.add_argument("--turns", type=int, default=10, help="burst turns to chat (default 10)")
    mode = setting_default(SessionSettings, "mode")
    parser.add_argument(
        "--mode",
        choices=("burst", "pingpong"),
        default=mode,
        help=f"burst: both sides may send several messages in a row; pingpong: one message "
        f"each, taking turns (default {mode})",
    )
    delays = setting_default(SessionSettings, "delays")
    parser.add_argument(
        "--delays",
        choices=PRESETS,
        default=delays,
        help=f"typing-delay preset of the bot (default {delays})",
    )
    t1 = setting_default(SessionSettings, "t1")
    parser.add_argument(
        "--t1",
        type=float,
        default=t1,
        help=f"seconds the bot waits after your first unread message (default {t1:g})",
    )
    max_messages = setting_default(SessionSettings, "max_messages")
    parser.add_argument(
        "--max-messages",
        type=int,
        default=max_messages,
        help=f"most messages per reply (default {max_messages})",
    )
    parser.add_argument(
        "--participant",
        action="store_true",
        help="study participant mode: hide the model, persona and mode",
    )
    seed = setting_default(SessionSettings, "seed")
    parser.add_argument("--seed", type=int, default=seed, help=f"random seed (default {seed})")
    add_out_argument(
        parser,
        folder=True,
        default=TRANSCRIPTS_DIR,
        help=f"folder for the transcript and event log (default ./{TRANSCRIPTS_DIR})",
    )
    parser.set_defaults(func=lazy_command("sdtt.commands.chat"))
