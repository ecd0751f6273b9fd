"""Run a trio function inside the running asyncio loop (trio guest mode).

Textual runs on asyncio and the burst engine on trio. :class:`TrioGuest` starts a trio
"guest run" on the host loop: trio schedules its work with the loop's
``call_soon_threadsafe``, so trio tasks run on the same thread as the widgets and may
update them directly. :meth:`TrioGuest.stop` cancels the run and waits until trio has
finished cleaning up, so files are closed before the app exits.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import trio
import trio.lowlevel
from outcome import Outcome


class TrioGuest:
    """One trio guest run hosted by the current asyncio loop."""

    def __init__(self) -> None:
        self._scope: trio.CancelScope | None = None
        self._cancelled = False
        self._done: asyncio.Future[Outcome[Any]] | None = None
        self.error: BaseException | None = None
        """What the trio function raised, once it is done (``None`` when it returned)."""
        self.token: trio.lowlevel.TrioToken | None = None
        """The run's token once it started: ``token.run_sync_soon`` calls into trio."""

    @property
    def running(self) -> bool:
        """Whether the guest run has started and not yet finished."""
        return self._done is not None and not self._done.done()

    def start(
        self,
        async_fn: Callable[[], Awaitable[object]],
        *,
        on_done: Callable[[BaseException | None], None] | None = None,
        clock: trio.abc.Clock | None = None,
    ) -> None:
        """Start ``async_fn`` as a trio run; ``on_done`` gets its error (or ``None``)."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[Outcome[Any]] = loop.create_future()
        self._done = done

        async def main() -> None:
            self.token = trio.lowlevel.current_trio_token()
            with trio.CancelScope() as scope:
                self._scope = scope
                if self._cancelled:
                    scope.cancel()
                await async_fn()

        def finished(result: Outcome[Any]) -> None:
            try:
                result.unwrap()
            except BaseException as error:
                self.error = error
            if not done.done():
                done.set_result(result)
            if on_done is not None:
                on_done(self.error)

        trio.lowlevel.start_guest_run(
            main,
            run_sync_soon_threadsafe=loop.call_soon_threadsafe,
            done_callback=finished,
            host_uses_signal_set_wakeup_fd=True,
            clock=clock,
        )

    def cancel(self) -> None:
        """Ask the trio run to stop (it finishes cleaning up on its own)."""
        self._cancelled = True
        if self._scope is not None:
            self._scope.cancel()

    async def stop(self) -> None:
        """Cancel the trio run and wait until it has finished."""
        self.cancel()
        if self._done is not None:
            await asyncio.shield(self._done)
