"""The typing indicator an interrogator sees, by one policy for every witness.

What a witness really does (the bot's session typing, a person's keystrokes) is recorded
but never shown: shown as it happens, the bot's indicator came exactly ``t1`` after each
question and went off before its message, a person's at their own pace and after theirs,
and that difference alone told the bot apart. As in Jones & Bergen's public Turing test,
the indicator goes on 2 + U(0, 3) seconds after the interrogator's message, whoever the
witness is, and off right after the witness's next message (or when the chat ends).

An answer is never shown before its indicator, nor a moment after it: a witness's message
that comes while a question waits for its answer is shown no sooner than the time a
person takes to type it (:func:`typing_time`) after the indicator went on, or is due to.
A quick answer is held until then, the bot's or a person's alike: shown as it came, a
quick answer (mostly the bot's) came with no indicator at all, and bot rooms showed
fewer indicators per question than person rooms.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

INDICATOR_DELAY = 2.0
"""Seconds after the interrogator's message before the indicator may go on."""
INDICATOR_JITTER = 3.0
"""Up to this many more seconds, drawn uniformly for each message."""
SECONDS_PER_CHAR = 0.3
"""A person's typing time per character (the ``paper`` delay preset's mean)..."""
TYPING_MIN = 1.5
"""...but the indicator shows at least this long before an answer..."""
TYPING_MAX = 6.0
"""...and a held answer waits at most this long after the indicator went on."""


def typing_time(text: str) -> float:
    """Seconds the indicator shows before an answer of ``text`` at the least."""
    return min(TYPING_MAX, max(TYPING_MIN, SECONDS_PER_CHAR * len(text)))


class Indicator:
    """The indicator of one chat; ``show(on)`` sends the frame to the interrogator."""

    def __init__(self, rng: random.Random, show: Callable[[bool], None]) -> None:
        self._rng = rng
        self._show = show
        self.on = False
        self.on_since = 0.0
        """When the indicator last went on."""
        self.due: float | None = None
        """When the indicator goes on (None: nothing asked since the last answer)."""

    def asked(self, now: float) -> None:
        """The interrogator sent a message at ``now`` (an earlier one still pending keeps
        its time: the indicator answers the first unanswered question)."""
        if not self.on and self.due is None:
            self.due = now + INDICATOR_DELAY + self._rng.uniform(0.0, INDICATOR_JITTER)

    def release(self, now: float, text: str) -> float:
        """When a witness's message of ``text`` that came at ``now`` may be shown: at
        once unless it answers a question, else no sooner than :func:`typing_time` after
        the indicator went on (or will)."""
        if self.on:
            start = self.on_since
        elif self.due is not None:
            start = self.due
        else:
            return now
        return max(now, start + typing_time(text))

    def answered(self) -> None:
        """The witness's message was just delivered (or the chat ended): off, after it."""
        self.due = None
        if self.on:
            self.on = False
            self._show(False)

    def tick(self, now: float) -> float:
        """Turn the indicator on if it is due; when to look again (inf: never)."""
        if self.due is None:
            return math.inf
        if now < self.due:
            return self.due
        self.due = None
        self.on = True
        self.on_since = now
        self._show(True)
        return math.inf
