"""The HTTP policy of ``sdtt serve`` as one ASGI middleware around the whole app.

Every HTTP response (pages, static files, redirects, the router's own 404 and 405, a
500) carries the security headers, the admin pages' stricter policy under ``/admin/``;
a websocket or a POST whose ``Origin`` names another site is refused before any route
sees it. Routes need not remember either.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
"""The headers of every participant page, static file and error."""
ADMIN_HEADERS = {
    **SECURITY_HEADERS,
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; base-uri 'none'; form-action 'self'; "
        "frame-ancestors 'none'"
    ),
}
"""The headers of the admin pages (no script; its one form posts back to itself)."""
ADMIN_PREFIX = "/admin/"
WEBSOCKET_POLICY_VIOLATION = 1008


def headers_for(path: str) -> dict[str, str]:
    """The security headers of a response to ``path``."""
    return ADMIN_HEADERS if path.startswith(ADMIN_PREFIX) else SECURITY_HEADERS


def same_origin(scope: Scope) -> bool:
    """Whether a request may have come from this server's own pages: a browser always
    sends ``Origin`` with a websocket or a POST, so one naming another host is a page of
    another site (a request without it comes from no browser page at all)."""
    headers: dict[bytes, bytes] = dict(scope.get("headers", []))
    origin = headers.get(b"origin")
    if origin is None:
        return True
    return origin.split(b"://", 1)[-1] == headers.get(b"host", b"")


class HttpPolicy:
    """ASGI middleware adding :func:`headers_for` to every HTTP response and refusing
    cross-origin websockets and POSTs (:func:`same_origin`)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Apply the policy to one connection, then hand it to the app."""
        kind = scope["type"]
        if kind == "websocket" and not same_origin(scope):
            await send(
                {"type": "websocket.close", "code": WEBSOCKET_POLICY_VIOLATION, "reason": ""}
            )
            return
        if kind != "http":
            await self.app(scope, receive, send)
            return
        extra = [
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in headers_for(scope["path"]).items()
        ]
        if scope["method"] == "POST" and not same_origin(scope):
            await _refuse(send, extra)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {name for name, _ in extra}
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
                message["headers"] = kept + extra
            await send(message)

        await self.app(scope, receive, send_with_headers)


async def _refuse(send: Send, headers: list[tuple[bytes, bytes]]) -> None:
    body = b"Requests from other sites are refused."
    await send(
        {
            "type": "http.response.start",
            "status": 403,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
