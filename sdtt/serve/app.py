"""The ASGI app of ``sdtt serve`` (Starlette): the participant page, its static files and
the chat websocket.

Pages are plain HTML with no inline script, served with a Content-Security-Policy that
allows scripts, styles and connections from this server only (:mod:`sdtt.serve.policy`
adds it to every response and refuses cross-site websockets and posts). The websocket is
handed to :meth:`StudyServer.attend`; the app itself knows nothing of studies or rooms.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import MutableMapping
from importlib import resources
from typing import Any
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from sdtt.serve.admin import admin_page
from sdtt.serve.policy import HttpPolicy
from sdtt.serve.protocol import dumps
from sdtt.serve.server import StudyServer

ADMIN_COOKIE = "sdtt_admin"
"""Holds the admin token after the first visit (HttpOnly, SameSite=Strict, path
/admin/<study>), so the token leaves the URL."""
STATIC_TYPES = {
    "app.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
}


def _static(name: str) -> str:
    return resources.files("sdtt.serve").joinpath("static", name).read_text(encoding="utf-8")


def build_app(server: StudyServer) -> HttpPolicy:
    """The app serving ``server``'s study."""
    study = server.study.name

    async def page(request: Request) -> Response:
        if request.path_params["study"] != study:
            return PlainTextResponse("No such study.", status_code=404)
        return HTMLResponse(_static("index.html"))

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC_TYPES:
            return PlainTextResponse("Not found.", status_code=404)
        return Response(_static(name), media_type=STATIC_TYPES[name])

    async def chat(websocket: WebSocket) -> None:
        if websocket.path_params["study"] != study:
            await websocket.close(code=1008)
            return
        await websocket.accept()
        closed = False

        async def receive() -> str | bytes | None:
            nonlocal closed
            if closed:
                return None
            message: MutableMapping[str, Any] = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                closed = True
                return None
            text = message.get("text")
            return text if text is not None else message.get("bytes")

        async def send(frames: dict[str, Any] | list[dict[str, Any]]) -> None:
            await websocket.send_text(dumps(frames))

        try:
            await server.attend(receive, send)
        except WebSocketDisconnect:
            return
        if not closed:
            with contextlib.suppress(RuntimeError):
                await websocket.close()

    def authorised(request: Request, token: str | None) -> bool:
        return (
            request.path_params["study"] == study
            and token is not None
            and secrets.compare_digest(token, server.admin_token)
        )

    async def admin(request: Request) -> Response:
        token = request.query_params.get("token")
        if token is not None:
            # The link with the token: the token moves into a cookie and out of the
            # address bar, the history and the refreshes.
            if not authorised(request, token):
                return PlainTextResponse("Wrong or missing admin token.", 403)
            back = RedirectResponse(f"/admin/{study}", status_code=303)
            back.set_cookie(
                ADMIN_COOKIE,
                token,
                max_age=12 * 3600,
                path=f"/admin/{study}",
                secure=request.url.scheme == "https",
                httponly=True,
                samesite="strict",
            )
            return back
        if not authorised(request, request.cookies.get(ADMIN_COOKIE)):
            return PlainTextResponse("Wrong or missing admin token.", 403)
        return HTMLResponse(admin_page(study, server.overview()))

    async def end_room(request: Request) -> Response:
        body = await request.body()
        form = parse_qs(body[:4096].decode("utf-8", "replace"))
        token = form.get("token", [request.cookies.get(ADMIN_COOKIE)])[0]
        if not authorised(request, token):
            return PlainTextResponse("Wrong or missing admin token.", 403)
        room = form.get("room", [""])[0]
        if not server.end_room(room):
            return PlainTextResponse("That room is not live.", 404)
        return RedirectResponse(f"/admin/{study}", status_code=303)

    return HttpPolicy(
        Starlette(
            routes=[
                Route("/admin/{study}", admin),
                Route("/admin/{study}/end", end_room, methods=["POST"]),
                Route("/s/{study}", page),
                Route("/static/{name}", static),
                WebSocketRoute("/ws/{study}", chat),
            ]
        )
    )
