"""Style statistics of one side of some conversations: how long, how bursty, how written.

Pure functions over messages, so the same numbers describe a persona's real history
(``sdtt persona show``), a bot's replies, or a window of a long dialogue (to measure how
far the bot drifts from the person as the dialogue goes on).
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from sdtt.dialogue.message import RESPONSE, Message, Side
from sdtt.dialogue.turns import count_turns, side_runs

EMOJI = re.compile(
    "[\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff\u3030\u303d\u3297\u3299\ufe0f]"
)
"""Pictographic emoji and the symbol blocks phones offer as emoji."""
EMOTICON = re.compile(
    r"(?<![\w:;=])[:;=][-'^o]?[)(\]\[DPpO/\\|*3]+(?![\w])|<3|\^_*\^|(?<!\w)[xX][dD](?!\w)"
)
"""Typed faces such as ``:)``, ``;-P``, ``:D``, ``<3``, ``^^``, ``xD``."""
LAUGHTER = re.compile(r"\b(?:a?ha(?:ha)+h*|he(?:he)+|lol+|lmao+|rofl)\b", re.IGNORECASE)
"""Written laughter: ``haha``, ``hehe``, ``lol``, ``lmao``, ``rofl``."""


class Summary(BaseModel):
    """Mean, median, standard deviation and range of some numbers (all 0 when empty)."""

    model_config = ConfigDict(frozen=True)

    count: int = 0
    mean: float = 0.0
    median: float = 0.0
    sd: float = 0.0
    minimum: float = 0.0
    maximum: float = 0.0

    @classmethod
    def of(cls, values: Sequence[float]) -> Summary:
        """Summarise ``values``; the standard deviation is the sample one (0 for one value)."""
        if not values:
            return cls()
        return cls(
            count=len(values),
            mean=statistics.fmean(values),
            median=statistics.median(values),
            sd=statistics.stdev(values) if len(values) > 1 else 0.0,
            minimum=min(values),
            maximum=max(values),
        )


class StyleStats(BaseModel):
    """How one side writes. Rates are shares of that side's messages (0 when it has none)."""

    model_config = ConfigDict(frozen=True)

    side: Side
    conversations: int = Field(description="Conversations looked at.")
    turns: int = Field(description="Burst turns of those conversations (both sides).")
    messages: int = Field(description="Messages of this side.")
    other_messages: int = Field(description="Messages of the other side.")
    words_per_message: Summary = Field(description="Words (white-space separated) per message.")
    chars_per_message: Summary = Field(description="Characters per message.")
    burst_sizes: dict[int, int] = Field(
        description="Burst size -> how many bursts (runs of this side's messages) had it."
    )
    burst_size: Summary = Field(description="Messages per burst.")
    multi_message_bursts: float = Field(description="Share of bursts with 2 or more messages.")
    question: float = Field(description="Share of messages containing '?'.")
    exclamation: float = Field(description="Share of messages containing '!'.")
    final_period: float = Field(description="Share ending in a single '.' (not '..').")
    ellipsis: float = Field(description="Share containing '..' or '…'.")
    lowercase_start: float = Field(
        description="Among messages starting with a letter, the share starting lower-case."
    )
    emoji: float = Field(description="Share containing at least one pictographic emoji.")
    emoticon: float = Field(description="Share containing a typed face such as ':)' or '<3'.")
    laughter: float = Field(description="Share containing 'haha', 'lol' and the like.")

    @property
    def burst_shares(self) -> dict[int, float]:
        """Burst size -> share of bursts of that size."""
        total = sum(self.burst_sizes.values())
        return {size: n / total for size, n in sorted(self.burst_sizes.items())} if total else {}


def _share(hits: int, total: int) -> float:
    return hits / total if total else 0.0


def style_stats(conversations: Iterable[Sequence[Message]], side: Side = RESPONSE) -> StyleStats:
    """The style statistics of ``side`` over several conversations.

    Each item of ``conversations`` is one conversation's messages in order; bursts and
    turns never run across two conversations.
    """
    conversation_count = turns = other = 0
    texts: list[str] = []
    bursts: Counter[int] = Counter()
    for messages in conversations:
        conversation_count += 1
        turns += count_turns(messages)
        bursts.update(side_runs(messages, side))
        for message in messages:
            if message.side == side:
                texts.append(message.text)
            else:
                other += 1
    count = len(texts)
    stripped = [text.strip() for text in texts]
    lettered = [text for text in stripped if text[:1].isalpha()]
    burst_list = [size for size, n in bursts.items() for _ in range(n)]
    return StyleStats(
        side=side,
        conversations=conversation_count,
        turns=turns,
        messages=count,
        other_messages=other,
        words_per_message=Summary.of([len(text.split()) for text in texts]),
        chars_per_message=Summary.of([len(text) for text in texts]),
        burst_sizes=dict(sorted(bursts.items())),
        burst_size=Summary.of(sorted(burst_list)),
        multi_message_bursts=_share(
            sum(n for size, n in bursts.items() if size > 1), len(burst_list)
        ),
        question=_share(sum("?" in text for text in texts), count),
        exclamation=_share(sum("!" in text for text in texts), count),
        final_period=_share(
            sum(text.endswith(".") and not text.endswith("..") for text in stripped), count
        ),
        ellipsis=_share(sum(".." in text or "…" in text for text in texts), count),
        lowercase_start=_share(sum(text[0].islower() for text in lettered), len(lettered)),
        emoji=_share(sum(EMOJI.search(text) is not None for text in texts), count),
        emoticon=_share(sum(EMOTICON.search(text) is not None for text in texts), count),
        laughter=_share(sum(LAUGHTER.search(text) is not None for text in texts), count),
    )


def message_style_stats(messages: Sequence[Message], side: Side = RESPONSE) -> StyleStats:
    """The style statistics of ``side`` in one conversation (or one window of it)."""
    return style_stats([messages], side)
