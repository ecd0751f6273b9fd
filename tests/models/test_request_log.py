"""The launcher's request log: a line per request, with tokens, never a key or prompt."""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

import trio

from sdtt.models.request_log import RequestLog

SECRET = "sk-local-0123456789abcdef"
PROMPT = "You are Sam. User: [2024-05-01 10:00:00] how was your weekend"


async def reply_app(scope: Any, receive: Any, send: Any) -> None:
    """A tiny OpenAI-like server: reads the request, answers with usage."""
    await receive()
    body = json.dumps({"choices": [], "usage": {"prompt_tokens": 412, "completion_tokens": 9}})
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": body.encode()})


async def call(app: Any, body: bytes) -> list[dict[str, Any]]:
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/v1/chat/completions",
        "headers": [(b"authorization", f"Bearer {SECRET}".encode())],
    }
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent


def test_each_request_gets_one_line_with_status_tokens_and_time_but_no_key() -> None:
    out = io.StringIO()
    sent = trio.run(call, RequestLog(reply_app, out), json.dumps({"prompt": PROMPT}).encode())
    assert [m["type"] for m in sent] == ["http.response.start", "http.response.body"]
    (line,) = out.getvalue().splitlines()
    assert " POST /v1/chat/completions 200 tokens in=412 out=9 " in line
    assert line.endswith("s")
    assert SECRET not in line and "Sam" not in line


def test_prompts_are_written_only_when_asked() -> None:
    out = io.StringIO()
    trio.run(call, RequestLog(reply_app, out, prompts=True), json.dumps({"p": PROMPT}).encode())
    assert "how was your weekend" in out.getvalue()
    assert SECRET not in out.getvalue()


def test_a_failing_request_is_logged_as_500_with_unknown_tokens() -> None:
    async def broken(scope: Any, receive: Any, send: Any) -> None:
        raise RuntimeError("model crashed")

    out = io.StringIO()
    with contextlib.suppress(RuntimeError):
        trio.run(call, RequestLog(broken, out), b"{}")
    assert " 500 tokens in=- out=- " in out.getvalue()
