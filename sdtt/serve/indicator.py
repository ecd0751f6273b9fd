"""The typing indicator an interrogator sees, by one policy for every witness.

What a witness really does (the bot's session typing, a person's keystrokes) is recorded
but never shown: shown as it happens, the bot's indicator came exactly ``t1`` after each
question and went off before its message, a person's at their own pace and after theirs,
and that difference alone told the bot apart. As in Jones & Bergen's public Turing test,
the indicator goes on 2 + U(0, 3) seconds after the interrogator's message, whoever the
witness is, and off right after the witness's next message (or when the chat ends).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

INDICATOR_DELAY = 2.0
"""Seconds after the interrogator's message before the indicator may go on."""
INDICATOR_JITTER = 3.0
"""Up to this many more seconds, drawn uniformly for each message."""


class Indicator:
    """The indicator of one chat; ``show(on)`` sends the frame to the interrogator."""

    def __init__(self, rng: random.Random, show: Callable[[bool], None]) -> None:
        self._rng = rng
        self._show = show
        self.on = False
        self.due: float | None = None
        """When the indicator goes on (None: nothing asked since the last answer)."""

    def asked(self, now: float) -> None:
        """The interrogator sent a message at ``now`` (an earlier one still pending keeps
        its time: the indicator answers the first unanswered question)."""
        if not self.on and self.due is None:
            self.due = now + INDICATOR_DELAY + self._rng.uniform(0.0, INDICATOR_JITTER)

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
        self._show(True)
        return math.inf
