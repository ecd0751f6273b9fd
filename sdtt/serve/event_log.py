"""The study server's clock and its event log.

Times come from trio's clock, mapped onto the wall time the server started at, so under
``autojump_clock`` a whole study runs in milliseconds. Events go to the store as they
happen and are committed in batches by :meth:`Records.commit_events`; a SQLite store's
log is copied into the study file off the loop by :meth:`Records.checkpoint_wal`.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import trio

from sdtt.serve.store import StudyStore

LOG = logging.getLogger("sdtt.serve")
RETRY_AFTER = 1.0
"""Seconds before events the store failed to commit are tried again."""
CHECKPOINT_EVERY = 2.0
"""Seconds between copies of the SQLite log into the database file (in a worker thread)."""


class Records:
    """Wall time on trio's clock, and the events the server writes with it."""

    def __init__(self, store: StudyStore, started: datetime | None = None) -> None:
        self.store = store
        self.started = started or datetime.now(UTC)
        self._fixed_start = started is not None
        self._origin = 0.0
        self._recorded = trio.Event()

    def start(self) -> None:
        """Make trio's clock now the server's start (and, unless a start was given, the
        wall time now)."""
        self._origin = trio.current_time()
        if not self._fixed_start:
            self.started = datetime.now(UTC)  # clock 0 is now, not when it was built

    def wall(self) -> datetime:
        """Now, as wall time (trio's clock since the server started, on ``started``)."""
        return self.started + timedelta(seconds=trio.current_time() - self._origin)

    def wall_iso(self) -> str:
        """:meth:`wall` as ISO 8601 text, to the millisecond."""
        return self.wall().isoformat(timespec="milliseconds")

    def record(
        self,
        kind: str,
        data: dict[str, Any],
        *,
        room: str | None = None,
        participant: str | None = None,
    ) -> None:
        """Write an event to the store (committed before the next frame leaves, and at
        the latest once the loop has run what else was ready)."""
        self.store.add_event(kind, data, self.wall_iso(), room=room, participant=participant)
        self._recorded.set()

    async def commit_events(self) -> None:
        """Commit queued events in batches: after the tasks that were ready have run,
        so one commit takes all the events they recorded. A commit that fails (a full
        disk, say) ends no room: it goes to the ``sdtt.serve`` log (the study's errors
        log) and the events, still queued, are tried again."""
        while True:
            await self._recorded.wait()
            self._recorded = trio.Event()
            await trio.lowlevel.cancel_shielded_checkpoint()
            try:
                await self.store.flushed()
            except Exception:
                LOG.exception("saving the study's events failed; they are kept and tried again")
                await trio.sleep(RETRY_AFTER)
                self._recorded.set()

    async def checkpoint_wal(self, checkpoint: Callable[[], None]) -> None:
        """Copy the SQLite log into the database file every few seconds, off the loop.

        A failed copy loses nothing (the log keeps every commit) and must not end the
        live rooms: it is recorded as a ``store_checkpoint_failed`` event and tried again."""
        while True:
            await trio.sleep(CHECKPOINT_EVERY)
            try:
                await trio.to_thread.run_sync(checkpoint)
            except sqlite3.Error as error:
                self.record("store_checkpoint_failed", {"error": str(error)})
