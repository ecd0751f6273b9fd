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

A batch the database refuses never ends the server. Refused for what it holds (a text
PostgreSQL cannot take), the batch is committed again room by room, so one room's rows
cannot keep the others' out; a room whose rows are refused alone has them stored with
the offending characters replaced (or, refused still, dropped) and is handed to
``on_room_failed``, which ends it for its people. Refused for any other reason (the
database restarting, a lost connection), the batch waits and is tried again, whole, on
a new connection if need be. Each failure goes to the ``sdtt.serve`` log with its
traceback (``sdtt serve`` writes it to the study's errors log).
"""

from __future__ import annotations

import itertools
import json
import logging
import select
from collections.abc import Callable, Generator
from typing import Any

import psycopg
import trio
from psycopg import pq

from sdtt.serve.store import UNSTORABLE

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

LOG = logging.getLogger("sdtt.serve")
RETRY_AFTER = (0.1, 0.5, 2.0, 5.0)
"""Seconds before a batch refused as a whole is tried again (the last one repeats)."""
DATA_ERRORS = ("22", "23")
"""SQLSTATE classes of a statement refused for the rows it holds (data exceptions,
integrity violations): sending it again cannot help."""

READ, WRITE = "read", "write"
_Batch = tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], list[str]]
"""Messages, events and notices."""
_Steps = Generator[str, None, None]
"""A batch being committed: yields what it waits for on the socket (:data:`READ` or
:data:`WRITE`), returns once PostgreSQL has answered."""


class BatchCommitter:
    """Queues messages, events and notices, and commits them in batches (see the module).

    ``connect`` opens a connection of the committer's alone (again, if one is lost);
    :meth:`run` commits from a task of the loop, :meth:`commit_now` at once, blocking
    (for the few calls that must see everything committed before they go on, and at the
    end). ``on_room_failed`` is called with the id of a room whose rows the database
    refused (it must not block: the server ends that room from a task of its own)."""

    def __init__(
        self,
        connect: Callable[[], psycopg.Connection[Any]],
        channel: str,
        on_room_failed: Callable[[str], None] | None = None,
    ) -> None:
        self._connect = connect
        self._channel = channel.encode()
        self._on_room_failed = on_room_failed or (lambda room: None)
        self._db = connect()
        self._pg = self._db.pgconn
        self._db.execute(STATEMENT)
        self._failures = 0
        """Batches refused as a whole in a row (for another reason than their rows)."""
        self._error: Exception | None = None
        """Why the last batch was refused as a whole (while :attr:`_failures`)."""
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
            if not self._has_queued():
                await self._wanted.wait()
                self._wanted = trio.Event()
                # The tasks that are ready run first: one batch takes what they all queue.
                await trio.lowlevel.cancel_shielded_checkpoint()
                continue
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
            if self._failures:
                await trio.sleep(RETRY_AFTER[min(self._failures, len(RETRY_AFTER)) - 1])

    def commit_now(self) -> None:
        """Commit everything queued before returning (the batch under way first); raises
        if the database refuses it as a whole (it stays queued)."""
        while self._steps is not None or self._has_queued():
            if self._steps is None:
                self._start()
            else:
                self._wait_blocking()
                self._step()
            if self._failures and self._steps is None:
                assert self._error is not None
                raise self._error
        if self._waiting is not None:
            self._waiting.cancel()  # the task waits on a socket nothing will come on now

    def _wait_blocking(self) -> None:
        socket = [self._pg.socket]
        select.select(
            socket if self._wait == READ else [], socket if self._wait == WRITE else [], []
        )

    def _has_queued(self) -> bool:
        return bool(self._messages or self._events or self._notes)

    def _start(self) -> None:
        batch = self._messages, self._events, self._notes
        self._messages, self._events, self._notes = [], [], []
        self._in_flight = batch
        self._steps = self._send(batch)
        self._step()

    def _step(self) -> None:
        assert self._steps is not None
        try:
            self._wait = next(self._steps)
        except StopIteration:
            self._steps = None
            if self._failures:
                LOG.warning("saving works again: the batches kept meanwhile are saved")
            self._failures, self._error = 0, None
            self._done(self._in_flight)
            self._in_flight = ([], [], [])
        except Exception as error:
            self._steps = None
            batch, self._in_flight = self._in_flight, ([], [], [])
            self._recover(batch, error)
        except BaseException:
            # Nothing is lost: the batch goes back ahead of what came since.
            self._steps = None
            self._put_back(self._in_flight)
            raise

    def _done(self, batch: _Batch) -> None:
        self._committed += sum(len(items) for items in batch)
        self._progress.set()
        self._progress = trio.Event()

    def _put_back(self, batch: _Batch) -> None:
        """Queue ``batch`` again, ahead of what came since."""
        messages, events, notes = batch
        self._messages[:0], self._events[:0], self._notes[:0] = messages, events, notes

    def _recover(self, batch: _Batch, error: Exception) -> None:
        """The database refused ``batch``: commit it room by room if its rows were the
        cause, else queue it again for :meth:`run` to retry (see the module)."""
        if not _refused_rows(error):
            if not self._failures:  # (once per outage, not once per retry)
                LOG.error(
                    "saving a batch of %s failed; it is kept and tried again",
                    _described(batch),
                    exc_info=error,
                )
            self._failures, self._error = self._failures + 1, error
            self._reconnect_if_lost()
            self._put_back(batch)
            return
        LOG.error(
            "the database refused a batch of %s for what it holds; committing it room by room",
            _described(batch),
            exc_info=error,
        )
        groups = _by_room(batch)
        for index, (room, group) in enumerate(groups):
            try:
                self._commit_blocking(group)
            except Exception as again:
                if not _refused_rows(again):  # the database went away meanwhile
                    self._failures, self._error = 1, again
                    self._reconnect_if_lost()
                    for _, rest in reversed(groups[index:]):
                        self._put_back(rest)
                    return
                self._store_repaired(room, group, again)
            self._done(group)
        self._failures, self._error = 0, None  # (the database answers again)

    def _store_repaired(self, room: str | None, group: _Batch, error: Exception) -> None:
        """Store a room's refused rows with the characters no database keeps replaced
        (else drop them), and hand the room over to be ended."""
        try:
            self._commit_blocking(_repaired(group))
            outcome = "stored with unstorable characters replaced by U+FFFD"
        except Exception:
            outcome = "dropped"
        LOG.error(
            "room %s: the database refused its %s (%s); %s, and the room is ended",
            room or "(none)",
            _described(group),
            _first_line(error),
            outcome,
        )
        if room is not None:
            self._on_room_failed(room)

    def _commit_blocking(self, batch: _Batch) -> None:
        steps = self._send(batch)
        try:
            while True:
                self._wait = next(steps)
                self._wait_blocking()
        except StopIteration:
            return

    def _reconnect_if_lost(self) -> None:
        """A new connection if the committer's is lost (else the retries fail alike)."""
        if self._pg.status == pq.ConnStatus.OK and not self._db.closed:
            return
        try:
            db = self._connect()
            db.execute(STATEMENT)
        except psycopg.Error:
            return  # tried again at the next retry
        self._db.close()
        self._db, self._pg = db, db.pgconn

    def _send(self, batch: _Batch) -> _Steps:
        messages, events, notes = batch
        params = [
            json.dumps(events).encode(),
            self._channel,
            json.dumps(notes).encode(),
            json.dumps(messages).encode(),
        ]
        pg = self._pg
        pg.send_query_prepared(STATEMENT_NAME, params)
        while pg.flush():
            yield WRITE
        pg.consume_input()
        while pg.is_busy():
            yield READ
            pg.consume_input()
        error: CommitRefused | None = None
        while (result := pg.get_result()) is not None:
            if result.status not in (pq.ExecStatus.COMMAND_OK, pq.ExecStatus.TUPLES_OK):
                text = result.error_message.decode(errors="replace").strip()
                state = result.error_field(pq.DiagnosticField.SQLSTATE)
                error = CommitRefused(
                    f"saving the study's messages and events failed: {text}",
                    (state or b"").decode(),
                )
        if error is not None:
            raise error

    def close(self) -> None:
        """Commit what is queued and close the connection (closed even if that fails)."""
        try:
            self.commit_now()
        finally:
            self._db.close()


class CommitRefused(psycopg.DatabaseError):
    """PostgreSQL refused a batch; ``code`` (its SQLSTATE) says why, its first two
    characters what kind of error."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


def _refused_rows(error: Exception) -> bool:
    """Whether the database refused a batch for the rows it holds."""
    return isinstance(error, CommitRefused) and error.code[:2] in DATA_ERRORS


def _by_room(batch: _Batch) -> list[tuple[str | None, _Batch]]:
    """A batch's rows by room, in the order each room first comes; rows of no room, then
    the notices, last (a notice still goes out after what was queued before it)."""
    messages, events, notes = batch
    groups: dict[str | None, _Batch] = {}
    for row in messages:
        groups.setdefault(row[0], ([], [], []))[0].append(row)
    for row in events:
        groups.setdefault(row[0], ([], [], []))[1].append(row)
    ordered: list[tuple[str | None, _Batch]] = [
        (room, group) for room, group in groups.items() if room is not None
    ]
    if None in groups:
        ordered.append((None, groups[None]))
    if notes:
        ordered.append((None, ([], [], notes)))
    return ordered


def _repaired(batch: _Batch) -> _Batch:
    """``batch`` with every lone surrogate and U+0000 in its texts replaced by U+FFFD."""
    messages, events, notes = batch
    return (
        [tuple(_storable(v) for v in row) for row in messages],
        [tuple(_storable(v) for v in row) for row in events],
        [_storable(note) for note in notes],
    )


def _storable(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    return UNSTORABLE.sub("\ufffd", value)


def _described(batch: _Batch) -> str:
    messages, events, notes = batch
    return f"{len(messages)} message(s), {len(events)} event(s) and {len(notes)} notice(s)"


def _first_line(error: Exception) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]
