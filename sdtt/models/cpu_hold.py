"""The CPU held by one model call at a time, so each call's own work runs in one go.

trio runs the ready tasks a step at a time, each in turn. One SDK call is many short
steps (build the request, send it, read the answer, parse it), each ending where the task
yields. When many calls are ready at once, as when twenty chains' answers arrive in the
same moment, their steps interleave and every call finishes only when nearly all of them
have: each waits for the whole batch's CPU instead of the part ahead of it. With twenty
chains against a server answering in 0.25 s this added 50-80 ms to every call, and runs
took about 1.3x their critical path; one call at a time on the CPU brings that to about
1.18x (``benchmarks/generation_throughput.py``).

A call takes the hold before it builds its request and gives it up once the request is
sent; it takes it again when the answer's headers arrive, and gives it up when the answer
is parsed. It does not keep the hold while it opens a connection (TCP, TLS, a proxy) or
waits for the server. Waiting calls take the hold first come, first served. What a call
still does on the network while it has the hold is writing its request and
reading the rest of its answer: both are small and go at once on a working link.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import trio

if TYPE_CHECKING:
    import httpx2 as httpx

_OPENING = (".connect_tcp.started", ".connect_unix_socket.started", ".start_tls.started")
"""httpcore ``trace`` events that start opening a connection: give the hold up."""
_RESUMING = (".send_request_headers.started", ".receive_response_headers.complete")
"""Events after which the call works on the CPU again: take the hold back."""
_SENT = ".send_request_body.complete"
"""The request is out; the call now waits for the server."""


class Slot(Protocol):
    """What :func:`take_at_once` takes: a ``trio.Lock`` or a ``trio.CapacityLimiter``."""

    def acquire_nowait(self) -> None: ...

    async def acquire(self) -> None: ...


async def take_at_once(slot: Slot) -> None:
    """Take ``slot``, yielding to other tasks only when it is not free.

    ``async with`` a lock or limiter yields even when it is free, which sends the task to
    the back of the queue of ready tasks: the interleaving this module is about. A
    cancelled caller still stops here, and a free slot is still not taken ahead of
    callers already waiting for it.
    """
    await trio.lowlevel.checkpoint_if_cancelled()
    try:
        slot.acquire_nowait()
    except trio.WouldBlock:
        await slot.acquire()


class CpuHold:
    """The CPU hold of one client's calls: one holder at a time, first come, first served.

    A call takes the hold (:meth:`take`) and gives it up when it ends (:meth:`give`).
    The HTTP client's request hook (:meth:`before_sending`) follows the request through
    httpcore's ``trace`` extension, giving the hold up while the call waits on the network
    and taking it back after. Taking the hold one has, or giving up one one does not have,
    does nothing, so a failed call never leaves the hold taken. Requests made without
    the hold (a batch API's uploads and downloads) are left alone.
    """

    def __init__(self) -> None:
        self._lock: trio.Lock | None = None
        self._run: trio.lowlevel.Task | None = None

    def _lock_of_this_run(self) -> trio.Lock:
        # A lock belongs to one trio run: a client kept across runs starts each one with
        # a free hold, even if a task of an earlier run died holding it.
        run = trio.lowlevel.current_root_task()
        if self._lock is None or self._run is not run:
            self._lock, self._run = trio.Lock(), run
        return self._lock

    def holding(self) -> bool:
        """True when the current task has the hold."""
        lock = self._lock
        owner = None if lock is None else lock.statistics().owner
        return owner is not None and owner is trio.lowlevel.current_task()

    async def take(self) -> None:
        """Wait for the hold, unless this task holds it; a free hold is taken at once,
        without letting other tasks run first."""
        lock = self._lock_of_this_run()
        if not self.holding():
            await take_at_once(lock)

    def give(self) -> None:
        """Give the hold up, if this task holds it."""
        if self.holding():
            assert self._lock is not None
            self._lock.release()

    async def before_sending(self, request: httpx.Request) -> None:
        """An httpx ``request`` event hook (called for every transport, proxies too):
        a call that has the hold has its request traced, to give the hold up while it waits."""
        if self.holding():
            request.extensions["trace"] = self._trace

    async def _trace(self, event: str, info: dict[str, Any]) -> None:
        if event.endswith(_OPENING) or event.endswith(_SENT):
            self.give()
        elif event.endswith(_RESUMING):
            await self.take()
