"""Leases of a study's server processes on a shared database: each process keeps a
heartbeat in the store, and a process whose heartbeat is older than the lease is taken
for dead, so a live process ends the rooms it was running (reason ``server_lost``).

Only stores shared by several processes (PostgreSQL) keep leases; with SQLite the one
process ends what a stop cut short when it starts again. The clock is given, so the
whole logic runs on trio's virtual clock in tests.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable
from typing import Protocol

import trio

LEASE = 15.0
"""Seconds a process may go without a heartbeat before the others end its rooms."""
BEATS_PER_LEASE = 3
"""Heartbeats per lease, so one late beat never costs a lease."""


class LeaseStore(Protocol):
    """What a store keeps for leases (see :class:`~sdtt.serve.pgstore.PostgresStore`)."""

    def beat(self, server: str, now: float) -> bool:
        """Renew ``server``'s lease; False if it had been taken for dead (and is renewed)."""
        ...

    def own_room(self, room: str, server: str) -> None:
        """Record that ``server`` runs ``room``."""
        ...

    def lost_rooms(self, before: float) -> contextlib.AbstractContextManager[list[str]]:
        """Live rooms of processes with no heartbeat since ``before``; those processes'
        leases are dropped when the block ends (so exactly one process ends each room)."""
        ...


def has_leases(store: object) -> bool:
    """Whether ``store`` is shared by processes that keep leases."""
    return all(hasattr(store, name) for name in ("beat", "own_room", "lost_rooms"))


class Lease:
    """This process's lease on a shared store."""

    def __init__(
        self,
        store: LeaseStore,
        now: Callable[[], float],
        *,
        seconds: float = LEASE,
        server: str | None = None,
    ) -> None:
        self.store = store
        self.now = now
        """Seconds since the epoch (the server's wall clock: virtual in tests)."""
        self.seconds = seconds
        self.server = server or f"server-{uuid.uuid4().hex[:12]}"
        self._renewed = False

    def check(self, end_rooms: Callable[[list[str]], None], lost: Callable[[], None]) -> None:
        """Renew this lease (calling ``lost`` if others had taken this process for dead),
        then end the rooms of every process whose lease expired."""
        now = self.now()
        if not self.store.beat(self.server, now) and self._renewed:
            lost()
        self._renewed = True
        with self.store.lost_rooms(now - self.seconds) as rooms:
            if rooms:
                end_rooms(rooms)

    async def keep(self, check: Callable[[], None]) -> None:
        """Call ``check`` (which calls :meth:`check`) now and then every fraction of the
        lease, until cancelled."""
        while True:
            check()
            await trio.sleep(self.seconds / BEATS_PER_LEASE)
