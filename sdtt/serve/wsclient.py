"""A small websocket client on trio (wsproto), for scripted participants: the load
benchmark and the crash test play studies through it over real sockets."""

from __future__ import annotations

import json
from typing import Any

import trio
from wsproto import ConnectionType, WSConnection
from wsproto.events import (
    AcceptConnection,
    CloseConnection,
    Event,
    Message,
    Ping,
    RejectConnection,
    Request,
    TextMessage,
)

from sdtt.serve.protocol import frames_of

READ_SIZE = 65536


class WebSocketClient:
    """One websocket connection; frames are JSON objects. One task may receive while
    others send (a participant answers after a pause while frames keep arriving)."""

    def __init__(self, stream: trio.SocketStream, ws: WSConnection) -> None:
        self._stream = stream
        self._ws = ws
        self._pending: list[dict[str, Any]] = []
        self._text = ""
        self.closed = False
        self._sending = trio.Lock()  # (a stream takes one send_all at a time)

    @classmethod
    async def connect(cls, host: str, port: int, path: str) -> WebSocketClient:
        """Open ``ws://host:port/path``."""
        stream = await trio.open_tcp_stream(host, port)
        ws = WSConnection(ConnectionType.CLIENT)
        await stream.send_all(
            ws.send(
                Request(
                    host=f"{host}:{port}",
                    target=path,
                    extra_headers=[(b"origin", f"http://{host}:{port}".encode())],
                )
            )
        )
        client = cls(stream, ws)
        while True:
            for event in await client._events():
                if isinstance(event, AcceptConnection):
                    return client
                if isinstance(event, RejectConnection):
                    raise ConnectionError(f"websocket refused ({event.status_code})")

    async def _events(self) -> list[Any]:
        data = await self._stream.receive_some(READ_SIZE)
        if not data:
            self.closed = True
            return []
        self._ws.receive_data(data)
        return list(self._ws.events())

    async def send(self, frame: dict[str, Any]) -> None:
        """Send one frame."""
        await self._send(Message(data=json.dumps(frame)))

    async def receive(self) -> dict[str, Any] | None:
        """The next frame, or None once the connection closed."""
        while not self._pending:
            if self.closed:
                return None
            try:
                events = await self._events()
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                self.closed = True
                return None
            for event in events:
                if isinstance(event, TextMessage):
                    self._text += event.data
                    if event.message_finished:
                        self._pending += frames_of(self._text)
                        self._text = ""
                elif isinstance(event, Ping):
                    await self._send(event.response())
                elif isinstance(event, CloseConnection):
                    self.closed = True
        return self._pending.pop(0)

    async def _send(self, event: Event) -> None:
        async with self._sending:
            await self._stream.send_all(self._ws.send(event))

    async def aclose(self) -> None:
        """Close the socket."""
        await self._stream.aclose()
