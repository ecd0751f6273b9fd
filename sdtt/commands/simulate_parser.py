"""The parser of ``sdtt simulate``; the command runs in :mod:`sdtt.commands.simulate`."""

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
from sdtt.models.registry import DEFAULT_MODEL
from sdtt.personas.prompt import DEFAULT_HISTORY_TURNS
from sdtt.personas.store import DEFAULT_PERSONA


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``sdtt simulate``."""
    parser = subparsers.add_parser(
        "simulate",
        description=(
            "Run the burst engine: a simulated interrogator (an LLM, or a script with "
            "--script) chats with the persona bot for --turns burst turns; both sides type "
            "with realistic delays and may send several messages in a row. Writes "
            "<id>.jsonl (transcript) and <id>.events.jsonl (event log, replayable) to --out."
        ),
    )
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
    add_base_url_argument(parser)
    side = parser.add_mutually_exclusive_group()
    side.add_argument(
        "--interrogator",
        metavar="MODEL",
        help="provider/model playing the human side (default: the same as --model; for a "
        f"rule-based --model such as eliza/classic, {DEFAULT_MODEL})",
    )
    side.add_argument(
        "--script",
        type=Path,
        metavar="FILE",
        help="play the human side from a text file: one message per line, a blank line "
        "between bursts",
    )
    parser.add_argument("--turns", type=int, default=10, help="burst turns to run (default 10)")
    parser.add_argument(
        "--pseudo",
        type=Path,
        metavar="FILE",
        help="pseudo-dialogue to put in the bot's prompt: a chain file from 'sdtt generate' "
        "(or any transcript file)",
    )
    parser.add_argument(
        "--mode",
        choices=("burst", "pingpong"),
        default=setting_default(SessionSettings, "mode"),
        help="burst (default) or pingpong; in pingpong mode a burst --pseudo is converted "
        "to ping-pong (first message of each run kept) and the conversion is reported",
    )
    parser.add_argument(
        "--drop-meaningless",
        action="store_true",
        help="with --mode pingpong: also leave out pseudo-dialogue turns with an empty or "
        "meaningless message (no letter or digit) after the conversion",
    )
    parser.add_argument(
        "--topic",
        default=None,
        help="what the interrogator chats about (default: a topic of the chitchat corpus "
        "picked with --seed, so 'questionnaire build --human corpus' finds real chats on it)",
    )
    delays = setting_default(SessionSettings, "delays")
    parser.add_argument(
        "--delays",
        choices=PRESETS,
        default=delays,
        help=f"typing-delay preset of the bot (default {delays}; fitted = the persona's own "
        "rhythm)",
    )
    t1 = setting_default(SessionSettings, "t1")
    parser.add_argument(
        "--t1",
        type=float,
        default=t1,
        help=f"seconds each side waits after the other's first unread message (default {t1:g})",
    )
    max_messages = setting_default(SessionSettings, "max_messages")
    parser.add_argument(
        "--max-messages",
        type=int,
        default=max_messages,
        help=f"most messages per reply (default {max_messages})",
    )
    parser.add_argument(
        "--history-turns",
        type=int,
        default=DEFAULT_HISTORY_TURNS,
        help=f"turns of the persona's history in the prompt (default {DEFAULT_HISTORY_TURNS})",
    )
    parser.add_argument(
        "--context-tokens",
        type=int,
        default=None,
        metavar="N",
        help="the model's context window: the persona history is cut to fit it, with a "
        "note (default: no cut; llama.cpp servers often have 8192, too little for 100 turns)",
    )
    parser.add_argument(
        "--virtual-clock",
        action="store_true",
        help="run on a virtual clock: waiting and typing take no real time, model calls "
        "take what they really take",
    )
    parser.add_argument(
        "--max-minutes",
        type=float,
        default=None,
        help="stop after this many minutes of chat (default: 10 per turn)",
    )
    seed = setting_default(SessionSettings, "seed")
    parser.add_argument("--seed", type=int, default=seed, help=f"random seed (default {seed})")
    parser.add_argument(
        "--start",
        metavar="TIME",
        default=None,
        help="wall time the chat starts at, e.g. 2025-01-01T12:00 (UTC unless an offset is "
        "given); the prompts' timestamps follow it, so with --virtual-clock and mock models "
        "a run repeats exactly (default: now)",
    )
    add_out_argument(
        parser,
        folder=True,
        default=TRANSCRIPTS_DIR,
        help=f"folder for the transcript and event log (default ./{TRANSCRIPTS_DIR})",
    )
    parser.add_argument("--quiet", action="store_true", help="don't print the chat as it runs")
    parser.set_defaults(func=lazy_command("sdtt.commands.simulate"))
