"""``sdtt persona import chitchat``: personas from the Chit-Chat Challenge corpus.

Picks senders with many messages (or the ones named), and makes each a persona whose
history is their own cleaned conversations with other students, the partner on side
``"user"``. Cleaning and timestamps are described in :mod:`sdtt.personas.corpus`.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

from rich.console import Console

from sdtt.errors import InputError
from sdtt.personas.corpus import Corpus, load_corpus
from sdtt.personas.persona import Persona

DEFAULT_MIN_MESSAGES = 300
DEFAULT_COUNT = 3
DEFAULT_HISTORY_TURNS = 120


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative")
    return value


def pick_senders(corpus: Corpus, *, min_messages: int, count: int) -> list[str]:
    """The ``count`` senders with the most messages, if they have at least ``min_messages``."""
    return [sender for sender, _ in corpus.senders(min_messages)[:count]]


class ChitchatImporter:
    """Builds personas from the chitchat corpus (PyPI ``chitchat-dataset``, MIT)."""

    name = "chitchat"
    help = "personas from the real student chats of the chitchat-dataset corpus (MIT)"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add ``--min-messages``, ``--count``, ``--sender`` and ``--history-turns``."""
        parser.add_argument(
            "--min-messages",
            type=_positive,
            default=DEFAULT_MIN_MESSAGES,
            metavar="N",
            help=f"only senders with at least N messages (default {DEFAULT_MIN_MESSAGES})",
        )
        parser.add_argument(
            "--count",
            type=_positive,
            default=DEFAULT_COUNT,
            metavar="K",
            help=f"how many senders to pick, most messages first (default {DEFAULT_COUNT})",
        )
        parser.add_argument(
            "--sender",
            action="append",
            default=[],
            metavar="ID",
            help="build this sender (full anonymised id or its first characters); "
            "repeatable; replaces the automatic pick",
        )
        parser.add_argument(
            "--history-turns",
            type=_positive,
            default=DEFAULT_HISTORY_TURNS,
            metavar="N",
            help="keep the most recent whole conversations that give at least N burst "
            f"turns (default {DEFAULT_HISTORY_TURNS}; 0 keeps them all)",
        )

    def build(self, args: argparse.Namespace) -> list[Persona]:
        """Load the corpus, pick the senders and build one persona each."""
        corpus = load_corpus()
        Console(highlight=False).print(f"[dim]chitchat corpus: {corpus.report.describe()}[/]")
        senders = list(args.sender) or pick_senders(
            corpus, min_messages=args.min_messages, count=args.count
        )
        if not senders:
            raise InputError(
                f"no sender of the chitchat corpus has {args.min_messages} messages or more.",
                field="--min-messages",
                hint="Lower --min-messages.",
            )
        created = datetime.now(UTC).replace(microsecond=0)
        return [
            corpus.persona(sender, history_turns=args.history_turns, created=created)
            for sender in dict.fromkeys(senders)
        ]


IMPORTER = ChitchatImporter()
