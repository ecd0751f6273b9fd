"""A study spec, a server on trio's virtual clock, and fake browsers that speak the
websocket protocol to :meth:`StudyServer.attend` through memory channels."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import trio
import trio.testing

from sdtt.serve.protocol import dumps, frames_of
from sdtt.serve.server import StudyServer
from sdtt.serve.spec import read_study
from sdtt.serve.store import SqliteStore, StudyStore

START = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
PERSONA = "chitchat-32b20fa3"
MIN_INTERVAL = 0.5
"""Seconds of the study's clock a participant leaves between messages (the spec's
``min_interval``)."""

SPEC = """
[study]
name = "pilot"
title = "Chat study"
turns = {turns}
human_witness_share = {share}
consent = "You agree to chat for about five minutes."
instructions = "Chat, then say whether your partner is a person."
completion_code = "CODE-123"
completion_url = "https://example.org/done?cc=CODE-123"
belief_slider = true

[lobby]
timeout = {timeout}
on_timeout = "{on_timeout}"
timeout_sd = 0

[chat]
t1 = 2
min_interval = {min_interval}
max_chars = 200

[conditions]
models = [{models}]
personas = ["{persona}"]
delays = ["paper", "jones-bergen"]
"""


def write_spec(
    folder: Path,
    *,
    turns: int = 2,
    share: float = 0.0,
    timeout: float = 60,
    on_timeout: str = "bot",
    models: tuple[str, ...] = ("mock/chatty",),
) -> Path:
    """A study spec file in ``folder``."""
    path = folder / "study.toml"
    path.write_text(
        SPEC.format(
            turns=turns,
            share=share,
            timeout=timeout,
            on_timeout=on_timeout,
            models=", ".join(f'"{m}"' for m in models),
            persona=PERSONA,
            min_interval=MIN_INTERVAL,
        ),
        encoding="utf-8",
    )
    return path


def make_server(spec: Path, **kwargs: Any) -> StudyServer:
    """A server for ``spec`` whose times start at :data:`START`."""
    study = read_study(spec)
    return StudyServer(
        study, SqliteStore(study.store_path), started=START, virtual_clock=True, **kwargs
    )


async def run_server(nursery: trio.Nursery, spec: Path, store: StudyStore) -> StudyServer:
    """A server for ``spec`` on ``store``, started in ``nursery``. Its wall time is
    :data:`START` plus trio's clock, like every server started so in the test, however
    much later it starts: processes sharing a database compare their heartbeats.

    A PostgreSQL server's start waits for a real thread to listen to the database; an
    autojumping clock is held still meanwhile, so no chat or lease runs out because a
    loaded machine was slow to connect."""
    server = StudyServer(
        read_study(spec),
        store,
        started=START + timedelta(seconds=trio.current_time()),
        virtual_clock=True,
    )
    clock = trio.lowlevel.current_clock()
    if not isinstance(clock, trio.testing.MockClock):
        await nursery.start(server.run)
        return server
    threshold, clock.autojump_threshold = clock.autojump_threshold, math.inf
    try:
        await nursery.start(server.run)
    finally:
        clock.autojump_threshold = threshold
    return server


class Browser:
    """One participant's page: sends frames, keeps every frame the server sent."""

    def __init__(self, server: StudyServer, pid: str, **link: str | None) -> None:
        self.server = server
        self.pid = pid
        self.link = link
        self.frames: list[dict[str, Any]] = []
        self.raw: list[str] = []
        """Each frame's JSON text."""
        self.messages: list[str] = []
        """Each websocket message's text (a frame, or a list of frames sent together)."""
        self.token: str | None = None
        self._changed = trio.Event()
        self._to_server: trio.MemorySendChannel[str | bytes] | None = None
        self.gone = trio.Event()
        self.on_frame: Callable[[dict[str, Any]], None] | None = None
        self.slow: Callable[[list[dict[str, Any]]], float] | None = None
        """Seconds a websocket message of these frames takes to reach the page (a slow
        network or a starved machine; the server's send waits meanwhile)."""

    async def open(self, nursery: trio.Nursery, *, token: str | None = None) -> None:
        """Connect and send the join frame."""
        send, receive = trio.open_memory_channel[str | bytes](100)
        self._to_server = send
        self.gone = trio.Event()

        async def next_frame() -> str | bytes | None:
            try:
                return await receive.receive()
            except (trio.EndOfChannel, trio.ClosedResourceError):
                return None

        async def deliver(sent: dict[str, Any] | list[dict[str, Any]]) -> None:
            # Through JSON, as the page reads it: a message is a frame or a list of them.
            message = dumps(sent)
            if self.slow is not None:
                await trio.sleep(self.slow(frames_of(message)))
            self.messages.append(message)
            for frame in frames_of(message):
                self.raw.append(dumps(frame))
                if self.on_frame is not None:
                    self.on_frame(frame)
                if frame["type"] == "joined":
                    self.token = frame["token"]
                self.frames.append(frame)
            changed, self._changed = self._changed, trio.Event()
            changed.set()

        async def attend() -> None:
            await self.server.attend(next_frame, deliver)
            self.gone.set()

        nursery.start_soon(attend)
        join = {"type": "join", "pid": self.pid, "token": token, **self.link}
        await self.say(join)

    async def enter_chat(self, nursery: trio.Nursery) -> None:
        """Open the page, consent, and wait until the chat shows (the lobby matched)."""
        await self.open(nursery)
        await self.say({"type": "consent"})
        await self.wait_phase("chat")

    async def say(self, frame: dict[str, Any] | str | bytes) -> None:
        """Send a frame (a dict as JSON; text or bytes as they are)."""
        assert self._to_server is not None
        raw = json.dumps(frame) if isinstance(frame, dict) else frame
        await self._to_server.send(raw)

    def game(self) -> str | None:
        """The market game the page shows now (as the page keeps it: named by the last
        phase or market frame that named one)."""
        named = [f["game"] for f in self.frames if f["type"] in ("phase", "market") and "game" in f]
        return named[-1] if named else None

    async def play(self, frame: dict[str, Any]) -> None:
        """Send a market frame (a question, answer or trade) for the game shown, as the
        page does."""
        await self.say({**frame, "game": self.game()})

    async def close(self) -> None:
        """Drop the connection, as a closed tab would."""
        assert self._to_server is not None
        await self._to_server.aclose()
        await self.gone.wait()

    def of(self, kind: str) -> list[dict[str, Any]]:
        """Frames of one type."""
        return [f for f in self.frames if f["type"] == kind]

    def phase(self) -> str | None:
        """The last phase shown."""
        phases = self.of("phase")
        return phases[-1]["phase"] if phases else None

    def texts(self, side: str | None = None) -> list[str]:
        """Chat texts shown in the current room, de-duplicated by id (as the page does)."""
        seen: dict[int, dict[str, Any]] = {}
        for f in self.frames:
            if f["type"] == "history":
                seen = {}  # a room's whole history: the page starts its chats afresh
                items = f["messages"]
            else:
                items = [f] if f["type"] == "message" else []
            for m in items:
                seen.setdefault(m["id"], m)
        return [m["text"] for _, m in sorted(seen.items()) if side is None or m["from"] == side]

    async def wait(self, predicate: Callable[[], bool], timeout: float = 3600) -> None:
        """Wait (virtual time) until ``predicate`` holds."""
        with trio.fail_after(timeout):
            while not predicate():
                await self._changed.wait()

    async def wait_phase(self, phase: str) -> None:
        """Wait until the page shows ``phase``."""
        await self.wait(lambda: self.phase() == phase)


async def person_room(server: StudyServer, nursery: trio.Nursery) -> tuple[Browser, Browser]:
    """J1 and W1 open the study and consent; once J1's chat is open, their browsers (in a
    study whose witnesses are people, J1 is the interrogator and W1 the witness)."""
    judge, witness = Browser(server, "J1"), Browser(server, "W1")
    for browser in (judge, witness):
        await browser.open(nursery)
        await browser.say({"type": "consent"})
    await judge.wait_phase("chat")
    return judge, witness
