"""Commits a PostgreSQL study's messages, events and notices from the event loop,
without blocking it.

A server stores every chat message, records events all the time (a bot's keystrokes,
typing indicators, joins) and tells the study's other processes things
(LISTEN/NOTIFY). Committed by a blocking call on the loop, each batch held up every
room of the process while PostgreSQL answered; committed by a thread, each frame waited
for that thread to win the interpreter lock back from the busy loop. Here a task of the
loop sends a batch on a connection of its own and waits for the answer as it waits for
a browser (the socket becoming readable), so the loop runs the other rooms meanwhile.
One batch is one statement: one round trip, one commit.

Events are inserted in the order queued (ids grow with it), and a notice goes out only
once every message and event queued before it is committed (same transaction, after
them).
"""

from __future__ import annotations

import itertools
import json
import select
from collections.abc import Generator
from typing import Any

import psycopg
import trio
from psycopg import pq

STATEMENT_NAME = b"sdtt_commit"
STATEMENT = (
    b"PREPARE sdtt_commit (json, text, json, json) AS "
    b"WITH said AS (INSERT INTO messages (room, seq, sender, text, time, chat) "
    b"SELECT m->>0, (m->>1)::integer, m->>2, m->>3, m->>4, (m->>5)::integer "
    b"FROM json_array_elements($4::json) AS m), "
    b"queued AS (INSERT INTO events (room, participant, kind, data, time) "
    b"SELECT e->>0, e->>1, e->>2, e->>3, e->>4 "
    b"FROM json_array_elements($1::json) WITH ORDINALITY AS q(e, i) ORDER BY i) "
    b"SELECT pg_notify($2, note) "
    b"FROM json_array_elements_text($3::json) WITH ORDINALITY AS n(note, i) ORDER BY i"
)
"""A batch: its messages and events (JSON arrays of rows), then its notices in order (a
JSON array of texts). Texts as parameters, so converting them costs one ``json.dumps``
each."""

READ, WRITE = "read", "write"
_Batch = tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], list[str]]
"""Messages, events and notices."""
_Steps = Generator[str, None, None]
"""A batch being committed: yields what it waits for on the socket (:data:`READ` or
:data:`WRITE`), returns once PostgreSQL has answered."""


class BatchCommitter:
    """Queues messages, events and notices, and commits them in batches (see the module).

    ``db`` is a connection of the committer's alone; :meth:`run` commits from a task of
    the loop, :meth:`commit_now` at once, blocking (for the few calls that must see
    everything committed before they go on, and at the end)."""

    def __init__(self, db: psycopg.Connection[Any], channel: str) -> None:
        self._db = db
        self._pg = db.pgconn
        self._channel = channel.encode()
        db.execute(STATEMENT)
        self._messages: list[tuple[Any, ...]] = []
        self._events: list[tuple[Any, ...]] = []
        self._notes: list[str] = []
        self._numbers = itertools.count()
        self._queued = 0
        """Items ever queued; an item's ticket is this count once it is in."""
        self._committed = 0
        """Items ever committed: every ticket up to this one."""
        self._steps: _Steps | None = None
        self._wait = READ
        self._in_flight: _Batch = ([], [], [])
        self._wanted = trio.Event()
        self._progress = trio.Event()
        self._waiting: trio.CancelScope | None = None

    def add_message(self, row: tuple[Any, ...]) -> None:
        """Queue a message row (room, seq, sender, text, time, chat)."""
        self._messages.append(row)
        self._queue_one()

    def add_event(self, row: tuple[Any, ...]) -> None:
        """Queue an event row (room, participant, kind, data as JSON, time)."""
        self._events.append(row)
        self._queue_one()

    def notify(self, message: dict[str, Any]) -> None:
        """Queue a notice to every process of the study."""
        # Made unique: PostgreSQL sends one notice of a given text per transaction, and
        # a batch is one (a participant may well type "ok" twice).
        self._notes.append(json.dumps({**message, "n": next(self._numbers)}))
        self._queue_one()

    def _queue_one(self) -> None:
        self._queued += 1
        self._wanted.set()

    @property
    def idle(self) -> bool:
        """Whether everything queued is committed."""
        return self._committed == self._queued

    async def committed(self) -> None:
        """Wait, without holding up the loop, until everything queued so far is
        committed."""
        target = self._queued
        while self._committed < target:
            await self._progress.wait()

    async def run(self) -> None:
        """Commit what is queued, batch after batch, until cancelled."""
        while True:
            await self._wanted.wait()
            self._wanted = trio.Event()
            # The tasks that are ready run first: one batch takes what they all queue.
            await trio.lowlevel.cancel_shielded_checkpoint()
            while self._has_queued():
                self._start()
                while self._steps is not None:
                    with trio.CancelScope() as self._waiting:
                        if self._wait == READ:
                            await trio.lowlevel.wait_readable(self._pg.socket)
                        else:
                            await trio.lowlevel.wait_writable(self._pg.socket)
                    self._waiting = None
                    if self._steps is not None:  # (else commit_now finished it)
                        self._step()

    def commit_now(self) -> None:
        """Commit everything queued before returning (the batch under way first)."""
        while self._steps is not None or self._has_queued():
            if self._steps is None:
                self._start()
                continue
            socket = [self._pg.socket]
            select.select(
                socket if self._wait == READ else [], socket if self._wait == WRITE else [], []
            )
            self._step()
        if self._waiting is not None:
            self._waiting.cancel()  # the task waits on a socket nothing will come on now

    def _has_queued(self) -> bool:
        return bool(self._messages or self._events or self._notes)

    def _start(self) -> None:
        messages, events, notes = self._messages, self._events, self._notes
        self._messages, self._events, self._notes = [], [], []
        self._in_flight = (messages, events, notes)
        self._steps = self._send(
            [
                json.dumps(events).encode(),
                self._channel,
                json.dumps(notes).encode(),
                json.dumps(messages).encode(),
            ]
        )
        self._step()

    def _step(self) -> None:
        assert self._steps is not None
        try:
            self._wait = next(self._steps)
        except StopIteration:
            self._steps = None
            self._committed += sum(len(items) for items in self._in_flight)
            self._in_flight = ([], [], [])
            self._progress.set()
            self._progress = trio.Event()
        except BaseException:
            # Nothing is lost: the batch goes back ahead of what came since.
            self._steps = None
            messages, events, notes = self._in_flight
            self._messages[:0], self._events[:0], self._notes[:0] = messages, events, notes
            raise

    def _send(self, params: list[bytes]) -> _Steps:
        pg = self._pg
        pg.send_query_prepared(STATEMENT_NAME, params)
        while pg.flush():
            yield WRITE
        pg.consume_input()
        while pg.is_busy():
            yield READ
            pg.consume_input()
        error = None
        while (result := pg.get_result()) is not None:
            if result.status not in (pq.ExecStatus.COMMAND_OK, pq.ExecStatus.TUPLES_OK):
                error = result.error_message.decode(errors="replace").strip()
        if error:
            raise psycopg.DatabaseError(f"saving the study's messages and events failed: {error}")

    def close(self) -> None:
        """Commit what is queued and close the connection (closed even if that fails)."""
        try:
            self.commit_now()
        finally:
            self._db.close()
