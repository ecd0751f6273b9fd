"""Live-chat topics from the pairing pool, so every bot chat has human chats to pair with.

A bot chat is compared with a human chat on the same topic. When the topic is not one
of the chitchat corpus's prompts, ``questionnaire build --human corpus`` finds nothing to
compare with; so commands that start live chats take their default topic from here.
"""

from __future__ import annotations

from collections.abc import Callable

from sdtt.errors import SdttError
from sdtt.questionnaires.pairing import CorpusLike, CorpusPool, same_topic
from sdtt.seeds import seeded_rng


def live_topic(seed: int, corpus_loader: Callable[[], CorpusLike] | None = None) -> str:
    """A corpus topic picked with ``seed`` (the same seed always gives the same topic)."""
    topics = CorpusPool(corpus_loader).topics()
    if not topics:
        # An empty corpus cannot be paired with anyway; any neutral topic will do.
        return "If money were no object, how would you spend your time?"
    return seeded_rng(seed, "live-topic").choice(topics)


def in_pool(topic: str, corpus_loader: Callable[[], CorpusLike] | None = None) -> bool:
    """True when the corpus has conversations on ``topic`` (case and spacing ignored), or
    when the corpus cannot be read (then nothing can be said against the topic)."""
    try:
        topics = CorpusPool(corpus_loader).topics()
    except SdttError:
        return True
    return any(same_topic(topic, known) for known in topics)
