"""``sdtt persona import chitchat``: personas from the Chit-Chat Challenge corpus.

Picks senders with many messages (or the ones named), and makes each a persona whose
history is their own cleaned conversations with other students, the partner on side
``"user"``. Cleaning and timestamps are described in :mod:`sdtt.personas.corpus`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from sdtt.errors import InputError
from sdtt.personas.corpus import CleaningReport, Corpus, load_corpus
from sdtt.personas.persona import Persona

__all__ = [
    "IMPORTER",
    "ChitchatImporter",
    "ChitchatOptions",
    "CorpusImport",
    "import_chitchat",
    "load_corpus",
    "pick_senders",
]

DEFAULT_MIN_MESSAGES = 300
DEFAULT_COUNT = 3
DEFAULT_HISTORY_TURNS = 120


@dataclass(frozen=True)
class ChitchatOptions:
    """Which senders of the corpus become personas, and how much history each keeps."""

    min_messages: int = DEFAULT_MIN_MESSAGES
    """Only senders with at least this many messages."""
    count: int = DEFAULT_COUNT
    """How many senders to pick, most messages first."""
    senders: tuple[str, ...] = ()
    """Build these senders (full anonymised id or its first characters) instead."""
    history_turns: int = DEFAULT_HISTORY_TURNS
    """Keep the most recent whole conversations giving at least this many burst turns
    (0 keeps them all)."""


@dataclass(frozen=True)
class CorpusImport:
    """The personas built from the corpus, and what cleaning the corpus did."""

    personas: list[Persona]
    cleaning: CleaningReport


def pick_senders(corpus: Corpus, *, min_messages: int, count: int) -> list[str]:
    """The ``count`` senders with the most messages, if they have at least ``min_messages``."""
    return [sender for sender, _ in corpus.senders(min_messages)[:count]]


def import_chitchat(
    options: ChitchatOptions | None = None,
    *,
    corpus: Corpus | None = None,
    progress: Callable[[int, int, str], None] | None = None,
) -> CorpusImport:
    """Personas from the chitchat corpus (PyPI ``chitchat-dataset``, MIT): one per sender.

    Without ``options.senders`` the busiest senders are picked. ``corpus`` is the corpus
    already loaded with :func:`~sdtt.personas.corpus.load_corpus` (default: load it).
    ``progress(done, total, sender)`` is called before each persona is built.
    """
    options = options or ChitchatOptions()
    corpus = corpus if corpus is not None else load_corpus()
    senders = list(options.senders) or pick_senders(
        corpus, min_messages=options.min_messages, count=options.count
    )
    if not senders:
        raise InputError(
            f"no sender of the chitchat corpus has {options.min_messages} messages or more.",
            field="--min-messages",
            hint="Lower --min-messages.",
        )
    created = datetime.now(UTC).replace(microsecond=0)
    unique = list(dict.fromkeys(senders))
    personas = []
    for done, sender in enumerate(unique):
        if progress is not None:
            progress(done, len(unique), sender)
        personas.append(
            corpus.persona(sender, history_turns=options.history_turns, created=created)
        )
    return CorpusImport(personas=personas, cleaning=corpus.report)


class ChitchatImporter:
    """Builds personas from the chitchat corpus with :func:`import_chitchat`."""

    name = "chitchat"
    help = "personas from the real student chats of the chitchat-dataset corpus (MIT)"


IMPORTER = ChitchatImporter()
