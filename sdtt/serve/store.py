"""Where a study is kept: participants, rooms, messages, events, verdicts and beliefs.

:class:`StudyStore` is the small interface the server uses; :class:`SqliteStore` keeps it
in one SQLite file in the study folder. Every call commits before it returns, so the
server writes a message or an event first and delivers it after: whatever a participant
saw is in the store even if the process is killed right then. Events are the exception
that keeps this cheap: :meth:`add_event` queues them, and they are committed together by
the next call that writes to the database, by :meth:`flush` or :meth:`flushed` (which
the server awaits before any frame leaves and soon after every event), or by :meth:`close`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
import sqlite3
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

from sdtt.errors import InputError

ParticipantState = Literal["consent", "lobby", "chat", "verdict", "done"]
RoomState = Literal["live", "verdict", "done"]
Sender = Literal["interrogator", "witness"]
T = TypeVar("T")
UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
"""Characters no store keeps: U+0000 (PostgreSQL text cannot hold it) and lone UTF-16
surrogates (no UTF-8 form). The protocol refuses frames holding them."""

_VERDICTS = """
CREATE TABLE IF NOT EXISTS verdicts (
    room TEXT NOT NULL, participant TEXT NOT NULL, human TEXT NOT NULL,
    confidence INTEGER, reason TEXT NOT NULL, time TEXT NOT NULL,
    PRIMARY KEY (room, participant)
);
"""
SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS participants (
    pid TEXT PRIMARY KEY, token TEXT NOT NULL, platform_study TEXT, platform_session TEXT,
    state TEXT NOT NULL, role TEXT, room TEXT, outcome TEXT, joined TEXT NOT NULL,
    waiting_since REAL
);
CREATE TABLE IF NOT EXISTS rooms (
    id TEXT PRIMARY KEY, mode TEXT NOT NULL, witness TEXT NOT NULL, condition INTEGER,
    interrogator TEXT NOT NULL, witness_pid TEXT, state TEXT NOT NULL, end_reason TEXT,
    created TEXT NOT NULL, ended TEXT, bot_position INTEGER
);
CREATE TABLE IF NOT EXISTS messages (
    room TEXT NOT NULL, seq INTEGER NOT NULL, sender TEXT NOT NULL, text TEXT NOT NULL,
    time TEXT NOT NULL, chat INTEGER NOT NULL, PRIMARY KEY (room, seq)
);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT, room TEXT, participant TEXT, kind TEXT NOT NULL,
    data TEXT NOT NULL, time TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_participant ON events (participant);
"""
    + _VERDICTS
    + """
CREATE TABLE IF NOT EXISTS beliefs (
    participant TEXT NOT NULL, room TEXT NOT NULL, seq INTEGER NOT NULL, time TEXT NOT NULL,
    value INTEGER NOT NULL
);
"""
)


@dataclass(frozen=True)
class Participant:
    """One participant id of the study."""

    pid: str
    token: str
    state: ParticipantState
    role: Sender | None
    room: str | None
    outcome: str | None
    joined: str
    platform_study: str | None = None
    platform_session: str | None = None
    waiting_since: float | None = None
    """When they entered the lobby (seconds since the epoch, on the server's clock)."""


@dataclass(frozen=True)
class Room:
    """One chat room: an interrogator and a witness (the bot, or a person), or in
    three-party both witnesses, the bot in chat ``bot_position``."""

    id: str
    mode: str
    witness: Literal["bot", "human", "both"]
    cell: int | None
    """The number of the study's condition the bot plays (``Study.conditions``); None
    without a bot. Stored in the rooms table's ``condition`` column."""
    interrogator: str
    witness_pid: str | None
    state: RoomState
    end_reason: str | None
    created: str
    ended: str | None
    bot_position: int | None = None


@dataclass(frozen=True)
class StoredMessage:
    """A chat message as stored (``seq`` counts from 1 within the room)."""

    room: str
    seq: int
    sender: Sender
    text: str
    time: str
    chat: int = 1
    """Which of the interrogator's chats (1, or 1/2 in three-party)."""


@dataclass(frozen=True)
class Verdict:
    """An interrogator's verdict on a room's witness."""

    room: str
    participant: str
    human: str
    """Two-party: 'yes'/'no' (is the witness a person?); three-party: '1'/'2' (which
    chat has the person)."""
    confidence: int | None
    """How sure they were, 0-100; None: they did not move the slider."""
    reason: str
    time: str


@dataclass(frozen=True)
class Belief:
    """A belief slider reading after a message."""

    participant: str
    room: str
    seq: int
    time: str
    value: int


@dataclass(frozen=True)
class RoomTally:
    """How many rooms share a witness kind, cell (condition number) and bot position."""

    witness: str
    cell: int | None
    bot_position: int | None
    count: int


class StudyStore(Protocol):
    """What the server keeps; each method is durable when it returns."""

    def add_participant(self, participant: Participant) -> None: ...
    def participant(self, pid: str) -> Participant | None: ...
    def participants(self, state: ParticipantState | None = None) -> list[Participant]: ...
    def still_waiting(self, pids: Sequence[str]) -> set[str]: ...
    def update_participant(
        self, pid: str, *, if_state: Collection[str] | None = None, **fields: Any
    ) -> bool: ...
    def add_room(self, room: Room) -> None: ...
    def room(self, room_id: str) -> Room | None: ...
    def rooms(self) -> list[Room]: ...
    def room_count(self) -> int: ...
    def room_tally(self) -> list[RoomTally]: ...
    def human_waits(self, count: int) -> list[float]: ...
    def update_room(
        self, room_id: str, *, if_state: Collection[str] | None = None, **fields: Any
    ) -> bool: ...
    def add_message(
        self, room: str, sender: Sender, text: str, time: str, chat: int = 1
    ) -> StoredMessage: ...
    def messages(self, room: str) -> list[StoredMessage]: ...
    def add_event(
        self,
        kind: str,
        data: dict[str, Any],
        time: str,
        *,
        room: str | None = None,
        participant: str | None = None,
    ) -> None: ...
    def events(self, room: str | None = None) -> list[dict[str, Any]]: ...
    def last_event(self, participant: str, kinds: Sequence[str]) -> int: ...
    def last_committed_event(self, participant: str, kinds: Sequence[str]) -> int: ...
    def flush(self) -> None: ...
    async def flushed(self) -> None: ...
    def add_verdict(self, verdict: Verdict) -> None: ...
    def verdicts(self) -> list[Verdict]: ...
    def add_belief(self, belief: Belief) -> None: ...
    def beliefs(self) -> list[Belief]: ...
    def close(self) -> None: ...
    def lobby_lock(self) -> contextlib.AbstractContextManager[bool]: ...
    async def hold_lobby(self, look: Callable[[StudyStore], T]) -> T | None: ...
    def publish(self, message: dict[str, Any]) -> None: ...


_PARTICIPANT_FIELDS = frozenset(
    {
        "token",
        "state",
        "role",
        "room",
        "outcome",
        "platform_study",
        "platform_session",
        "waiting_since",
    }
)
_ROOM_FIELDS = frozenset({"state", "end_reason", "ended", "witness_pid"})


async def off_loop(store: StudyStore, read: Callable[[], T]) -> T:
    """Run ``read``, a call of ``store``'s that reads neither events nor anything it
    changes, off the event loop where the store can (PostgreSQL: a worker thread with
    a connection of its own, so the loop runs other rooms while the database answers);
    else here and now."""
    run = getattr(store, "read_off_loop", None)
    if run is None:
        return read()
    result: T = await run(read)
    return result


async def last_event_off_loop(store: StudyStore, participant: str, kinds: Sequence[str]) -> int:
    """``store.last_event(participant, kinds)``, without holding up the loop where the
    store can: the events queued so far are committed (waited for, see
    :meth:`StudyStore.flushed`), then read by :func:`off_loop`."""
    await store.flushed()
    return await off_loop(store, partial(store.last_committed_event, participant, kinds))


_COLUMN_OF = {"cell": "condition"}
"""Record fields stored under another column name (the column keeps its first name, so
no store needs migrating)."""
_FIELD_OF = {column: name for name, column in _COLUMN_OF.items()}


def _fields(cls: type[Any], row: dict[str, Any]) -> Any:
    found = {_FIELD_OF.get(k, k): v for k, v in row.items()}
    return cls(**{k: v for k, v in found.items() if k in cls.__dataclass_fields__})


class _SqlStore:
    """The queries of a :class:`StudyStore`, for SQLite and PostgreSQL alike (written
    with ``?`` placeholders; ``ORDER`` is the column that keeps insertion order)."""

    ORDER = "rowid"

    @contextlib.contextmanager
    def lobby_lock(self) -> Iterator[bool]:
        """Hold the study's lobby while rooms are formed; yields whether it is held
        (one process: always, with nothing to do)."""
        yield True

    async def hold_lobby(self, look: Callable[[StudyStore], T]) -> T | None:
        """``look(store)`` with the study's lobby held (see :meth:`lobby_lock`), and what
        it returned; None, without calling it, when another process holds the lobby."""
        with self.lobby_lock() as held:
            return look(self) if held else None  # type: ignore[arg-type]

    def publish(self, message: dict[str, Any]) -> None:
        """Tell the study's other server processes something (one process: nobody)."""

    _pending: list[tuple[Any, ...]]
    """Events queued by :meth:`add_event`, not yet committed."""

    EVENT_INSERT = "INSERT INTO events (room, participant, kind, data, time) VALUES (?,?,?,?,?)"

    def _run(self, sql: str, args: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Run one statement, the queued events committed first (a read of the events
        table sees them)."""
        if self._queued():
            self.flush()
        return self._execute(sql, args)

    def _queued(self) -> bool:
        """Whether events are queued, not yet committed."""
        return bool(self._pending)

    def _write(self, sql: str, args: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Run one statement that changes the study, committed after the queued events
        (so everything stays in order)."""
        return self._run(sql, args)

    def _read(self, sql: str, args: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Run a query that does not read the events table: the queued events can wait
        (committing them first cost a round trip to the database on most frames)."""
        return self._execute(sql, args)

    def _execute(self, sql: str, args: Sequence[Any]) -> list[dict[str, Any]]:
        raise NotImplementedError

    def _insert_events(self, events: list[tuple[Any, ...]]) -> None:
        raise NotImplementedError

    def flush(self) -> None:
        """Commit the queued events (one transaction for all of them)."""
        events, self._pending = self._pending, []
        if events:
            try:
                self._insert_events(events)
            except BaseException:
                self._pending[:0] = events  # kept, ahead of what came since
                raise

    async def flushed(self) -> None:
        """Wait until the queued events are committed (here: commit them now)."""
        self.flush()

    def add_message(
        self, room: str, sender: Sender, text: str, time: str, chat: int = 1
    ) -> StoredMessage:
        """Append a message to ``room``'s chat ``chat``; returns it with its sequence
        number (counted over the room)."""
        raise NotImplementedError

    def add_participant(self, participant: Participant) -> None:
        """Add a new participant id (its pid must be new)."""
        self._insert("participants", participant)

    def participant(self, pid: str) -> Participant | None:
        """The participant ``pid``, if it has joined."""
        rows = self._read("SELECT * FROM participants WHERE pid = ?", (pid,))
        return _fields(Participant, rows[0]) if rows else None

    def participants(self, state: ParticipantState | None = None) -> list[Participant]:
        """Every participant (or those in ``state``), in the order they joined."""
        where, args = (" WHERE state = ?", (state,)) if state else ("", ())
        rows = self._read(f"SELECT * FROM participants{where} ORDER BY {self.ORDER}", args)
        return [_fields(Participant, r) for r in rows]

    def still_waiting(self, pids: Sequence[str]) -> set[str]:
        """Those of ``pids`` still in the lobby (the lobby asks inside its transaction,
        just before it takes them out)."""
        if not pids:
            return set()
        marks = ", ".join("?" * len(pids))
        rows = self._read(
            f"SELECT pid FROM participants WHERE state = 'lobby' AND pid IN ({marks})",
            tuple(pids),
        )
        return {row["pid"] for row in rows}

    def update_participant(
        self, pid: str, *, if_state: Collection[str] | None = None, **fields: Any
    ) -> bool:
        """Change some fields of a participant (only if their state is one of
        ``if_state``, when given: checked and changed in one statement); whether it did."""
        return self._update("participants", "pid", pid, fields, _PARTICIPANT_FIELDS, if_state)

    def add_room(self, room: Room) -> None:
        """Add a new room."""
        self._insert("rooms", room)

    def room(self, room_id: str) -> Room | None:
        """The room ``room_id``, if any."""
        rows = self._read("SELECT * FROM rooms WHERE id = ?", (room_id,))
        return _fields(Room, rows[0]) if rows else None

    def rooms(self) -> list[Room]:
        """Every room, oldest first."""
        rows = self._read(f"SELECT * FROM rooms ORDER BY {self.ORDER}")
        return [_fields(Room, r) for r in rows]

    def room_count(self) -> int:
        """How many rooms there are (counted in the database: it runs once per room)."""
        return int(self._read("SELECT COUNT(*) AS n FROM rooms")[0]["n"])

    def room_tally(self) -> list[RoomTally]:
        """The rooms counted by witness kind, condition and bot position (the lobby needs
        only these, on every arrival: never every room)."""
        rows = self._read(
            "SELECT witness, condition AS cell, bot_position, COUNT(*) AS count FROM rooms "
            "GROUP BY witness, condition, bot_position"
        )
        return [_fields(RoomTally, r) for r in rows]

    def human_waits(self, count: int) -> list[float]:
        """Seconds the interrogators of the last ``count`` two-party rooms with a person
        witness waited in the lobby (newest first)."""
        rows = self._read(
            "SELECT r.created AS created, p.waiting_since AS since FROM rooms r "
            "JOIN participants p ON p.pid = r.interrogator "
            "WHERE r.witness = 'human' AND r.mode = 'two-party' AND p.waiting_since IS NOT NULL "
            f"ORDER BY r.{self.ORDER} DESC LIMIT ?",
            (count,),
        )
        return [
            max(0.0, datetime.fromisoformat(r["created"]).timestamp() - float(r["since"]))
            for r in rows
        ]

    def update_room(
        self, room_id: str, *, if_state: Collection[str] | None = None, **fields: Any
    ) -> bool:
        """Change some fields of a room (only if its state is one of ``if_state``, when
        given); whether it did."""
        return self._update("rooms", "id", room_id, fields, _ROOM_FIELDS, if_state)

    def messages(self, room: str) -> list[StoredMessage]:
        """The messages of ``room`` in order."""
        rows = self._read("SELECT * FROM messages WHERE room = ? ORDER BY seq", (room,))
        return [_fields(StoredMessage, r) for r in rows]

    def add_event(
        self,
        kind: str,
        data: dict[str, Any],
        time: str,
        *,
        room: str | None = None,
        participant: str | None = None,
    ) -> None:
        """Record an event (``data`` must be JSON-serialisable); it is committed with
        the next write or :meth:`flush`, so call that before showing anyone the event."""
        self._queue_event((room, participant, kind, json.dumps(data, default=str), time))

    def _queue_event(self, row: tuple[Any, ...]) -> None:
        self._pending.append(row)

    def events(self, room: str | None = None) -> list[dict[str, Any]]:
        """Recorded events (of one room, or all), oldest first."""
        sql = "SELECT * FROM events" + (" WHERE room = ?" if room else "") + " ORDER BY id"
        rows = self._run(sql, (room,) if room else ())
        return [{**r, "data": json.loads(r["data"])} for r in rows]

    def last_event(self, participant: str, kinds: Sequence[str]) -> int:
        """The id of ``participant``'s latest event of one of ``kinds`` (0: none). Ids
        grow with every event, in every process sharing the store, so a larger one
        was recorded later."""
        if self._queued():
            self.flush()
        return self.last_committed_event(participant, kinds)

    def last_committed_event(self, participant: str, kinds: Sequence[str]) -> int:
        """:meth:`last_event` among the events committed (a worker thread may read it,
        see :func:`last_event_off_loop`)."""
        marks = ",".join("?" * len(kinds))
        rows = self._read(
            f"SELECT MAX(id) AS id FROM events WHERE participant = ? AND kind IN ({marks})",
            (participant, *kinds),
        )
        return int(rows[0]["id"] or 0)

    def add_verdict(self, verdict: Verdict) -> None:
        """Record a verdict (one per participant and room)."""
        self._insert("verdicts", verdict)

    def verdicts(self) -> list[Verdict]:
        """Every verdict, oldest first."""
        rows = self._read(f"SELECT * FROM verdicts ORDER BY {self.ORDER}")
        return [_fields(Verdict, r) for r in rows]

    def add_belief(self, belief: Belief) -> None:
        """Record a belief slider reading."""
        self._insert("beliefs", belief)

    def beliefs(self) -> list[Belief]:
        """Every belief reading, oldest first."""
        rows = self._read(f"SELECT * FROM beliefs ORDER BY {self.ORDER}")
        return [_fields(Belief, r) for r in rows]

    def _insert(self, table: str, record: Any) -> None:
        """Insert a record dataclass as a row (its fields are the table's columns)."""
        names = [field.name for field in dataclasses.fields(record)]
        columns = [_COLUMN_OF.get(name, name) for name in names]
        self._write(
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({','.join('?' * len(names))})",
            tuple(getattr(record, name) for name in names),
        )

    def _update(
        self,
        table: str,
        key: str,
        value: str,
        fields: dict[str, Any],
        allowed: frozenset[str],
        if_state: Collection[str] | None,
    ) -> bool:
        unknown = set(fields) - allowed
        if unknown:
            raise ValueError(f"cannot update {sorted(unknown)} of {table}")
        if not fields:
            return True
        if if_state is not None and not if_state:
            return False  # (no state allows it)
        assignments = ", ".join(f"{name} = ?" for name in fields)
        sql = f"UPDATE {table} SET {assignments} WHERE {key} = ?"
        args: tuple[Any, ...] = (*fields.values(), value)
        if if_state is not None:
            sql += f" AND state IN ({','.join('?' * len(if_state))})"
            args += tuple(if_state)
        return self._write_count(sql, args) > 0

    def _write_count(self, sql: str, args: Sequence[Any]) -> int:
        """:meth:`_write`, returning how many rows the statement changed."""
        raise NotImplementedError


def _let_confidence_be_unset(db: sqlite3.Connection) -> None:
    """A study file begun when every verdict had a confidence: its verdicts table is
    rebuilt (SQLite cannot drop a NOT NULL), so an untouched slider is stored as None."""
    columns = {row[1]: row[3] for row in db.execute("PRAGMA table_info(verdicts)")}
    if not columns.get("confidence"):
        return
    with db:
        db.execute("BEGIN IMMEDIATE")
        db.execute("ALTER TABLE verdicts RENAME TO verdicts_old")
        db.execute(_VERDICTS)
        db.execute("INSERT INTO verdicts SELECT * FROM verdicts_old")
        db.execute("DROP TABLE verdicts_old")


class SqliteStore(_SqlStore):
    """A :class:`StudyStore` in one SQLite file (created if missing)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(SCHEMA)
            _let_confidence_be_unset(self._db)
        except sqlite3.DatabaseError as error:
            raise InputError(
                f"cannot open the study store ({error}).",
                path=self.path,
                hint="Give another [storage] path, or move the damaged file away.",
            ) from None
        self._db.row_factory = sqlite3.Row
        self._pending = []
        self._checkpointer: sqlite3.Connection | None = None

    def background_checkpoints(self) -> Callable[[], None]:
        """Take over copying the write-ahead log into the database file.

        SQLite otherwise does it inside a commit every thousand pages, syncing the file to
        disk while the caller waits: on the server's event loop, a pause of tens of
        milliseconds for every room. After this call it never does; the server runs the
        returned function now and then in a worker thread (it uses a connection of its
        own, so commits go on meanwhile). Call on the thread that uses the store."""
        if self._checkpointer is None:
            self._db.execute("PRAGMA wal_autocheckpoint=0")
            self._checkpointer = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False
            )
        checkpointer = self._checkpointer

        def checkpoint() -> None:
            checkpointer.execute("PRAGMA wal_checkpoint(PASSIVE)")

        return checkpoint

    def _execute(self, sql: str, args: Sequence[Any]) -> list[dict[str, Any]]:
        return [dict(row) for row in self._db.execute(sql, args).fetchall()]

    def _write_count(self, sql: str, args: Sequence[Any]) -> int:
        if self._pending:
            self.flush()
        return int(self._db.execute(sql, args).rowcount)

    def _insert_events(self, events: list[tuple[Any, ...]]) -> None:
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany(self.EVENT_INSERT, events)

    def add_message(
        self, room: str, sender: Sender, text: str, time: str, chat: int = 1
    ) -> StoredMessage:
        """Append a message to ``room``'s chat ``chat``; returns it with its sequence
        number (counted over the room)."""
        events, self._pending = self._pending, []
        try:
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")  # queued events go in the same commit
                self._db.executemany(self.EVENT_INSERT, events)
                row = self._db.execute(
                    "SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE room = ?", (room,)
                ).fetchone()
                seq = int(row[0])
                self._db.execute(
                    "INSERT INTO messages (room, seq, sender, text, time, chat) "
                    "VALUES (?,?,?,?,?,?)",
                    (room, seq, sender, text, time, chat),
                )
        except BaseException:
            self._pending[:0] = events  # rolled back: kept, ahead of what came since
            raise
        return StoredMessage(room=room, seq=seq, sender=sender, text=text, time=time, chat=chat)

    def close(self) -> None:
        """Commit what is queued and close the file."""
        self.flush()
        if self._checkpointer is not None:
            self._checkpointer.close()
        self._db.close()
