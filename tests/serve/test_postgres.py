"""The PostgreSQL store against a real server: the same behaviour as SQLite, a whole game,
and two server processes' worth of servers sharing one study."""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import psycopg
import pytest
import trio
import trio.testing

from sdtt.serve.connections import Connections
from sdtt.serve.pgstore import PostgresStore
from sdtt.serve.phases import BadMove, move_participant
from sdtt.serve.server import StudyServer
from sdtt.serve.spec import read_study
from sdtt.serve.state import state_frames
from sdtt.serve.store import (
    Belief,
    Participant,
    Room,
    SqliteStore,
    StudyStore,
    Verdict,
    off_loop,
)
from tests.serve.helpers import Browser, person_room, run_server, write_spec
from tests.serve.test_two_party import play_bot_game


@contextlib.contextmanager
def meanwhile(
    store: PostgresStore,
    method: str,
    when: Callable[..., bool],
    other: Callable[[], object],
    *,
    after: bool = False,
) -> Iterator[None]:
    """In the block, ``other`` (another process's write) runs just before each call of
    ``store.<method>`` whose arguments ``when`` matches (``after``: just after it): a race
    between two processes, made to happen."""
    original = getattr(store, method)

    def call(*args: Any, **kwargs: Any) -> Any:
        if not after and when(*args, **kwargs):
            other()
        result = original(*args, **kwargs)
        if after and when(*args, **kwargs):
            other()
        return result

    setattr(store, method, call)
    try:
        yield
    finally:
        setattr(store, method, original)


@contextlib.asynccontextmanager
async def table_held(url: str, table: str, order: list[str]) -> AsyncIterator[None]:
    """Another session holds ``table`` for the first 0.2 s of the block, then lets go
    (``"released"`` goes in ``order``): a statement on the table waits for that if it
    waits off the loop; on the loop it holds up the release too, until the server ends
    that session 5 s later."""
    with psycopg.connect(url) as blocker:
        blocker.execute("SET idle_in_transaction_session_timeout = '5s'")
        blocker.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")

        async def release() -> None:
            await trio.sleep(0.2)
            blocker.commit()
            order.append("released")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(release)
            yield


@contextlib.asynccontextmanager
async def server_and_another_process(
    spec: Path, pg_store: Callable[[], PostgresStore]
) -> AsyncIterator[tuple[trio.Nursery, StudyServer, PostgresStore]]:
    """A server of ``spec`` running in a nursery, and another process's store; the
    nursery is cancelled at the end of the block."""
    there = pg_store()
    async with trio.open_nursery() as nursery:
        server = await run_server(nursery, spec, pg_store())
        yield nursery, server, there
        nursery.cancel_scope.cancel()


def postgres_spec(folder: Path, url: str, **kwargs: object) -> Path:
    spec = write_spec(folder, **kwargs)  # type: ignore[arg-type]
    spec.write_text(spec.read_text() + f'\n[storage]\nurl = "{url}"\n')
    return spec


def real_time_spec(folder: Path, url: str, **kwargs: object) -> Path:
    """A spec for servers on a clock that runs with real time (their relays are real
    threads): no lobby timeout, time limit or lease that a loaded machine could reach
    while a test waits for a frame from the other process."""
    spec = postgres_spec(folder, url, timeout=100_000, **kwargs)
    text = spec.read_text().replace("[chat]\n", "[chat]\ntime_limit = 0\n")
    spec.write_text(text + "lease = 100000\n")
    return spec


def fill(store: StudyStore) -> None:
    store.add_participant(Participant("P1", "tok", "consent", None, None, None, "t0", "S", "X"))
    store.update_participant("P1", state="chat", role="interrogator", room="r1")
    store.add_room(Room("r1", "two-party", "bot", 0, "P1", None, "live", None, "t1", None))
    for text in ("a", "b", "c"):
        store.add_message("r1", "interrogator", text, "t2")
    store.add_event("engine", {"type": "x", "n": [1, 2]}, "t3", room="r1")
    store.add_verdict(Verdict("r1", "P1", "no", 70, "fast", "t4"))
    store.add_belief(Belief("P1", "r1", 3, "t5", 20))
    store.update_room("r1", state="done", end_reason="finished", ended="t6")


def test_postgres_store_keeps_what_sqlite_keeps(
    pg_store: Callable[[], PostgresStore], tmp_path: Path
) -> None:
    pg, lite = pg_store(), SqliteStore(tmp_path / "s.db")
    try:
        for store in (pg, lite):
            fill(store)
        assert pg.participants() == lite.participants()
        assert pg.rooms() == lite.rooms()
        assert pg.messages("r1") == lite.messages("r1")
        assert [m.seq for m in pg.messages("r1")] == [1, 2, 3]
        assert [(e["kind"], e["data"]) for e in pg.events()] == [
            (e["kind"], e["data"]) for e in lite.events()
        ]
        for store in (pg, lite):  # a join, and a reconnect after it
            for kind in ("joined", "consented", "reconnected", "consented"):
                store.add_event(kind, {}, "t9", participant="P1")
            ids = {e["kind"]: e["id"] for e in store.events() if e["participant"] == "P1"}
            assert store.last_event("P1", ["joined", "reconnected"]) == ids["reconnected"]
            assert store.last_event("P1", ["joined"]) == ids["joined"] < ids["reconnected"]
            assert store.last_event("P2", ["joined"]) == 0
        assert pg.verdicts() == lite.verdicts() and pg.beliefs() == lite.beliefs()
        other = pg_store()  # a second process's connection
        assert other.add_message("r1", "witness", "d", "t7").seq == 4
        assert pg.add_message("r1", "witness", "e", "t8").seq == 5
    finally:
        lite.close()


def test_a_bad_database_url_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="cannot connect to the study database") as caught:
        PostgresStore(f"postgresql://nobody@/none?host={tmp_path}&port=1")
    assert "\n" not in str(caught.value)
    assert not isinstance(caught.value, psycopg.Error)


@pytest.mark.trio
async def test_servers_sharing_one_database_balance_conditions(
    fresh_database: str,
    pg_store: Callable[[], PostgresStore],
    tmp_path: Path,
    autojump_clock: object,
) -> None:
    spec = postgres_spec(tmp_path, fresh_database, turns=1)
    async with trio.open_nursery() as nursery:
        servers = [await run_server(nursery, spec, pg_store()) for _ in range(2)]
        for index in range(4):
            browser = Browser(servers[index % 2], f"P{index}")
            await browser.enter_chat(nursery)
        await play_bot_game(servers[0], nursery, "P9")
        nursery.cancel_scope.cancel()
    rooms = servers[1].store.rooms()
    assert sorted(r.cell for r in rooms) == [0, 0, 0, 1, 1]
    assert servers[1].store.verdicts()[0].participant == "P9"


@pytest.mark.trio
async def test_participants_of_two_processes_chat_through_the_database(
    fresh_database: str,
    pg_store: Callable[[], PostgresStore],
    tmp_path: Path,
    mock_clock: trio.testing.MockClock,
) -> None:
    mock_clock.rate = 50  # real threads listen to the database: no jumps, just fast
    spec = real_time_spec(tmp_path, fresh_database, turns=1, share=1.0)
    async with trio.open_nursery() as nursery:
        servers = [await run_server(nursery, spec, pg_store()) for _ in range(2)]
        judge, witness = Browser(servers[0], "J1"), Browser(servers[1], "W1")
        for browser in (judge, witness):
            await browser.open(nursery)
            await browser.say({"type": "consent"})
            await browser.wait(lambda b=browser: "lobby" in [f["phase"] for f in b.of("phase")])
        await judge.wait_phase("chat")
        await witness.wait_phase("chat")
        await judge.say({"type": "send", "text": "hello from one process"})
        await witness.wait(lambda: witness.texts("them") == ["hello from one process"])
        await witness.say({"type": "typing"})
        await judge.wait(lambda: any(f["on"] for f in judge.of("typing")))
        await witness.say({"type": "send", "text": "and hello from the other"})
        await judge.wait_phase("verdict")
        await witness.wait_phase("done")
        await judge.say({"type": "verdict", "human": "yes", "confidence": 60, "reason": ""})
        await judge.wait_phase("done")
        nursery.cancel_scope.cancel()
    [room] = servers[0].store.rooms()
    assert (room.witness, room.interrogator, room.witness_pid) == ("human", "J1", "W1")
    assert judge.texts() == ["hello from one process", "and hello from the other"]


@pytest.mark.trio
async def test_a_started_server_hears_what_other_processes_publish(
    fresh_database: str,
    pg_store: Callable[[], PostgresStore],
    tmp_path: Path,
    mock_clock: trio.testing.MockClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mock_clock.rate = 1  # the listener is a real thread: real time
    listen = PostgresStore.listen

    def slow_listen(self: PostgresStore, *args: Any) -> None:
        time.sleep(0.5)  # a loaded machine: the listener connects late
        listen(self, *args)

    monkeypatch.setattr(PostgresStore, "listen", slow_listen)
    async with trio.open_nursery() as nursery:
        server = await run_server(nursery, real_time_spec(tmp_path, fresh_database), pg_store())
        heard = trio.Event()

        async def take(message: dict[str, Any]) -> None:
            if message.get("to") == "P1":
                heard.set()

        server.relay.take = take  # type: ignore[method-assign]
        # Published as soon as the server runs (a partner's room opened elsewhere): it
        # must not be lost, or P1 waits on a page that never changes.
        pg_store().publish({"to": "P1", "frame": {"type": "phase", "phase": "chat"}})
        with trio.fail_after(10):
            await heard.wait()
        nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_a_read_waiting_for_the_database_leaves_the_loop_running(
    pg_store: Callable[[], PostgresStore], fresh_database: str
) -> None:
    store = pg_store()
    store.add_participant(Participant("P1", "tok", "consent", None, None, None, "t0"))
    move_participant(store, "P1", "lobby")
    order: list[str] = []
    async with table_held(fresh_database, "participants", order):
        participant = await off_loop(store, partial(store.participant, "P1"))
        order.append("read")
    assert order == ["released", "read"]
    assert participant is not None and participant.state == "lobby"


@pytest.mark.trio
async def test_a_lobby_look_waiting_for_the_database_leaves_the_loop_running(
    pg_store: Callable[[], PostgresStore], fresh_database: str
) -> None:
    store = pg_store()
    store.add_participant(Participant("P1", "tok", "lobby", None, None, None, "t0"))
    room = Room("r1", "two-party", "bot", 0, "P1", None, "live", None, "t1", None)

    def look(lobby: StudyStore) -> list[str]:
        waiting = [p.pid for p in lobby.participants("lobby")]
        lobby.add_room(room)
        move_participant(lobby, "P1", "chat", role="interrogator", room="r1")
        return waiting

    order: list[str] = []
    async with table_held(fresh_database, "participants", order):
        taken = await store.hold_lobby(look)
        order.append("looked")
    assert order == ["released", "looked"] and taken == ["P1"]
    assert pg_store().participant("P1").room == "r1"  # type: ignore[union-attr]  # committed
    # The room is numbered from 1 by this process without asking the database.
    assert store.add_message("r1", "interrogator", "hi", "t2").seq == 1
    assert [m.text for m in store.messages("r1")] == ["hi"]


@pytest.mark.trio
@pytest.mark.parametrize(
    ("phase", "table"),
    [("chat", "rooms"), ("verdict", "messages"), ("chat", "events")],
    ids=["a chat's room", "the verdict page's messages", "the join's event"],
)
async def test_a_state_shown_waiting_for_the_database_leaves_the_loop_running(
    pg_store: Callable[[], PostgresStore],
    fresh_database: str,
    tmp_path: Path,
    phase: str,
    table: str,
) -> None:
    store = pg_store()
    fill(store)  # P1 in a chat of three messages
    store.update_participant("P1", state=phase)
    study = read_study(postgres_spec(tmp_path, fresh_database))
    connections = Connections(study, store, partial(state_frames, study, store, {}))
    frames: list[dict[str, Any]] = []
    order: list[str] = []
    joins = iter(['{"type": "join", "pid": "P1"}'])
    leave = trio.Event()

    class LetIn:
        async def join(self, join: object) -> str:
            return "P1"

        async def handle(self, pid: str, frame: object) -> None:
            pass

    async def receive() -> str | None:
        first = next(joins, None)
        if first is None:
            await leave.wait()
        return first

    async def send(message: dict[str, Any] | list[dict[str, Any]]) -> None:
        for frame in message if isinstance(message, list) else [message]:
            frames.append(frame)
            if frame["type"] == "history":
                order.append("shown")
                leave.set()

    async with table_held(fresh_database, table, order):  # (read by the join or its state)
        with trio.fail_after(10):
            await connections.attend(receive, send, LetIn())
    assert order == ["released", "shown"]
    [shown] = [frame for frame in frames if frame["type"] == "phase"]
    [history] = [frame for frame in frames if frame["type"] == "history"]
    assert shown["phase"] == phase and shown.get("role", "interrogator") == "interrogator"
    assert [m["text"] for m in history["messages"]] == ["a", "b", "c"]


def test_a_move_is_checked_against_the_phase_in_the_database(
    pg_store: Callable[[], PostgresStore],
) -> None:
    here, there = pg_store(), pg_store()  # two processes
    here.add_participant(Participant("P1", "tok", "consent", None, None, None, "t0"))
    move_participant(there, "P1", "done", outcome="declined")
    with pytest.raises(BadMove, match="from 'done' to 'chat'"):
        move_participant(here, "P1", "chat")
    assert here.participant("P1").state == "done"  # type: ignore[union-attr]


@pytest.mark.trio
async def test_one_who_leaves_in_another_process_during_a_look_stops_nothing(
    pg_store: Callable[[], PostgresStore],
    fresh_database: str,
    tmp_path: Path,
    autojump_clock: object,
) -> None:
    # P1 leaves (another process moves them on) after this process's lobby look read
    # them and before it took them out: the whole server stopped on that (BadMove).
    spec = postgres_spec(tmp_path, fresh_database, turns=1, timeout=5)
    async with server_and_another_process(spec, pg_store) as (nursery, server, there):

        def leave() -> None:
            participant = there.participant("P1")
            if participant is not None and participant.state == "lobby":
                move_participant(there, "P1", "done", outcome="left")

        lobby = lambda state=None: state == "lobby"  # noqa: E731
        with meanwhile(server.store, "participants", lobby, leave, after=True):  # type: ignore[arg-type]
            gone = Browser(server, "P1")
            await gone.open(nursery)
            await gone.say({"type": "consent"})
            await trio.sleep(30)  # past the lobby's timeout: the bot room was decided
        await Browser(server, "P2").enter_chat(nursery)  # the server still runs
    assert there.participant("P1").state == "done"  # type: ignore[union-attr]
    assert [room.interrogator for room in there.rooms()] == ["P2"]


def test_the_people_a_look_takes_are_held_until_it_ends(
    pg_store: Callable[[], PostgresStore],
) -> None:
    here, there = pg_store(), pg_store()  # two processes
    for pid in ("P1", "P2"):
        here.add_participant(Participant(pid, "tok", "lobby", None, None, None, "t0"))
    there._db.execute("SET lock_timeout = '200ms'")
    with here.lobby_lock() as held:
        assert held and here.still_waiting(["P1", "P2"]) == {"P1", "P2"}
        with pytest.raises(psycopg.errors.LockNotAvailable):  # leaving waits for the look
            move_participant(there, "P1", "done", outcome="left")
    move_participant(there, "P1", "done", outcome="left")  # and goes through after it
    assert here.still_waiting(["P1", "P2"]) == {"P2"}


@pytest.mark.trio
async def test_one_who_leaves_in_another_process_as_their_chat_ends_stops_nothing(
    pg_store: Callable[[], PostgresStore],
    fresh_database: str,
    tmp_path: Path,
    autojump_clock: object,
) -> None:
    # The interrogator leaves on another process just as their bot chat finishes here,
    # before that process's word to end the room comes: the move to the verdict failed
    # and stopped the whole server.
    spec = postgres_spec(tmp_path, fresh_database, turns=1, timeout=5)
    async with server_and_another_process(spec, pg_store) as (nursery, server, there):
        to_verdict = lambda pid, **fields: fields.get("state") == "verdict"  # noqa: E731
        leave = partial(move_participant, there, "P1", "done", outcome="left")
        with meanwhile(server.store, "update_participant", to_verdict, leave):  # type: ignore[arg-type]
            browser = Browser(server, "P1")
            await browser.enter_chat(nursery)
            await browser.say({"type": "send", "text": "hello there"})
            while not [room for room in there.rooms() if room.state == "done"]:
                await trio.sleep(1)  # (one who left is not told: their browser is gone)
        await Browser(server, "P2").enter_chat(nursery)  # the server still runs
    room = next(room for room in there.rooms() if room.interrogator == "P1")
    assert (room.state, room.end_reason) == ("done", "partner_left")
    assert there.participant("P1").outcome == "left"  # type: ignore[union-attr]


@pytest.mark.trio
async def test_a_witness_who_leaves_in_another_process_as_the_chat_ends_stops_nothing(
    pg_store: Callable[[], PostgresStore],
    fresh_database: str,
    tmp_path: Path,
    autojump_clock: object,
) -> None:
    # As above, the person witness: finishing their round failed and stopped the server.
    spec = postgres_spec(tmp_path, fresh_database, turns=1, share=1.0)
    async with server_and_another_process(spec, pg_store) as (nursery, server, there):
        finished = lambda pid, **fields: pid == "W1" and fields.get("outcome") == "finished"  # noqa: E731
        leave = partial(move_participant, there, "W1", "done", outcome="left")
        with meanwhile(server.store, "update_participant", finished, leave):  # type: ignore[arg-type]
            judge, witness = await person_room(server, nursery)
            await judge.say({"type": "send", "text": "hello there"})
            await witness.wait(lambda: witness.texts("them") == ["hello there"])
            await witness.say({"type": "send", "text": "hi"})
            await judge.wait_phase("verdict")  # the judge goes on to the verdict
        await judge.say({"type": "verdict", "human": "yes", "confidence": 60, "reason": ""})
        await judge.wait_phase("done")
    assert there.participant("W1").outcome == "left"  # type: ignore[union-attr]
    assert [room.state for room in there.rooms()] == ["done"]


@pytest.mark.trio
async def test_a_chat_that_finishes_as_another_process_ends_its_room_stops_nothing(
    pg_store: Callable[[], PostgresStore],
    fresh_database: str,
    tmp_path: Path,
    autojump_clock: object,
) -> None:
    # Another process took this one for dead and ended its room just as the chat
    # finished here: the room's move to the verdict failed and stopped the server.
    spec = postgres_spec(tmp_path, fresh_database, turns=1, timeout=5)
    async with server_and_another_process(spec, pg_store) as (nursery, server, there):

        def end_it_there() -> None:
            [room] = there.rooms()
            there.update_room(room.id, state="done", end_reason="server_lost")
            move_participant(there, "P1", "done", outcome="server_lost")

        to_verdict = lambda room_id, **fields: fields.get("state") == "verdict"  # noqa: E731
        with meanwhile(server.store, "update_room", to_verdict, end_it_there):  # type: ignore[arg-type]
            browser = Browser(server, "P1")
            await browser.enter_chat(nursery)
            await browser.say({"type": "send", "text": "hello there"})
            await browser.wait_phase("done")  # shown how it ended
        await Browser(server, "P2").enter_chat(nursery)  # the server still runs
    room = next(room for room in there.rooms() if room.interrogator == "P1")
    assert (room.state, room.end_reason) == ("done", "server_lost")


OLD_VERDICTS = """CREATE TABLE verdicts (
    {ord}room TEXT NOT NULL, participant TEXT NOT NULL, human TEXT NOT NULL,
    confidence INTEGER NOT NULL, reason TEXT NOT NULL, time TEXT NOT NULL,
    PRIMARY KEY (room, participant)
)"""
"""The verdicts table of a study begun when every verdict had a confidence."""


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_study_begun_before_stores_an_unmoved_confidence_and_keeps_its_verdicts(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    old = ("r0", "P0", "yes", 70, "typos", "t0")
    insert = "INSERT INTO verdicts (room, participant, human, confidence, reason, time) "
    if kind == "sqlite":
        import sqlite3

        with sqlite3.connect(tmp_path / "old.sqlite3") as db:
            db.execute(OLD_VERDICTS.format(ord=""))
            db.execute(insert + "VALUES (?, ?, ?, ?, ?, ?)", old)
        store: StudyStore = SqliteStore(tmp_path / "old.sqlite3")
    else:
        url = request.getfixturevalue("fresh_database")
        with psycopg.connect(url, autocommit=True) as db:
            db.execute(OLD_VERDICTS.format(ord="ord BIGSERIAL, "))
            db.execute(insert + "VALUES (%s, %s, %s, %s, %s, %s)", old)
        store = PostgresStore(url)
    try:
        store.add_verdict(Verdict("r1", "P1", "no", None, "", "t1"))
        assert [(v.participant, v.confidence) for v in store.verdicts()] == [
            ("P0", 70),
            ("P1", None),
        ]
    finally:
        store.close()
