"""The ASGI app, driven in-process: pages, headers, the websocket and its origin check."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import trio

from sdtt.serve.app import build_app
from sdtt.serve.protocol import frames_of
from tests.serve.helpers import make_server, write_spec

pytestmark = pytest.mark.trio


async def http_get(
    app: Any, path: str, query: bytes = b"", cookie: str | None = None
) -> tuple[int, dict[str, str], str]:
    """Status, headers and body of a GET through the ASGI app (with a Cookie header)."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query,
        "headers": [(b"host", b"study.test")] + ([(b"cookie", cookie.encode())] if cookie else []),
        "server": ("study.test", 80),
        "client": ("127.0.0.1", 5000),
        "root_path": "",
    }
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    start = sent[0]
    headers = {k.decode(): v.decode() for k, v in start["headers"]}
    body = b"".join(m.get("body", b"") for m in sent[1:]).decode()
    return start["status"], headers, body


async def websocket(app: Any, frames: list[str], origin: str | None) -> list[dict[str, Any]]:
    """What the app sends on a websocket that sends ``frames`` and then closes."""
    headers = [(b"host", b"study.test")]
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    scope = {
        "type": "websocket",
        "asgi": {"version": "3.0"},
        "scheme": "ws",
        "path": "/ws/pilot",
        "raw_path": b"/ws/pilot",
        "query_string": b"",
        "headers": headers,
        "server": ("study.test", 80),
        "client": ("127.0.0.1", 5000),
        "root_path": "",
        "subprotocols": [],
    }
    incoming = [{"type": "websocket.connect"}] + [
        {"type": "websocket.receive", "text": f} for f in frames
    ]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if incoming:
            return incoming.pop(0)
        await trio.sleep(5)
        return {"type": "websocket.disconnect", "code": 1000}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent


async def test_pages_carry_a_strict_policy_and_no_inline_script(tmp_path: Path) -> None:
    app = build_app(make_server(write_spec(tmp_path)))
    status, headers, body = await http_get(app, "/s/pilot", b"PROLIFIC_PID=P1")
    assert status == 200
    policy = headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert "default-src 'none'" in policy
    assert re.findall(r"<script[^>]*>(.*?)</script>", body, re.S) == [""]
    assert not re.search(r"\son[a-z]+=", body), "no inline event handlers"
    assert "http" not in body.replace('href="/static', ""), "nothing loaded from elsewhere"
    status, headers, script = await http_get(app, "/static/app.js")
    assert status == 200 and headers["content-type"].startswith("text/javascript")
    assert "innerHTML" not in script and "insertAdjacentHTML" not in script
    assert "textContent" in script
    assert (await http_get(app, "/s/other"))[0] == 404
    assert (await http_get(app, "/static/../spec.py"))[0] == 404


async def test_the_page_is_made_for_phones() -> None:
    page = resources.files("sdtt.serve").joinpath("static", "index.html").read_text()
    assert 'name="viewport"' in page
    style = resources.files("sdtt.serve").joinpath("static", "style.css").read_text()
    assert "@media (max-width" in style


async def test_websocket_joins_through_the_app(tmp_path: Path, autojump_clock: object) -> None:
    server = make_server(write_spec(tmp_path))
    app = build_app(server)
    join = json.dumps({"type": "join", "pid": "P1"})
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        sent = await websocket(app, [join], origin="http://study.test")
        refused = await websocket(app, [join], origin="https://evil.test")
        nursery.cancel_scope.cancel()
    assert sent[0]["type"] == "websocket.accept"
    frames = [f for m in sent if m["type"] == "websocket.send" for f in frames_of(m["text"])]
    assert [f["type"] for f in frames[:2]] == ["joined", "phase"]
    assert frames[1]["phase"] == "consent"
    assert refused == [{"type": "websocket.close", "code": 1008, "reason": ""}]


async def request(
    app: Any, method: str, path: str, *, origin: str | None = None, body: bytes = b""
) -> tuple[int, dict[str, str]]:
    """Status and headers of any request through the ASGI app."""
    headers = [(b"host", b"study.test")]
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": headers,
        "server": ("study.test", 80),
        "client": ("127.0.0.1", 5000),
        "root_path": "",
    }
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent[0]["status"], {k.decode(): v.decode() for k, v in sent[0]["headers"]}


PAGE_POLICY = "default-src 'none'; script-src 'self'"
ADMIN_POLICY = "default-src 'none'; style-src 'self'; base-uri 'none'; form-action 'self'"


@pytest.mark.parametrize(
    ("method", "path", "status", "policy"),
    [
        ("GET", "/s/pilot", 200, PAGE_POLICY),
        ("GET", "/s/other", 404, PAGE_POLICY),
        ("GET", "/static/app.js", 200, PAGE_POLICY),
        ("GET", "/static/style.css", 200, PAGE_POLICY),
        ("GET", "/static/nothing.js", 404, PAGE_POLICY),
        ("GET", "/no/such/route", 404, PAGE_POLICY),
        ("POST", "/s/pilot", 405, PAGE_POLICY),
        ("GET", "/admin/pilot", 403, ADMIN_POLICY),
        ("GET", "/admin/pilot?token=wrong", 403, ADMIN_POLICY),
        ("POST", "/admin/pilot/end", 403, ADMIN_POLICY),
        ("GET", "/admin/pilot/end", 405, ADMIN_POLICY),
    ],
)
async def test_every_response_carries_the_security_headers(
    tmp_path: Path, method: str, path: str, status: int, policy: str
) -> None:
    app = build_app(make_server(write_spec(tmp_path)))
    path, _, query = path.partition("?")
    if query:
        got, headers, _ = await http_get(app, path, query.encode())
    else:
        got, headers = await request(app, method, path)
    assert got == status
    assert headers["content-security-policy"].startswith(policy)
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "no-referrer"
    assert headers["cache-control"] == "no-store"


async def test_a_post_from_another_site_is_refused_even_with_the_token(tmp_path: Path) -> None:
    server = make_server(write_spec(tmp_path))
    app = build_app(server)
    form = f"token={server.admin_token}&room=nothing".encode()
    status, headers = await request(
        app, "POST", "/admin/pilot/end", origin="https://evil.test", body=form
    )
    assert status == 403 and "form-action 'self'" in headers["content-security-policy"]
    # The same form from the admin page itself reaches the route (no such live room).
    status, _ = await request(
        app, "POST", "/admin/pilot/end", origin="http://study.test", body=form
    )
    assert status == 404
