"""Hypercorn as ``sdtt serve`` configures it, on localhost under a study clock that runs 20
times faster: a browser connection that is slow to send its first request (as on a loaded
machine) must still be answered, not closed after a twentieth of Hypercorn's keep-alive."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
from trio.testing import MockClock, wait_all_tasks_blocked

from sdtt.commands.serve import hypercorn_config
from sdtt.serve.app import build_app
from tests.serve.helpers import make_server, write_spec

pytestmark = pytest.mark.trio

SPEED = 20
WEBSOCKET = (
    "GET /ws/pilot HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)
SCRIPT = "GET /static/app.js HTTP/1.1\r\nHost: {host}\r\n\r\n"


@pytest.mark.parametrize(
    ("request_text", "answer"),
    [(WEBSOCKET, b"HTTP/1.1 101 "), (SCRIPT, b"HTTP/1.1 200 ")],
    ids=["websocket", "script"],
)
async def test_a_request_sent_a_real_second_after_connecting_is_answered(
    tmp_path: Path, mock_clock: MockClock, request_text: str, answer: bytes
) -> None:
    from hypercorn.trio import serve

    server = make_server(write_spec(tmp_path))
    config = hypercorn_config("127.0.0.1", 0, SPEED)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        binds = await nursery.start(serve, build_app(server), config)
        host = binds[0].removeprefix("http://")
        name, port = host.rsplit(":", 1)
        stream = await trio.open_tcp_stream(name, int(port))
        await wait_all_tasks_blocked(0.01)  # accepted: Hypercorn's idle timer runs
        mock_clock.jump(SPEED * 1.0)  # one real second at the study's speed
        await wait_all_tasks_blocked(0.01)
        try:
            await stream.send_all(request_text.format(host=host).encode())
            received = await stream.receive_some(200)
        except trio.BrokenResourceError:
            received = b""
        await stream.aclose()
        nursery.cancel_scope.cancel()
    assert received.startswith(answer), received
