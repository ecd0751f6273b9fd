"""Leases on a shared PostgreSQL store: when a server process dies, another ends the
rooms it was running (reason ``server_lost``) within the lease, and their people get the
end and the completion code; live processes' rooms are left alone."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
import trio

from sdtt.serve.lobby import Look
from sdtt.serve.pgstore import PostgresStore
from sdtt.serve.state import NOTES
from sdtt.serve.wsclient import WebSocketClient
from tests.serve.helpers import Browser, run_server
from tests.serve.process import free_port, start_server, stop_server
from tests.serve.test_crash import frames_until
from tests.serve.test_postgres import postgres_spec

pytestmark = pytest.mark.trio
LEASE = 6.0


def lease_spec(folder: Path, url: str, lease: float, **kwargs: object) -> Path:
    spec = postgres_spec(folder, url, **kwargs)
    spec.write_text(spec.read_text() + f"lease = {lease}\n")
    return spec


async def chat_once(browser: Browser, text: str) -> None:
    replies = len(browser.texts("them"))
    await browser.say({"type": "send", "text": text})
    await browser.wait(lambda: len(browser.texts("them")) > replies)


async def test_a_dead_process_rooms_end_within_the_lease(
    fresh_database: str,
    pg_store: Callable[[], PostgresStore],
    tmp_path: Path,
    autojump_clock: object,
) -> None:
    spec = lease_spec(tmp_path, fresh_database, LEASE, turns=5)
    async with trio.open_nursery() as nursery:
        b = await run_server(nursery, spec, pg_store())
        stays = Browser(b, "P2")
        await stays.enter_chat(nursery)
        async with trio.open_nursery() as crashing:
            a = await run_server(crashing, spec, pg_store())
            # Either process may form a room for anyone in the lobby: B is kept from
            # looking while P1 arrives, so that the room which dies is A's.
            blind = lambda store, **_: Look(b.matchmaker, math.inf)  # noqa: E731
            look, b.lobby.look = b.lobby.look, blind  # type: ignore[method-assign]
            lost = Browser(a, "P1")
            await lost.open(crashing)
            await lost.say({"type": "consent"})
            await lost.wait_phase("chat")
            b.lobby.look = look  # type: ignore[method-assign]
            assert list(a._rooms) and not set(a._rooms) & set(b._rooms)
            [room_id] = a._rooms
            await chat_once(lost, "hello, who is there?")
            crashing.cancel_scope.cancel()  # the process dies: no cleanup written
        died = trio.current_time()
        assert a.store.room(room_id).state == "live"  # type: ignore[union-attr]

        again = Browser(b, "P1")
        await again.open(nursery, token=lost.token)
        await again.wait_phase("done")
        assert trio.current_time() - died <= LEASE + LEASE / 3 + 1
        done = again.of("phase")[-1]
        assert done["code"] == "CODE-123" and "servers stopped" in done["note"]
        assert again.texts() == lost.texts()  # shown again before the end

        await trio.sleep(5 * LEASE)  # B keeps its lease: its room carries on
        assert stays.phase() == "chat"
        await chat_once(stays, "still here?")
        nursery.cancel_scope.cancel()

    store = b.store
    room = store.room(room_id)
    assert room is not None and (room.state, room.end_reason) == ("done", "server_lost")
    assert store.participant("P1").outcome == "server_lost"  # type: ignore[union-attr]
    shown = lost.texts()
    assert [m.text for m in store.messages(room_id)][: len(shown)] == shown
    ended = [e for e in store.events(room_id) if e["kind"] == "room_ended"]
    assert [e["data"]["reason"] for e in ended] == ["server_lost"]  # ended once
    [other] = [r for r in store.rooms() if r.id != room_id]
    assert other.state == "live"


async def test_a_process_taken_for_dead_stops_its_rooms(
    fresh_database: str,
    pg_store: Callable[[], PostgresStore],
    tmp_path: Path,
    autojump_clock: object,
) -> None:
    spec = lease_spec(tmp_path, fresh_database, LEASE, turns=5)
    async with trio.open_nursery() as nursery:
        a = await run_server(nursery, spec, pg_store())
        browser = Browser(a, "P1")
        await browser.enter_chat(nursery)
        [room_id] = a._rooms
        assert a.lease is not None
        # A stalls for two leases (as a frozen process would, beating no more): B ends
        # its room. Once A runs again, it finds its lease lost: the room stops without
        # ending twice, and A itself shows its participant the end (B's word about it
        # is kept from A here: a stalled process cannot count on it).
        take = a.relay.take

        async def without_states(message: dict[str, Any]) -> None:
            if "state" not in message:
                await take(message)

        a.relay.take = without_states  # type: ignore[method-assign]
        check = a.lease.check
        a.lease.check = lambda *args: None  # type: ignore[method-assign]
        b = await run_server(nursery, spec, pg_store())
        await trio.sleep(2 * LEASE)
        assert b.store.room(room_id).state == "done"  # type: ignore[union-attr]
        assert browser.phase() == "chat"  # A has not shown it yet
        a.lease.check = check  # type: ignore[method-assign]
        with trio.fail_after(LEASE / 3 + 1):  # A's next beat
            await browser.wait_phase("done")
        await trio.sleep(LEASE)
        assert room_id not in a._rooms
        nursery.cancel_scope.cancel()
    ended = [e for e in b.store.events(room_id) if e["kind"] == "room_ended"]
    assert [e["data"]["reason"] for e in ended] == ["server_lost"]
    assert [e["kind"] for e in b.store.events() if e["kind"] == "lease_lost"] == ["lease_lost"]
    assert browser.of("phase")[-1]["note"] == NOTES["server_lost"]


async def test_kill_9_one_of_two_processes_the_other_ends_its_room(
    fresh_database: str, tmp_path: Path
) -> None:
    spec = lease_spec(tmp_path, fresh_database, 2, turns=5)
    spec.write_text(spec.read_text().replace("[chat]\n", "[chat]\nspeed = 20\n"))
    port_a, port_b = free_port(), free_port()
    first = start_server(spec, port_a)
    second = None
    try:
        client = await WebSocketClient.connect("127.0.0.1", port_a, "/ws/pilot")
        await client.send({"type": "join", "pid": "P1"})
        [joined] = [
            f
            for f in await frames_until(client, lambda f: f["type"] == "phase")
            if f["type"] == "joined"
        ]
        await client.send({"type": "consent"})
        await frames_until(client, lambda f: f.get("phase") == "chat")
        # The second process starts once the room runs in the first.
        second = start_server(spec, port_b)
        await client.send({"type": "send", "text": "hello, anyone?"})
        seen = await frames_until(client, lambda f: f["type"] == "message" and f["from"] == "them")
        first.kill()  # SIGKILL: no cleanup at all
        first.wait(timeout=30)
        killed = time.monotonic()
        await client.aclose()

        client = await WebSocketClient.connect("127.0.0.1", port_b, "/ws/pilot")
        await client.send({"type": "join", "pid": "P1", "token": joined["token"]})
        after = await frames_until(client, lambda f: f.get("phase") == "done")
        waited = time.monotonic() - killed
        await client.aclose()
    finally:
        stop_server(first)
        if second is not None:
            stop_server(second)
    done = after[-1]
    assert done["code"] == "CODE-123" and "servers stopped" in str(done["note"])
    assert waited < 30, f"the room ended {waited:.1f} s after the kill (lease 2 s)"
    shown = [f["text"] for f in seen if f["type"] == "message"]
    assert "hello, anyone?" in shown and len(shown) >= 2
    with psycopg.connect(fresh_database) as db:
        stored = [row[0] for row in db.execute("SELECT text FROM messages ORDER BY seq")]
        [(state, reason)] = list(db.execute("SELECT state, end_reason FROM rooms"))
        [(outcome,)] = list(db.execute("SELECT outcome FROM participants"))
    assert stored[: len(shown)] == shown, "every message the browser got was stored first"
    assert (state, reason, outcome) == ("done", "server_lost", "server_lost")
