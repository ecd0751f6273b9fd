"""A trio clock for simulated chats: waiting takes no time, model calls take real time.

Simulations (``sdtt simulate --virtual-clock``, ``sdtt demo``) run chats of many minutes in
a moment: whenever every trio task waits for a timer, :class:`VirtualClock` jumps to it, as
``trio.testing.MockClock(autojump_threshold=0)`` would. A model that computes in a thread
(the local provider) or over the network leaves every task waiting too, so the clock would
leap to the call's own timeout while it thinks: inside :meth:`VirtualClock.real_time`
(which :class:`~sdtt.engine.simulate.RealTimeCalls` holds around each call) it runs at
real speed instead and never jumps. Model latency stays what it really was; everything
else, including the CPU time the code itself takes, costs no virtual time, so a run with
mock models is exact and repeatable.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager

import trio


class VirtualClock(trio.abc.Clock):
    """Virtual time that stands still, jumps to the next timer when all tasks wait, and
    runs at real speed while :meth:`real_time` is held."""

    def __init__(self) -> None:
        self._virtual = 0.0
        """Virtual seconds up to the moment real time last started or stopped counting."""
        self._real_since = 0.0
        self._holds = 0

    @property
    def real_speed(self) -> bool:
        """Whether :meth:`real_time` is held: real time counts and the clock never jumps."""
        return self._holds > 0

    def start_clock(self) -> None:
        """Called by trio when the run starts."""

    def current_time(self) -> float:
        """The virtual time now."""
        if self._holds:
            return self._virtual + (time.perf_counter() - self._real_since)
        return self._virtual

    def deadline_to_sleep_time(self, deadline: float) -> float:
        """Trio asks this only when no task can run: jump to ``deadline`` unless a model
        call holds the clock at real speed."""
        if self._holds:
            return max(0.0, deadline - self.current_time())
        if math.isfinite(deadline) and deadline > self._virtual:
            self._virtual = deadline
        return 0.0 if math.isfinite(deadline) else math.inf

    @contextmanager
    def real_time(self) -> Iterator[None]:
        """Let real time count (and no jumps happen) until the block ends; nests."""
        if self._holds == 0:
            self._real_since = time.perf_counter()
        self._holds += 1
        try:
            yield
        finally:
            self._holds -= 1
            if self._holds == 0:
                self._virtual += time.perf_counter() - self._real_since
