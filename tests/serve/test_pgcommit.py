"""Messages, events and notices of a PostgreSQL study committed by a task of the loop: the loop runs
other rooms while the database answers, nothing is lost or reordered, and a notice never
comes before what it tells of is committed."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import psycopg
import pytest
import trio

from sdtt.serve.pgstore import CHANNEL, PostgresStore
from sdtt.serve.store import Room


@pytest.fixture
def blocker(fresh_database: str) -> Iterator[psycopg.Connection[tuple[object, ...]]]:
    """Another session, which the test makes hold the events table."""
    with psycopg.connect(fresh_database) as connection:
        # Ended by the server at the latest: a test that fails does not hang.
        connection.execute("SET idle_in_transaction_session_timeout = '10s'")
        yield connection


def live_room(room_id: str) -> Room:
    return Room(
        id=room_id,
        mode="two-party",
        witness="bot",
        cell=0,
        interrogator="P1",
        witness_pid=None,
        state="live",
        end_reason=None,
        created="2025-03-01T09:00:00+00:00",
        ended=None,
    )


@pytest.fixture
def listener(fresh_database: str) -> Iterator[psycopg.Connection[tuple[object, ...]]]:
    """A session of another process of the study, listening to its notices."""
    with psycopg.connect(fresh_database, autocommit=True) as connection:
        connection.execute(f"LISTEN {CHANNEL}")
        yield connection


def notices(listener: psycopg.Connection[tuple[object, ...]]) -> list[str]:
    return [note.payload for note in listener.notifies(timeout=0.3, stop_after=100)]


@pytest.mark.trio
async def test_a_commit_waiting_for_the_database_leaves_the_loop_running(
    pg_store: Callable[[], PostgresStore],
    listener: psycopg.Connection[tuple[object, ...]],
    blocker: psycopg.Connection[tuple[object, ...]],
) -> None:
    store = pg_store()
    order: list[str] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(store.keep_committing)
        await trio.sleep(0.1)
        blocker.execute("LOCK TABLE events IN ACCESS EXCLUSIVE MODE")
        for n in range(3):
            store.add_event("typing", {"n": n}, "t1", room="r1")
        store.publish({"to": "P1", "frame": {"type": "message", "text": "ok"}})
        store.publish({"to": "P1", "frame": {"type": "message", "text": "ok"}})

        async def release() -> None:
            await trio.sleep(0.3)  # the loop runs meanwhile
            assert notices(listener) == []  # not before the events are in
            blocker.commit()
            order.append("released")

        nursery.start_soon(release)
        await store.flushed()
        order.append("committed")
        store.add_event("typing", {"n": 3}, "t2", room="r1")
        await store.flushed()
        nursery.cancel_scope.cancel()
    assert order == ["released", "committed"]
    assert [e["data"]["n"] for e in store.events("r1")] == [0, 1, 2, 3]
    # Both notices, though their texts are the same, each once.
    assert [n.count('"text": "ok"') for n in notices(listener)] == [1, 1]


@pytest.mark.trio
async def test_a_read_of_the_events_sees_a_batch_that_was_under_way(
    pg_store: Callable[[], PostgresStore],
    blocker: psycopg.Connection[tuple[object, ...]],
) -> None:
    store = pg_store()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(store.keep_committing)
        await trio.sleep(0.1)
        blocker.execute("LOCK TABLE events IN ACCESS EXCLUSIVE MODE")
        store.add_event("joined", {}, "t1", participant="P1")
        await trio.sleep(0.1)  # the batch is sent, and waits for the lock
        threading.Thread(target=lambda: (time.sleep(0.3), blocker.commit())).start()
        # Read at once, on the loop: the batch under way is finished first.
        assert store.last_event("P1", ["joined"]) > 0
        store.add_event("left", {}, "t2", participant="P1")
        with trio.fail_after(5):  # the task still commits what comes next
            await store.flushed()
        nursery.cancel_scope.cancel()
    assert [e["kind"] for e in store.events()] == ["joined", "left"]


@pytest.mark.trio
async def test_notices_published_while_the_lobby_is_held_go_once_it_is_released(
    pg_store: Callable[[], PostgresStore], listener: psycopg.Connection[tuple[object, ...]]
) -> None:
    store = pg_store()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(store.keep_committing)
        await trio.sleep(0.1)
        with store.lobby_lock() as held:
            assert held
            store.publish({"state": "P1"})
            await store.flushed()
            assert notices(listener) == []  # the room it shows is not committed
        with pytest.raises(RuntimeError), store.lobby_lock():
            store.publish({"state": "P2"})
            raise RuntimeError("the room could not be formed")
        await store.flushed()
        nursery.cancel_scope.cancel()
    assert ['"state": "P1"' in n for n in notices(listener)] == [True]


@pytest.mark.trio
async def test_messages_are_numbered_at_once_and_committed_before_the_notice_after_them(
    pg_store: Callable[[], PostgresStore],
    listener: psycopg.Connection[tuple[object, ...]],
    blocker: psycopg.Connection[tuple[object, ...]],
) -> None:
    store = pg_store()
    store.add_room(live_room("r1"))
    texts = ['say "hi" \\ there', "naïve 😀\nsecond line", "<b>ok</b>"]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(store.keep_committing)
        await trio.sleep(0.1)
        blocker.execute("LOCK TABLE messages IN ACCESS EXCLUSIVE MODE")
        with trio.fail_after(0.1):  # numbered without waiting for the database
            stored = [store.add_message("r1", "interrogator", t, "t1") for t in texts]
        assert [m.seq for m in stored] == [1, 2, 3]
        store.publish({"to": "P1", "frame": {"type": "message", "id": 3}})
        with pytest.raises(ValueError, match="U\\+0000"):
            store.add_message("r1", "witness", "nul \x00", "t2")
        await trio.sleep(0.3)  # the loop runs meanwhile
        assert notices(listener) == []  # not before the messages are in
        blocker.commit()
        await store.flushed()
        nursery.cancel_scope.cancel()
    assert len(notices(listener)) == 1
    assert [(m.seq, m.text) for m in store.messages("r1")] == [
        (1, texts[0]),
        (2, texts[1]),
        (3, texts[2]),
    ]
    # A process taking the room up again (a restart) counts on from the last one stored.
    again = pg_store()
    assert again.add_message("r1", "witness", "back", "t3").seq == 4
    assert [m.text for m in store.messages("r1")][-1] == "back"


@pytest.mark.trio
async def test_a_batch_whose_connection_is_lost_is_kept_and_committed_on_a_new_one(
    pg_store: Callable[[], PostgresStore],
    fresh_database: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = pg_store()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(store.keep_committing)
        while (committer := store._committer) is None:
            await trio.sleep(0.01)
        store.add_event("typing", {"n": 0}, "t1", room="r1")
        await store.flushed()
        with psycopg.connect(fresh_database, autocommit=True) as admin:  # a database restart
            admin.execute("SELECT pg_terminate_backend(%s)", (committer._db.info.backend_pid,))
        for n in (1, 2):
            store.add_event("typing", {"n": n}, "t2", room="r1")
        with trio.fail_after(30):
            await store.flushed()
        nursery.cancel_scope.cancel()
    assert [e["data"]["n"] for e in store.events("r1")] == [0, 1, 2]
    error, back = [r for r in caplog.records if r.name == "sdtt.serve"]
    assert "tried again" in error.getMessage() and error.exc_info is not None
    assert "works again" in back.getMessage()
