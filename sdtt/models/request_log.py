"""A request log for the llama-cpp-python server launcher.

llama-cpp-python's server logs nothing per request, so when sdtt says "check the server's
log" there is nothing to read. :class:`RequestLog` wraps any ASGI app and writes one line
per HTTP request once its response has been sent: the time, method, path, status, the
tokens the server reported in the body's ``usage`` (``-`` when it reported none, e.g. a
streamed reply) and the seconds it took. Headers are never written, so neither is a key;
request bodies (the prompts) only when ``prompts=True``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, TextIO

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

MAX_LOGGED_BODY = 1 << 20
"""Bytes of a response body kept to read its ``usage`` (replies are far smaller)."""


class RequestLog:
    """ASGI middleware writing one line per HTTP request to ``out``."""

    def __init__(self, app: App, out: TextIO, *, prompts: bool = False) -> None:
        self.app = app
        self.out = out
        self.prompts = prompts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        started = time.monotonic()
        status = 0
        body = bytearray()
        sent = bytearray()

        async def receiving() -> Message:
            message = await receive()
            if self.prompts and message.get("type") == "http.request":
                sent.extend(message.get("body", b""))
            return message

        async def sending(message: Message) -> None:
            nonlocal status
            if message.get("type") == "http.response.start":
                status = int(message.get("status", 0))
            elif message.get("type") == "http.response.body" and len(body) < MAX_LOGGED_BODY:
                body.extend(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receiving, sending)
        finally:
            line = request_line(scope, status or 500, bytes(body), time.monotonic() - started)
            if self.prompts and sent:
                line += " request=" + json.dumps(sent.decode("utf-8", errors="replace"))
            print(line, file=self.out, flush=True)


def request_line(scope: Scope, status: int, body: bytes, seconds: float) -> str:
    """One log line: when, method, path, status, tokens in/out and seconds."""
    tokens_in, tokens_out = reported_tokens(body)
    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    method = scope.get("method", "?")
    path = scope.get("path", "?")
    return f"{stamp} {method} {path} {status} tokens in={tokens_in} out={tokens_out} {seconds:.2f}s"


def reported_tokens(body: bytes) -> tuple[str, str]:
    """The prompt and completion tokens of a JSON reply's ``usage``, ``-`` where absent."""
    try:
        usage = json.loads(body).get("usage") or {}
    except (ValueError, AttributeError):
        return "-", "-"
    if not isinstance(usage, dict):
        return "-", "-"

    def count(*keys: str) -> str:
        for key in keys:
            value = usage.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return str(value)
        return "-"

    return count("prompt_tokens", "input_tokens"), count("completion_tokens", "output_tokens")
