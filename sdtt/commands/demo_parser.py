"""The parser of ``sdtt demo`` (the demo itself is :mod:`sdtt.commands.demo`)."""

from __future__ import annotations

import argparse

from sdtt.commands import lazy_command
from sdtt.commands.common import TRANSCRIPTS_DIR, add_base_url_argument, add_out_argument
from sdtt.models.registry import DEFAULT_MODEL
from sdtt.personas.store import DEFAULT_PERSONA

DEFAULT_CONTEXT_TOKENS = 8192
"""The context window ``--context-tokens`` assumes."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``sdtt demo``."""
    parser = subparsers.add_parser(
        "demo",
        description=(
            "Run a whole Self-Directed Turing Test on one persona: the persona bot answers "
            "an opening burst; the model writes a short pseudo-dialogue; a simulated "
            "interrogator chats with the bot (virtual clock); the chat is paired with a "
            "real human chat in a questionnaire (SurveyJS and HTML); an LLM judge answers "
            "it; the pass rate is printed and a report written. Every stage uses the "
            "embedded local model unless --model names another (e.g. openai/gpt-4o, "
            "anthropic/claude-sonnet-4-5, mock/chatty)."
        ),
    )
    parser.add_argument(
        "--model", default=DEFAULT_MODEL, help=f"provider/model to use (default {DEFAULT_MODEL})"
    )
    parser.add_argument(
        "--persona",
        default=DEFAULT_PERSONA,
        help=f"persona name or file (default {DEFAULT_PERSONA}; see 'sdtt persona list')",
    )
    add_out_argument(
        parser,
        folder=True,
        default=TRANSCRIPTS_DIR,
        help=f"folder for the files the demo writes (default ./{TRANSCRIPTS_DIR})",
    )
    add_base_url_argument(parser)
    parser.add_argument(
        "--seed",
        type=int,
        default=7,
        help="random seed (default 7); the same seed resumes the files of an earlier run",
    )
    parser.add_argument(
        "--context-tokens",
        type=int,
        default=DEFAULT_CONTEXT_TOKENS,
        help="the model's context window; the persona history is cut to fit it "
        f"(default {DEFAULT_CONTEXT_TOKENS})",
    )
    parser.set_defaults(func=lazy_command("sdtt.commands.demo"))
