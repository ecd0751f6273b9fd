"""The flags of a chat session with the persona bot, declared once for ``sdtt chat`` and
``sdtt simulate``: what the bot is (its condition) and how its session runs."""

from __future__ import annotations

import argparse
from pathlib import Path

from sdtt.commands.common import (
    TRANSCRIPTS_DIR,
    add_base_url_argument,
    add_out_argument,
    add_setting,
    setting_default,
)
from sdtt.dialogue.condition import CHAT_MODES
from sdtt.engine.schedule import PRESETS
from sdtt.engine.settings import SessionSettings
from sdtt.models.registry import DEFAULT_MODEL
from sdtt.personas.store import DEFAULT_PERSONA


def add_session_flags(parser: argparse.ArgumentParser, *, simulated: bool) -> None:
    """Add --persona, --model (with --base-url), --pseudo, --turns, --mode, --delays, --t1,
    --max-messages, --seed and --out. ``simulated``: both sides are run by sdtt (``sdtt
    simulate``: --persona and --model have defaults); otherwise a person chats (``sdtt
    chat``: without them, a setup screen asks)."""
    if simulated:
        parser.add_argument(
            "--persona",
            default=DEFAULT_PERSONA,
            help=f"persona name or file (default {DEFAULT_PERSONA})",
        )
        parser.add_argument(
            "--model",
            default=DEFAULT_MODEL,
            help=f"provider/model playing the persona (default {DEFAULT_MODEL})",
        )
    else:
        parser.add_argument("--persona", help=f"persona name or file (e.g. {DEFAULT_PERSONA})")
        parser.add_argument("--model", help="provider/model playing the persona, e.g. mock/chatty")
    add_base_url_argument(parser)
    parser.add_argument(
        "--pseudo",
        type=Path,
        metavar="FILE",
        help="pseudo-dialogue to put in the bot's prompt: a chain file from 'sdtt generate' "
        "(or any transcript file)",
    )
    what = "run" if simulated else "chat"
    parser.add_argument("--turns", type=int, default=10, help=f"burst turns to {what} (default 10)")
    mode = setting_default(SessionSettings, "mode")
    converted = (
        "; in pingpong mode a burst --pseudo is converted to ping-pong (first message of each "
        "run kept) and the conversion is reported"
        if simulated
        else ""
    )
    parser.add_argument(
        "--mode",
        choices=CHAT_MODES,
        default=mode,
        help=f"burst: both sides may send several messages in a row; pingpong: one message "
        f"each, taking turns (default {mode}){converted}",
    )
    delays = setting_default(SessionSettings, "delays")
    parser.add_argument(
        "--delays",
        choices=PRESETS,
        default=delays,
        help=f"typing-delay preset of the bot (default {delays}; fitted = the persona's own "
        "rhythm)",
    )
    waits = "each side waits after the other's" if simulated else "the bot waits after your"
    add_setting(parser, "--t1", SessionSettings, f"seconds {waits} first unread message")
    add_setting(parser, "--max-messages", SessionSettings, "most messages per reply")
    add_setting(
        parser,
        "--seed",
        SessionSettings,
        "random seed; every other seed of the chat derives from it",
    )
    add_out_argument(
        parser,
        folder=True,
        default=TRANSCRIPTS_DIR,
        help=f"folder for the transcript and event log (default ./{TRANSCRIPTS_DIR})",
    )
