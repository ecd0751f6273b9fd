"""A trio clock for simulated chats: waiting takes no time, and neither does a model's
real latency.

Simulations (``sdtt simulate --virtual-clock``, ``sdtt demo``, a study's chats) run chats
of many minutes in a moment: whenever every trio task waits for a timer,
:class:`VirtualClock` jumps to it, as ``trio.testing.MockClock(autojump_threshold=0)``
would.

A model that computes in a thread (the local provider) or over the network leaves every
task waiting too, so the clock would leap to the call's own timeout while it thinks.
Inside :meth:`VirtualClock.standing_still` (which :class:`~sdtt.engine.simulate.RealTimeCalls`
holds around each call) the simulation's time stands still instead. The block's own
tasks (and the tasks they start) read a clock that runs at real speed, so the call's
timeouts, retries and waits work as on a real clock; every other task reads the time the
block began at, and none of their timers comes due. So however long a server took to
answer, the simulation saw the call start and end at one instant, and nothing else
happened meanwhile: ``RealTimeCalls`` then lets a stated thinking time pass, computed
from the answer (:func:`~sdtt.engine.simulate.thinking_time`). What a simulation writes
is then a function of its settings, its seed and the models' answers, not of how fast
they came.

:meth:`VirtualClock.real_time` is the other way: while it is held, real time counts for
every task, so what the block took shows in the simulation (which then does not repeat
exactly). ``sdtt serve``'s moderation check uses it, whose wait its tests measure.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import trio

STILL_BEHIND = 1e9
"""Seconds by which the real-speed clock of :meth:`VirtualClock.standing_still` blocks
runs behind the simulation's time: every deadline the blocks set falls before any
deadline of the other tasks, so trio expires theirs without reaching the others'."""

_in_still_block: ContextVar[bool] = ContextVar("sdtt_in_still_block", default=False)
"""Set in the tasks of a :meth:`VirtualClock.standing_still` block (children inherit it)."""


class VirtualClock(trio.abc.Clock):
    """Virtual time that stands still, jumps to the next timer when all tasks wait, stops
    altogether while :meth:`standing_still` is held, and runs at real speed while
    :meth:`real_time` is."""

    def __init__(self) -> None:
        self._virtual = 0.0
        """The simulation's time (up to the moment a real_time block last began or ended)."""
        self._still = 0
        self._still_since = 0.0
        """``perf_counter`` when the standing_still blocks held now began (the first)."""
        self._still_spent = 0.0
        """Real seconds of earlier standing_still blocks: their clock never runs back."""
        self._running = 0
        self._running_since = 0.0

    @property
    def still(self) -> bool:
        """Whether a :meth:`standing_still` block runs: the simulation's time stands still."""
        return self._still > 0

    @property
    def real_speed(self) -> bool:
        """Whether a :meth:`real_time` block runs: real time counts and no jump happens."""
        return self._running > 0

    def start_clock(self) -> None:
        """Called by trio when the run starts."""

    def current_time(self) -> float:
        """The simulation's time; while :meth:`standing_still` is held, the real-speed
        clock of its blocks for their tasks and for trio's own deadline checks."""
        if self._still and (_in_still_block.get() or not _in_a_task()):
            return self._still_time()
        if self._running:
            return self._virtual + (time.perf_counter() - self._running_since)
        return self._virtual

    def deadline_to_sleep_time(self, deadline: float) -> float:
        """Trio asks this only when no task can run: jump to ``deadline``, unless a block
        is held (then wait in real time)."""
        if self._still:
            return max(0.0, deadline - self._still_time())
        if self._running:
            return max(0.0, deadline - self.current_time())
        if math.isfinite(deadline) and deadline > self._virtual:
            self._virtual = deadline
        return 0.0 if math.isfinite(deadline) else math.inf

    @contextmanager
    def standing_still(self) -> Iterator[None]:
        """Run the block (a model call) at real speed while the simulation's time stands
        still for every other task: nothing else happens meanwhile, and however long the
        block took, it took no simulated time. Nests; blocks of several tasks may overlap."""
        if self._still == 0:
            self._still_since = time.perf_counter()
        self._still += 1
        token = _in_still_block.set(True)
        try:
            yield
        finally:
            _in_still_block.reset(token)
            self._still -= 1
            if self._still == 0:
                self._still_spent += time.perf_counter() - self._still_since

    @contextmanager
    def real_time(self) -> Iterator[None]:
        """Let real time count for every task (and no jump happen) until the block ends;
        nests. What the block took then shows in the simulation, so a run does not repeat
        exactly: for a service whose wait a simulation should show (``sdtt serve``'s
        moderation check, in its tests); a model call uses :meth:`standing_still`."""
        if self._running == 0:
            self._running_since = time.perf_counter()
        self._running += 1
        try:
            yield
        finally:
            self._running -= 1
            if self._running == 0:
                self._virtual += time.perf_counter() - self._running_since

    def _still_time(self) -> float:
        spent = self._still_spent + (time.perf_counter() - self._still_since)
        return self._virtual - STILL_BEHIND + spent


def _in_a_task() -> bool:
    """Whether a trio task is running (else trio's run loop asks, between tasks)."""
    try:
        trio.lowlevel.current_task()
    except RuntimeError:
        return False
    return True
