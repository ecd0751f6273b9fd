"""What other processes of a study publish on a shared store, taken here: someone
entered the lobby, a room to end, a participant whose browser is connected here to be
shown their state or sent a frame, and a message or keystroke for a room that runs here
(or, for a market game that runs here, a bettor's trade or a page that asks for the game).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import trio

from sdtt.beliefs.market import TradeRefused
from sdtt.serve.connections import Connections
from sdtt.serve.market_room import MarketRoom
from sdtt.serve.protocol import refusal
from sdtt.serve.room import LiveRoom

BATCH = 100
"""Published messages taken at most in one go (the other rooms wait meanwhile)."""


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
        self._lanes: dict[str, trio.MemorySendChannel[dict[str, Any]]] = {}
        """The rooms with news being taken, each one's queue (see :meth:`_dispatch`)."""

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
                    await self._take_or_dispatch(nursery, message)
                    # Then what came meanwhile, up to a batch, before the other tasks run
                    # again: one message a pass of the scheduler fell seconds behind when
                    # a thousand rooms' news came at once (a partner's messages among it).
                    for _ in range(BATCH - 1):
                        try:
                            message = inbox_recv.receive_nowait()
                        except trio.WouldBlock:
                            break
                        await self._take_or_dispatch(nursery, message)
            finally:
                stop.set()

    async def _take_or_dispatch(self, nursery: trio.Nursery, message: dict[str, Any]) -> None:
        if not self._dispatch(nursery, message):
            await self.take(message)  # (it does not wait: taken in order)

    def _dispatch(self, nursery: trio.Nursery, message: dict[str, Any]) -> bool:
        """Hand news of a room to the room's lane: a room's news is taken in order, but
        a message that waits (for a bot whose session is still opening) holds up only
        its own room's, not every room's. False for other news, and news of rooms that
        do not run here."""
        room = message.get("room", message.get("end"))
        if not isinstance(room, str) or room not in self.rooms:
            return False  # (nothing to do here)
        lane = self._lanes.get(room)
        if lane is None:
            lane, queued = trio.open_memory_channel[dict[str, Any]](math.inf)
            self._lanes[room] = lane
            nursery.start_soon(self._drain, room, queued)
        lane.send_nowait(message)
        return True

    async def _drain(self, room: str, queued: trio.MemoryReceiveChannel[dict[str, Any]]) -> None:
        """Take a room's news in order until there is none (the lane closes then)."""
        while True:
            try:
                message = queued.receive_nowait()
            except trio.WouldBlock:
                del self._lanes[room]
                return
            await self.take(message)

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
            if "market_state" in message or "market" in message:
                self._market(live, message)
                return
            chat = live.chat_of(message["pid"], message.get("chat", 1))
            if chat is None or chat.done:
                return
            if message.get("text") is not None:
                await live.receive(message["pid"], chat, message["role"], message["text"])
            else:
                live.keystroke(chat, message["role"])

    def _market(self, live: LiveRoom, message: dict[str, Any]) -> None:
        """A market game's bettor connected to another process: their page is to be shown
        the game, or they quote, trade or are done buying (a refusal goes back to them)."""
        if not isinstance(live, MarketRoom):
            return
        pid = message.get("market_state", message.get("pid"))
        if pid not in live.bettors:
            return
        if "market_state" in message:
            for frame in live.state_frames(pid):
                live.server.deliver(pid, frame)
            return
        try:
            live.act(pid, message["market"])
        except TradeRefused as error:
            live.server.deliver(pid, refusal(f"Trade refused: {error}"))
