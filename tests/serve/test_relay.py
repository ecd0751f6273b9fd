"""News from a study's other processes: a room's news is taken in order, and news that
waits (a message for a bot whose session is still opening) holds up no other room's."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
import trio

from sdtt.serve.relay import Relay

pytestmark = pytest.mark.trio


class SlowRoom:
    """A room whose bot takes its messages only once ``opened`` is set."""

    def __init__(self) -> None:
        self.opened = trio.Event()
        self.posted: list[str] = []

    def chat_of(self, pid: str, chat: int) -> Any:
        return self  # (one chat; never done)

    done = False

    async def receive(self, pid: str, chat: object, role: str, text: str) -> None:
        await self.opened.wait()
        self.posted.append(text)


class Browsers:
    """The participants connected here, and the frames delivered to them."""

    def __init__(self) -> None:
        self.frames: list[dict[str, Any]] = []
        self.got = trio.Event()

    def __contains__(self, pid: object) -> bool:
        return pid == "P2"

    def deliver(self, pid: str, frame: dict[str, Any]) -> None:
        self.frames.append(frame)
        self.got.set()


async def test_news_waiting_for_one_room_holds_up_no_other() -> None:
    slow, browsers = SlowRoom(), Browsers()
    relay = Relay(lambda: None, {"r1": slow}, browsers)  # type: ignore[dict-item,arg-type]
    news = [
        {"room": "r1", "pid": "P1", "role": "interrogator", "text": "first"},
        {"room": "r1", "pid": "P1", "role": "interrogator", "text": "second"},
        {"to": "P2", "frame": {"type": "message", "id": 1}},
    ]

    def listen(
        deliver: Callable[[dict[str, Any]], None], stop: threading.Event, ready: Callable[[], None]
    ) -> None:
        ready()
        for message in news:
            deliver(message)
        stop.wait()

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            await nursery.start(relay.listen, listen)
            await browsers.got.wait()  # delivered while room r1's bot is still opening
            assert slow.posted == []
            slow.opened.set()
            while len(slow.posted) < 2:
                await trio.sleep(0.01)
            nursery.cancel_scope.cancel()
    assert browsers.frames == [{"type": "message", "id": 1}]
    assert slow.posted == ["first", "second"]
