"""A scripted HTTP server on 127.0.0.1, run in a background thread of the test process.

It stands in for a provider's API so the real SDK code paths (request building, status
handling, body parsing) run offline. Replies come first from a queue of scripted
:class:`ScriptedReply` items (status codes, bodies, headers, delays), then from a default
responder. Every request is recorded. The server also counts requests in flight, so a
benchmark or test can check a concurrency limit.

    with FakeHTTPServer(responder) as server:
        server.enqueue(ScriptedReply(status=500, body={"error": "boom"}))
        ...  # point a client at server.url
"""

from __future__ import annotations

import json
import socket
import threading
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self


@dataclass(frozen=True)
class ScriptedReply:
    """One HTTP answer: status, body (JSON-encoded unless str/bytes), headers, delay."""

    status: int = 200
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0
    """Seconds to wait before answering (on top of the server's latency)."""
    cut_after: int | None = None
    """Send only this many bytes of the body (announcing all of it), then hang up."""

    def encoded_body(self) -> tuple[bytes, str]:
        """The body as bytes and its content type."""
        if isinstance(self.body, bytes):
            return self.body, "application/octet-stream"
        if isinstance(self.body, str):
            return self.body.encode("utf-8"), "text/plain; charset=utf-8"
        if self.body is None:
            return b"", "text/plain"
        return json.dumps(self.body).encode("utf-8"), "application/json"


@dataclass(frozen=True)
class RecordedRequest:
    """A request the server received."""

    method: str
    path: str
    headers: Mapping[str, str]
    """Header names lower-cased."""
    body: bytes

    def json(self) -> Any:
        """The body decoded as JSON."""
        return json.loads(self.body.decode("utf-8"))


Responder = Callable[[RecordedRequest], ScriptedReply]


class _Server(ThreadingHTTPServer):
    # The standard library's 5 would drop the connections of 20 clients starting at
    # once, which then retry a second later: a stall no real API shows.
    request_queue_size = 128


class FakeHTTPServer:
    """A threaded HTTP server on a free port of 127.0.0.1 that answers from a script."""

    def __init__(self, responder: Responder, *, latency: float = 0.0) -> None:
        self.responder = responder
        self.latency = latency
        """Seconds every request waits before it is answered."""
        self.requests: list[RecordedRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._script: deque[ScriptedReply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` of the running server."""
        if self._server is None:
            raise RuntimeError("the fake server is not running; use it as a context manager")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def enqueue(self, *replies: ScriptedReply) -> None:
        """Answer the next requests with these replies, in order, before the responder."""
        with self._lock:
            self._script.extend(replies)

    def start(self) -> None:
        """Bind a free port and serve in a daemon thread."""
        handler = _make_handler(self)
        self._server = _Server(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop serving; requests still waiting out a delay are abandoned."""
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _next_reply(self, request: RecordedRequest) -> ScriptedReply:
        with self._lock:
            self.requests.append(request)
            if self._script:
                return self._script.popleft()
        return self.responder(request)

    def _enter(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _wait(self, seconds: float) -> bool:
        """Sleep unless the server stops first; True when it is still running."""
        if seconds > 0:
            return not self._stopping.wait(seconds)
        return not self._stopping.is_set()


def _make_handler(server: FakeHTTPServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            # Headers and body go out in two writes; with Nagle on, the body would wait
            # for the client's delayed ACK (~40 ms a call, which no real API adds).
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def do_GET(self) -> None:
            self._answer()

        def do_POST(self) -> None:
            self._answer()

        def do_PATCH(self) -> None:
            self._answer()

        def _answer(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            request = RecordedRequest(
                method=self.command,
                path=self.path,
                headers={name.lower(): value for name, value in self.headers.items()},
                body=body,
            )
            server._enter()
            try:
                reply = server._next_reply(request)
                if not server._wait(server.latency + reply.delay):
                    self.close_connection = True
                    return
                payload, content_type = reply.encoded_body()
                self.send_response(reply.status)
                if not any(name.lower() == "content-type" for name in reply.headers):
                    self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(payload)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                if reply.cut_after is not None:
                    self.wfile.write(payload[: reply.cut_after])
                    self.close_connection = True
                    return
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                # The client gave up (a timeout test): nothing to answer to.
                self.close_connection = True
            finally:
                server._leave()

        def log_message(self, format: str, *args: Any) -> None:
            """Keep test output quiet."""

    return Handler
