"""A :class:`~sdtt.serve.store.StudyStore` in PostgreSQL, for studies served by several
processes at once (give ``[storage] url = "postgresql://..."`` in the study spec).

Same tables and queries as the SQLite store; each call commits before it returns. Calls
are synchronous (psycopg 3), so each wait for the database on the server's loop holds up
every room of the process: every call is one statement, one round trip; the reads made
on every frame go to worker threads (:meth:`PostgresStore.read_off_loop`), each with a
connection of its own; and while the server runs :meth:`PostgresStore.keep_committing`,
the events and notices, most of the writes, are committed in batches by a task of the
loop that does not block it (:mod:`sdtt.serve.pgcommit`), and so are the chat messages.
Otherwise queued events go in with the next write (a common table expression inserts
them). Only the process running a room stores its messages, so it numbers them itself
(counting from the room's last stored message the first time it stores one there); were
another process to have taken a number meanwhile, a message stored at once counts again.
"""

from __future__ import annotations

import contextlib
import json
import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import psycopg
import trio
from psycopg.rows import dict_row

from sdtt.errors import ConfigError
from sdtt.serve.pgcommit import BatchCommitter
from sdtt.serve.store import Room, Sender, StoredMessage, StudyStore, _SqlStore

CHANNEL = "sdtt_serve"
"""The LISTEN/NOTIFY channel the study's server processes talk on."""
SCHEMA = """
CREATE TABLE IF NOT EXISTS participants (
    ord BIGSERIAL, pid TEXT PRIMARY KEY, token TEXT NOT NULL, platform_study TEXT,
    platform_session TEXT, state TEXT NOT NULL, role TEXT, room TEXT, outcome TEXT,
    joined TEXT NOT NULL, waiting_since DOUBLE PRECISION
);
CREATE TABLE IF NOT EXISTS rooms (
    ord BIGSERIAL, id TEXT PRIMARY KEY, mode TEXT NOT NULL, witness TEXT NOT NULL,
    condition INTEGER, interrogator TEXT NOT NULL, witness_pid TEXT, state TEXT NOT NULL,
    end_reason TEXT, created TEXT NOT NULL, ended TEXT, bot_position INTEGER
);
CREATE TABLE IF NOT EXISTS messages (
    room TEXT NOT NULL, seq INTEGER NOT NULL, sender TEXT NOT NULL, text TEXT NOT NULL,
    time TEXT NOT NULL, chat INTEGER NOT NULL, PRIMARY KEY (room, seq)
);
CREATE TABLE IF NOT EXISTS events (
    id BIGSERIAL PRIMARY KEY, room TEXT, participant TEXT, kind TEXT NOT NULL,
    data TEXT NOT NULL, time TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_participant ON events (participant);
CREATE TABLE IF NOT EXISTS verdicts (
    ord BIGSERIAL, room TEXT NOT NULL, participant TEXT NOT NULL, human TEXT NOT NULL,
    confidence INTEGER, reason TEXT NOT NULL, time TEXT NOT NULL,
    PRIMARY KEY (room, participant)
);
-- (Studies begun before an untouched confidence slider was stored as not moved.)
ALTER TABLE verdicts ALTER COLUMN confidence DROP NOT NULL;
CREATE TABLE IF NOT EXISTS servers (
    id TEXT PRIMARY KEY, heartbeat DOUBLE PRECISION NOT NULL
);
CREATE TABLE IF NOT EXISTS room_servers (
    room TEXT PRIMARY KEY, server TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS beliefs (
    ord BIGSERIAL, participant TEXT NOT NULL, room TEXT NOT NULL, seq INTEGER NOT NULL,
    time TEXT NOT NULL, value INTEGER NOT NULL
);
"""
QUEUED = (
    "queued AS (INSERT INTO events (room, participant, kind, data, time) "
    "SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[]))"
)
"""The queued events, inserted by a common table expression ahead of a statement (one
array per column: the statement's text stays the same, so it is prepared once)."""
SEQ_ATTEMPTS = 3
READERS = 4
"""Worker threads (each with a connection) reading for the loop at once."""
T = TypeVar("T")


def _columns(events: list[tuple[Any, ...]]) -> list[list[Any]]:
    """The queued events' columns, for :data:`QUEUED`."""
    return [list(column) for column in zip(*events, strict=True)]


class PostgresStore(_SqlStore):
    """A study store in a PostgreSQL database (tables are created if missing)."""

    ORDER = "ord"

    def __init__(self, url: str) -> None:
        self._url = url
        try:
            self._db = psycopg.connect(url, autocommit=True, row_factory=dict_row)
        except psycopg.Error as error:
            raise ConfigError(
                f"cannot connect to the study database ({_first_line(error)}); check "
                "[storage] url and that the server is running."
            ) from None
        with self._db.transaction():
            # One process creates the tables; the others wait for it.
            self._db.execute("SELECT pg_advisory_xact_lock(hashtext('sdtt-serve-schema'))")
            self._db.execute(SCHEMA)
        self._pending = []
        self._owner = threading.get_ident()
        self._readers: queue.SimpleQueue[psycopg.Connection[dict[str, Any]]] = queue.SimpleQueue()
        self._reading = trio.CapacityLimiter(READERS)
        self._committer: BatchCommitter | None = None
        self._held: list[dict[str, Any]] | None = None
        """Notices published in a transaction, sent once it commits."""
        self._last_seq: dict[str, int] = {}
        """The number of the last message this process stored in each room it runs."""
        self._lobby: PostgresStore | None = None
        """The lobby's own store, on a connection of its own (see :meth:`hold_lobby`)."""
        self.waits_off_loop = True
        """Whether the store waits for the database off the loop (reads in worker
        threads, commits in a task): not on a virtual clock, which would jump ahead
        meanwhile."""

    async def keep_committing(self, on_room_failed: Callable[[str], None] | None = None) -> None:
        """Commit events and notices in batches, from a task of the loop that does not
        block it, until cancelled (see :mod:`sdtt.serve.pgcommit`); the store commits
        them itself again afterwards. Only on a real clock (see :attr:`waits_off_loop`).
        ``on_room_failed`` is told of a room whose rows the database refused."""
        committer = BatchCommitter(self._connect, CHANNEL, on_room_failed)
        self.flush()  # (what was queued before goes first)
        self._committer = committer
        try:
            await committer.run()
        finally:
            self._committer = None
            committer.close()

    async def flushed(self) -> None:
        """Wait until the queued events and notices are committed (without holding up
        the loop while :meth:`keep_committing` runs)."""
        if self._committer is None:
            self.flush()
        else:
            await self._committer.committed()

    def flush(self) -> None:
        """Commit the queued events and notices now."""
        if self._committer is None:
            super().flush()
        else:
            self._committer.commit_now()

    def _queued(self) -> bool:
        return bool(self._pending) or not (self._committer is None or self._committer.idle)

    def _queue_event(self, row: tuple[Any, ...]) -> None:
        if self._committer is None:
            self._pending.append(row)
        else:
            self._committer.add_event(row)

    def _connect(self) -> psycopg.Connection[dict[str, Any]]:
        return psycopg.connect(self._url, autocommit=True, row_factory=dict_row)

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        """A transaction: notices published in it are sent once it commits (none if it
        fails), as PostgreSQL does with its own."""
        self._held = []
        try:
            with self._db.transaction():
                yield
        finally:
            held, self._held = self._held, None
        for message in held:
            self.publish(message)

    async def read_off_loop(self, read: Callable[[], T]) -> T:
        """Run ``read`` (a call of this store's that reads only what is committed: not
        what was queued since :meth:`flushed` last returned) in a worker thread, on a
        connection of that thread's: the loop runs other rooms meanwhile instead of
        waiting for the database."""
        if not self.waits_off_loop:
            return read()
        return await trio.to_thread.run_sync(read, limiter=self._reading)

    def _read(self, sql: str, args: Sequence[Any] = ()) -> list[dict[str, Any]]:
        if threading.get_ident() == self._owner:
            return self._execute(sql, args)
        try:  # a worker thread: a connection no other thread uses meanwhile
            db = self._readers.get_nowait()
        except queue.Empty:
            db = self._connect()
        try:
            rows = list(db.execute(sql.replace("?", "%s"), tuple(args)).fetchall())
        except BaseException:
            db.close()  # (in whatever state the failure left it: the next read opens one)
            raise
        self._readers.put(db)
        return rows

    def _execute(self, sql: str, args: Sequence[Any]) -> list[dict[str, Any]]:
        cursor = self._db.execute(sql.replace("?", "%s"), tuple(args))
        return list(cursor.fetchall()) if cursor.description else []

    def _insert_events(self, events: list[tuple[Any, ...]]) -> None:
        self._db.execute(f"WITH {QUEUED} SELECT 1", _columns(events))

    def _write(self, sql: str, args: Sequence[Any] = ()) -> list[dict[str, Any]]:
        cursor = self._write_cursor(sql, args)
        return list(cursor.fetchall()) if cursor.description else []

    def _write_count(self, sql: str, args: Sequence[Any]) -> int:
        return self._write_cursor(sql, args).rowcount

    def _write_cursor(self, sql: str, args: Sequence[Any]) -> psycopg.Cursor[dict[str, Any]]:
        """Run a statement that changes the study together with the queued events: one
        statement, so one round trip and one commit (each wait for the database holds up
        every room this process runs). The events go back in the queue if it fails."""
        events, self._pending = self._pending, []
        if events:
            sql, args = f"WITH {QUEUED} {sql}", (*_columns(events), *args)
        try:
            return self._db.execute(sql.replace("?", "%s"), tuple(args))
        except BaseException:
            self._pending[:0] = events
            raise

    def add_room(self, room: Room) -> None:
        """Add a new room (its messages are numbered from 1)."""
        super().add_room(room)
        self._last_seq[room.id] = 0

    def add_message(
        self, room: str, sender: Sender, text: str, time: str, chat: int = 1
    ) -> StoredMessage:
        """Append a message to ``room``'s chat ``chat`` (a room this process runs);
        returns it with its sequence number (counted over the room). While
        :meth:`keep_committing` runs, it is committed with the next batch."""
        if "\x00" in text:  # (refused here: in a batch it would fail everything with it)
            raise ValueError("PostgreSQL cannot store a message holding U+0000")
        last = self._last_seq.get(room)
        seq = (self._stored_last_seq(room) if last is None else last) + 1
        if self._committer is not None:
            self._committer.add_message((room, seq, sender, text, time, chat))
        else:
            for attempt in range(SEQ_ATTEMPTS):
                try:
                    self._write(
                        "INSERT INTO messages (room, seq, sender, text, time, chat) "
                        "VALUES (?, ?, ?, ?, ?, ?)",
                        (room, seq, sender, text, time, chat),
                    )
                    break
                except psycopg.errors.UniqueViolation:
                    # Another process stored a message in this room meanwhile (not
                    # while rooms are run as they should be): count again.
                    if attempt + 1 == SEQ_ATTEMPTS or self._db.info.transaction_status:
                        raise
                    seq = self._stored_last_seq(room) + 1
        self._last_seq[room] = seq
        return StoredMessage(room=room, seq=seq, sender=sender, text=text, time=time, chat=chat)

    def _stored_last_seq(self, room: str) -> int:
        """The number of ``room``'s last stored message (0: none)."""
        rows = self._read("SELECT MAX(seq) AS seq FROM messages WHERE room = ?", (room,))
        return int(rows[0]["seq"] or 0)

    def messages(self, room: str) -> list[StoredMessage]:
        """The messages of ``room`` in order (those queued committed first; in a worker
        thread, see :meth:`read_off_loop`, those committed: wait for :meth:`flushed`
        before)."""
        if self._queued() and threading.get_ident() == self._owner:
            self.flush()
        return super().messages(room)

    def add_event_if_live(
        self,
        kind: str,
        data: dict[str, Any],
        time: str,
        *,
        room: str,
        participant: str | None = None,
    ) -> bool:
        """Record an event of ``room`` now, only while the room is live; whether it was.

        The room's row is locked for share meanwhile: a process ending the room (and
        refunding its trades) waits for this insert, or this one for its end, so a
        market's trade is either refunded with the rest or not stored at all."""
        self.flush()  # (the queued events first, in order)
        rows = self._write(
            "INSERT INTO events (room, participant, kind, data, time) "
            "SELECT ?, ?, ?, ?, ? WHERE EXISTS "
            "(SELECT 1 FROM rooms WHERE id = ? AND state = 'live' FOR SHARE) RETURNING id",
            (room, participant, kind, json.dumps(data, default=str), time, room),
        )
        return bool(rows)

    def still_waiting(self, pids: Sequence[str]) -> set[str]:
        """Those of ``pids`` still in the lobby. Asked in the lobby's transaction, it
        locks their rows until that ends: one who leaves in another process meanwhile
        waits for this look, instead of leaving between the look's read and its taking
        them out of the lobby (which failed the whole look)."""
        rows = self._execute(
            "SELECT pid FROM participants WHERE pid = ANY(?) AND state = 'lobby' FOR UPDATE",
            (list(pids),),
        )
        return {row["pid"] for row in rows}

    @contextlib.contextmanager
    def lobby_lock(self) -> Iterator[bool]:
        """One transaction holding the study's lobby, so two processes never put one
        participant in two rooms. Yields False at once when another process holds it:
        waiting for it here would freeze this process's every room meanwhile."""
        with self._transaction():
            row = self._db.execute(
                "SELECT pg_try_advisory_xact_lock(hashtext('sdtt-serve-lobby')) AS held"
            ).fetchone()
            yield bool(row and row["held"])

    async def hold_lobby(self, look: Callable[[StudyStore], T]) -> T | None:
        """``look(store)`` in one transaction holding the study's lobby (see
        :meth:`lobby_lock`), and what it returned; None when another process holds it.

        On a real clock (see :attr:`waits_off_loop`) the look runs in a worker thread, on
        a store with a connection of the lobby's own: its dozen round trips no longer
        hold up every room of the process. ``look`` may only read and write the study
        through the store it is given (no events, no notices, nothing of the loop's);
        what it wrote is committed when this returns. A participant it locked (see
        :meth:`still_waiting`) whom the loop moves meanwhile waits for the look."""
        if not self.waits_off_loop:
            return await super().hold_lobby(look)
        return await trio.to_thread.run_sync(self._look_here, look)

    def _look_here(self, look: Callable[[StudyStore], T]) -> T | None:
        if self._lobby is None:
            self._lobby = PostgresStore(self._url)
            self._lobby._last_seq = self._last_seq  # (the rooms it adds number from 1 here)
        lobby = self._lobby
        lobby._owner = threading.get_ident()  # its reads use its connection, in the transaction
        with lobby.lobby_lock() as held:
            return look(lobby) if held else None

    def publish(self, message: dict[str, Any]) -> None:
        """Send ``message`` to every process of the study (LISTEN/NOTIFY), after the
        events queued before it are committed."""
        if self._committer is None:
            self._write("SELECT pg_notify(?, ?)", (CHANNEL, json.dumps(message)))
        elif self._held is not None:
            self._held.append(message)
        else:
            self._committer.notify(message)

    def listen(
        self,
        deliver: Callable[[dict[str, Any]], None],
        stop: threading.Event,
        listening: Callable[[], None],
    ) -> None:
        """Call ``deliver`` with each message published (in this thread) until ``stop``;
        ``listening`` is called once no message published from then on can be missed."""
        with psycopg.connect(self._url, autocommit=True) as listener:
            listener.execute(f"LISTEN {CHANNEL}")
            listening()
            while not stop.is_set():
                for note in listener.notifies(timeout=0.2):
                    deliver(json.loads(note.payload))

    def beat(self, server: str, now: float) -> bool:
        """Renew ``server``'s lease (see :mod:`sdtt.serve.lease`); False if it had none
        (new, or taken for dead by another process), and it has one now."""
        renewed = self._write(
            "UPDATE servers SET heartbeat = ? WHERE id = ? RETURNING id", (now, server)
        )
        if not renewed:
            self._write("INSERT INTO servers (id, heartbeat) VALUES (?, ?)", (server, now))
        return bool(renewed)

    def own_room(self, room: str, server: str) -> None:
        """Record that ``server`` runs ``room`` (call it in the transaction that adds it)."""
        self._write("INSERT INTO room_servers (room, server) VALUES (?, ?)", (room, server))

    @contextlib.contextmanager
    def lost_rooms(self, before: float) -> Iterator[list[str]]:
        """Live rooms of the processes whose last heartbeat is older than ``before``.

        One transaction: the dead processes' lease rows are locked (another process
        checking at once skips them) and deleted at the end, together with whatever the
        block wrote, so a crash half-way leaves the rooms for the next check."""
        with self._transaction():
            dead = [
                row["id"]
                for row in self._run(
                    "SELECT id FROM servers WHERE heartbeat < ? FOR UPDATE SKIP LOCKED",
                    (before,),
                )
            ]
            if not dead:
                yield []
                return
            rows = self._run(
                "SELECT rooms.id FROM rooms JOIN room_servers ON room_servers.room = rooms.id "
                "WHERE room_servers.server = ANY(?) AND rooms.state = 'live' ORDER BY rooms.ord",
                (dead,),
            )
            yield [row["id"] for row in rows]
            self._write("DELETE FROM servers WHERE id = ANY(?)", (dead,))

    def close(self) -> None:
        """Commit what is queued and close the connections (closed even if the commit
        fails, so no connection outlives its store)."""
        try:
            self.flush()
        finally:
            self._db.close()
            while not self._readers.empty():
                self._readers.get_nowait().close()
            if self._lobby is not None:
                self._lobby.close()


def _first_line(error: Exception) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
