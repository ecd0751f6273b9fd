"""How people reply in a live chat, from the chitchat corpus's real timestamps.

Three things an interrogator's page can time, each measured on the corpus's cleaned
two-speaker chats (:mod:`sdtt.personas.corpus`; every sender there is a person):

- the **reply delay**: seconds from the partner's last message to the first message of
  the reply, by that message's length;
- the **gap inside a burst**: seconds from one message to the next of the same sender,
  by the next message's length;
- the **burst size**: how many messages in a row a sender writes.

Delays and gaps are kept as quantile tables per length bin (:data:`LENGTH_BINS`), not a
fitted curve: a log-linear fit of the reply delay on length put the median of a
3-character reply at 8 s where people take 10 s, and a live bot drawn from it is told
apart by exactly such shifts. Delays over :data:`LONGEST` seconds (the partner was away)
are left out. :data:`HUMAN` is the table of the installed corpus, written out here so a
server starts without reading it (``tests/personas/test_reply_timing.py`` checks it is
what :func:`fit_reply_timing` finds); the engine's ``human`` delay preset draws from it.
"""

from __future__ import annotations

import bisect
import itertools
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

LENGTH_BINS = (1, 5, 10, 20, 40, 80, 160)
"""Lower ends of the length bins, in characters (the last is open)."""
QUANTILES = tuple(round(0.05 * k, 2) for k in range(21))
"""The shares at which each table gives the seconds (0 = least, 1 = most)."""
LONGEST = 120.0
"""Seconds: longer delays and gaps are pauses (the partner away), not replies."""
LARGEST_BURST = 8
"""Bursts longer than this are counted as this long."""


class _Message(Protocol):
    @property
    def sender(self) -> str: ...

    @property
    def text(self) -> str: ...

    @property
    def time(self) -> object: ...


class _Conversation(Protocol):
    @property
    def messages(self) -> Sequence[_Message]: ...


@dataclass
class ReplySamples:
    """The corpus's replies as measured: (length, seconds) pairs and burst sizes."""

    delays: list[tuple[int, float]] = field(default_factory=list)
    """A reply's first message: its length and the seconds since the partner's last."""
    gaps: list[tuple[int, float]] = field(default_factory=list)
    """A message inside a burst: its length and the seconds since the one before."""
    bursts: list[int] = field(default_factory=list)


def reply_samples(conversations: Iterable[_Conversation]) -> ReplySamples:
    """What :class:`ReplySamples` holds, from conversations of
    :class:`~sdtt.personas.corpus.CorpusConversation` shape (``messages`` with
    ``sender``, ``text`` and a datetime ``time``)."""
    samples = ReplySamples()
    for conversation in conversations:
        run = 0
        for before, after in itertools.pairwise(conversation.messages):
            seconds = (after.time - before.time).total_seconds()  # type: ignore[operator]
            if after.sender == before.sender:
                run += 1
                if 0 < seconds <= LONGEST:
                    samples.gaps.append((len(after.text), seconds))
                continue
            samples.bursts.append(min(LARGEST_BURST, run + 1))
            run = 0
            if 0 < seconds <= LONGEST:
                samples.delays.append((len(after.text), seconds))
        if conversation.messages:
            samples.bursts.append(min(LARGEST_BURST, run + 1))
    return samples


Table = tuple[tuple[float, ...], ...]
"""Seconds at each of :data:`QUANTILES`, one row per length bin."""


@dataclass(frozen=True)
class ReplyTiming:
    """Quantile tables of the reply delay and the gap inside a burst, and burst sizes."""

    delay: Table
    gap: Table
    burst_sizes: tuple[float, ...]
    """Share of bursts of 1, 2, ... messages."""

    def draw_delay(self, length: int, rng: random.Random) -> float:
        """A reply delay for a first message of ``length`` characters."""
        return _draw(self.delay[length_bin(length)], rng)

    def draw_gap(self, length: int, rng: random.Random) -> float:
        """A gap before a message of ``length`` characters inside a burst."""
        return _draw(self.gap[length_bin(length)], rng)

    def draw_burst(self, rng: random.Random) -> int:
        """A burst size."""
        return rng.choices(range(1, len(self.burst_sizes) + 1), self.burst_sizes)[0]


def length_bin(length: int) -> int:
    """The index of the length bin of ``length`` characters."""
    return max(0, bisect.bisect_right(LENGTH_BINS, length) - 1)


def _draw(row: Sequence[float], rng: random.Random) -> float:
    """A draw from the distribution whose quantiles are ``row`` (linear in between)."""
    point = rng.random() * (len(row) - 1)
    low = int(point)
    if low >= len(row) - 1:
        return row[-1]
    return row[low] + (row[low + 1] - row[low]) * (point - low)


def _quantiles(values: Sequence[float]) -> tuple[float, ...]:
    ordered = sorted(values)
    last = len(ordered) - 1
    row = []
    for share in QUANTILES:
        point = share * last
        low = int(point)
        high = min(last, low + 1)
        row.append(round(ordered[low] + (ordered[high] - ordered[low]) * (point - low), 2))
    return tuple(row)


def _table(pairs: Sequence[tuple[int, float]]) -> Table:
    rows: list[list[float]] = [[] for _ in LENGTH_BINS]
    for length, seconds in pairs:
        rows[length_bin(length)].append(seconds)
    return tuple(_quantiles(row) for row in rows)


def fit_reply_timing(samples: ReplySamples) -> ReplyTiming:
    """The quantile tables and burst shares of ``samples``."""
    counts = Counter(samples.bursts)
    total = sum(counts.values())
    shares = tuple(round(counts[size] / total, 4) for size in range(1, LARGEST_BURST + 1))
    return ReplyTiming(delay=_table(samples.delays), gap=_table(samples.gaps), burst_sizes=shares)


# fmt: off
HUMAN = ReplyTiming(
    delay=(
        (1, 2, 3, 3, 4, 5, 5, 6, 7, 8, 9,
         11, 13, 15, 19, 23, 29, 38, 51, 73, 120),
        (1, 2, 3, 4, 4, 5, 6, 7, 7, 8, 10,
         11, 13, 16, 19, 23, 30, 38, 51, 72, 120),
        (1, 2, 3, 4, 5, 6, 7, 7, 8, 10, 11,
         13, 14, 17, 20, 25, 30, 38, 51, 71, 120),
        (1, 2, 3, 4, 5, 6, 8, 9, 10, 12, 13,
         15, 18, 20, 23, 28, 34, 41, 53.4, 74, 120),
        (1, 2, 3, 5, 6, 8, 10, 12, 14, 16, 19,
         21, 24, 27, 31, 36, 41, 49, 61, 80, 120),
        (1, 3, 5, 7, 10, 13, 16, 20, 23, 27, 30,
         33, 37, 41, 46, 51, 58, 65, 76, 92, 120),
        (1, 4, 8, 13, 17.4, 22, 27, 32, 36, 39, 43,
         47, 51, 55, 61, 66, 73, 81, 90, 101, 120),
    ),
    gap=(
        (1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2,
         3, 3, 3, 4, 4, 5, 6, 8, 14, 120),
        (1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3,
         4, 4, 4, 5, 6, 7, 8, 11, 21, 119),
        (1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 5,
         5, 5, 6, 7, 7, 9, 10, 13, 22, 120),
        (1, 4, 4, 5, 5, 6, 6, 6, 7, 7, 8,
         8, 9, 10, 11, 12, 13, 16, 20, 31, 120),
        (1, 7, 8, 9, 10, 10, 11, 12, 12, 13, 14,
         15, 16, 17, 18, 20, 22, 25, 31, 44, 120),
        (1, 14, 15, 17, 18, 19, 21, 22, 23, 24, 26,
         27, 29, 31, 33, 36, 39, 44, 51, 65, 120),
        (1, 26, 29, 31, 33, 35, 36, 38, 39, 41, 43,
         44, 46, 48, 50, 54, 57, 63.45, 72, 86, 120),
    ),
    burst_sizes=(0.549, 0.2808, 0.1038, 0.0366, 0.0145, 0.0067, 0.0034, 0.0053),
)
# fmt: on
"""The chitchat corpus's replies (chitchat-dataset 0.9.0: 121,817 reply delays, 102,121
gaps inside a burst, 135,379 bursts), as :func:`fit_reply_timing` finds them."""
