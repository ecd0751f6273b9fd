"""kill -9 in mid-game: everything the participant saw is in the store, and after a
restart the participant reconnects to a room ended with a recorded reason (and is paid)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import trio

from sdtt.serve.wsclient import WebSocketClient
from tests.serve.helpers import write_spec
from tests.serve.process import free_port, start_server, stop_server

pytestmark = pytest.mark.trio


async def frames_until(client: WebSocketClient, done: object) -> list[dict[str, object]]:
    seen: list[dict[str, object]] = []
    with trio.fail_after(60):
        while True:
            frame = await client.receive()
            assert frame is not None, "the server closed the connection"
            seen.append(frame)
            if callable(done) and done(frame):
                return seen


async def test_kill_9_mid_game_loses_nothing_acknowledged(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, turns=5)
    spec.write_text(spec.read_text().replace("[chat]\n", "[chat]\nspeed = 20\n"))
    port = free_port()
    server = start_server(spec, port)
    try:
        client = await WebSocketClient.connect("127.0.0.1", port, "/ws/pilot")
        await client.send({"type": "join", "pid": "P1"})
        [joined] = [
            f
            for f in await frames_until(client, lambda f: f["type"] == "phase")
            if f["type"] == "joined"
        ]
        await client.send({"type": "consent"})
        await frames_until(client, lambda f: f.get("phase") == "chat")
        await client.send({"type": "send", "text": "hello, anyone?"})
        seen = await frames_until(client, lambda f: f["type"] == "message" and f["from"] == "them")
        server.kill()  # SIGKILL: no cleanup at all
        server.wait(timeout=30)
        await client.aclose()
    finally:
        stop_server(server)

    shown = [f["text"] for f in seen if f["type"] == "message"]
    assert "hello, anyone?" in shown and len(shown) >= 2
    with sqlite3.connect(tmp_path / "pilot.sqlite3") as db:
        stored = [row[0] for row in db.execute("SELECT text FROM messages ORDER BY seq")]
    assert stored[: len(shown)] == shown, "every message the browser got was stored first"

    server = start_server(spec, port)
    try:
        client = await WebSocketClient.connect("127.0.0.1", port, "/ws/pilot")
        await client.send({"type": "join", "pid": "P1", "token": joined["token"]})
        after = await frames_until(client, lambda f: f.get("phase") == "done")
        await client.aclose()
    finally:
        stop_server(server)
    done = after[-1]
    assert done["code"] == "CODE-123" and "server restart" in str(done["note"])
    with sqlite3.connect(tmp_path / "pilot.sqlite3") as db:
        [(state, reason)] = list(db.execute("SELECT state, end_reason FROM rooms"))
        [(outcome,)] = list(db.execute("SELECT outcome FROM participants"))
    assert (state, reason, outcome) == ("done", "restart", "restart")
