"""The parser of ``sdtt simulate``; the command runs in :mod:`sdtt.commands.simulate`."""

from __future__ import annotations

import argparse
from pathlib import Path

from sdtt.commands import lazy_command
from sdtt.commands.session_flags import add_session_flags
from sdtt.models.registry import DEFAULT_MODEL, PROVIDERS
from sdtt.personas.prompt import DEFAULT_HISTORY_TURNS


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
    add_session_flags(parser, simulated=True)
    side = parser.add_mutually_exclusive_group()
    rule_based = next((p.example for p in PROVIDERS.values() if p.rule_based), "ELIZA")
    side.add_argument(
        "--interrogator",
        metavar="MODEL",
        help="provider/model playing the human side (default: the same as --model; for a "
        f"rule-based --model such as {rule_based}, {DEFAULT_MODEL}, which needs the local "
        "extra: without it, name one here or pass --script)",
    )
    side.add_argument(
        "--script",
        type=Path,
        metavar="FILE",
        help="play the human side from a text file: one message per line, a blank line "
        "between bursts",
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
        help="run on a virtual clock: waiting and typing take no real time, and a model "
        "call takes a thinking time set by its answer's length (0.5 s plus 200 characters "
        "a second), not its real latency, so a rerun repeats exactly; without it the chat "
        "runs in real time, the models' real latency included",
    )
    parser.add_argument(
        "--max-minutes",
        type=float,
        default=None,
        help="stop after this many minutes of chat (default: 10 per turn)",
    )
    parser.add_argument(
        "--start",
        metavar="TIME",
        default=None,
        help="wall time the chat starts at, e.g. 2025-01-01T12:00 (UTC unless an offset is "
        "given); the prompts' timestamps follow it, so with --virtual-clock and models that "
        "answer alike (mock, or a server with a fixed seed) a run repeats exactly "
        "(default: now)",
    )
    parser.add_argument("--quiet", action="store_true", help="don't print the chat as it runs")
    parser.set_defaults(func=lazy_command("sdtt.commands.simulate"))
