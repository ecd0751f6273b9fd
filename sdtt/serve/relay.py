"""What other processes of a study publish on a shared store, taken here: someone
entered the lobby, a room to end, a participant whose browser is connected here to be
shown their state or sent a frame, and a message or keystroke for a room that runs here.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import trio

from sdtt.serve.connections import Connections
from sdtt.serve.room import LiveRoom


class Relay:
    """Takes what other processes publish and hands it on in this one."""

    def __init__(
        self,
        wake_lobby: Callable[[], None],
        rooms: Mapping[str, LiveRoom],
        connections: Connections,
    ) -> None:
        self.wake_lobby = wake_lobby
        self.rooms = rooms
        """The live rooms this process runs, by id."""
        self.connections = connections

    async def listen(
        self,
        listen: Callable[..., None],
        *,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Take what other processes of the study publish (a thread reads the database).

        Started once the thread listens: a message published for this process before
        then (a partner's room opening, a chat ended elsewhere) would be lost for good,
        and its participant left waiting on a page that never changes."""
        inbox_send, inbox_recv = trio.open_memory_channel[dict[str, Any]](math.inf)
        stop = threading.Event()
        token = trio.lowlevel.current_trio_token()
        listening = trio.Event()

        def deliver(message: dict[str, Any]) -> None:
            # Queued without waiting for the loop: waiting cost the thread a turn of the
            # GIL per message, and under load news piled up for seconds behind it.
            token.run_sync_soon(inbox_send.send_nowait, message)

        def ready() -> None:
            trio.from_thread.run_sync(listening.set, trio_token=token)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(
                partial(
                    trio.to_thread.run_sync, listen, deliver, stop, ready, abandon_on_cancel=True
                )
            )
            try:
                await listening.wait()
                task_status.started()
                async for message in inbox_recv:
                    await self.take(message)
            finally:
                stop.set()

    async def take(self, message: dict[str, Any]) -> None:
        """Act on one published message, if it concerns this process."""
        if message.get("lobby"):
            self.wake_lobby()
        elif "end" in message and message["end"] in self.rooms:
            self.rooms[message["end"]].end(message.get("reason", "ended_by_admin"))
        elif "state" in message and message["state"] in self.connections:
            self.connections.send_state(message["state"])
        elif "to" in message and message["to"] in self.connections:
            self.connections.deliver(message["to"], message["frame"])
        elif "room" in message and message["room"] in self.rooms:
            live = self.rooms[message["room"]]
            chat = live.chat_of(message["pid"], message.get("chat", 1))
            if chat is None or chat.done:
                return
            if message.get("text") is not None:
                await live.post(chat, message["role"], message["text"])
            else:
                live.keystroke(chat, message["role"])
