"""The study server: participants, their connections, the lobby and the rooms, on one
trio loop.

The web layer (:mod:`sdtt.serve.app`) hands each websocket to :meth:`StudyServer.attend`
as two callables (receive a frame, send a frame), so everything here runs and is tested
without a network. Times come from trio's clock, mapped onto the wall time the server
started at, so under ``autojump_clock`` a whole study runs in milliseconds.
"""

from __future__ import annotations

import math
import secrets
import threading
from collections.abc import Callable
from datetime import datetime
from functools import partial
from typing import Any

import trio

from sdtt.serve.bots import Bots, ModelFactory
from sdtt.serve.connections import Connections, Receive, SendFrame
from sdtt.serve.handling import FrameHandler
from sdtt.serve.lease import Lease, has_leases
from sdtt.serve.lifecycle import Rooms
from sdtt.serve.matchmaker import (
    Matchmaker,
)
from sdtt.serve.participants import OWN_PERSON, Participants
from sdtt.serve.records import Records
from sdtt.serve.room import LiveRoom
from sdtt.serve.spec import Study
from sdtt.serve.state import state_frames
from sdtt.serve.store import Room, StudyStore


class StudyServer:
    """Runs one study; call :meth:`run` in a nursery, then :meth:`attend` per websocket."""

    def __init__(
        self,
        study: Study,
        store: StudyStore,
        *,
        started: datetime | None = None,
        open_model: ModelFactory | None = None,
        virtual_clock: bool = False,
        admin_token: str | None = None,
        own_key: str | None = None,
    ) -> None:
        self.study = study
        self.store = store
        self.records = Records(store, started)
        self.admin_token = admin_token or secrets.token_urlsafe(18)
        self.own_key = own_key or secrets.token_urlsafe(18)
        """Key of the own person's private link (own-person studies)."""
        self._rooms: dict[str, LiveRoom] = {}
        """The live rooms this process runs, by id (see :class:`Rooms`)."""
        self._lobby_changed = trio.Event()
        self.matchmaker = self._restore()
        self.connections = Connections(
            study, store, partial(state_frames, study, store, self._rooms)
        )
        self.participants = Participants(self, self.connections.send_state, self._wake_lobby)
        self.handler = FrameHandler(
            self, self._rooms, self.participants, self.connections.send_state, self.own_key
        )
        self.bots = Bots(study, store, open_model=open_model, virtual_clock=virtual_clock)
        self.rooms = Rooms(
            self, self._rooms, self.participants, self.connections.send_state, self.bots
        )

    @property
    def started(self) -> datetime:
        """The wall time at trio's clock 0 (when :meth:`run` started, unless given)."""
        return self.records.started

    @property
    def lease(self) -> Lease | None:
        """This process's lease on a shared store (None with SQLite)."""
        return self.rooms.lease

    # ---------------------------------------------------------------- setup

    def _restore(self) -> Matchmaker:
        """The lobby as the store left it; rooms a stop cut short are ended."""
        spec = self.study.spec
        counts = [0] * len(self.study.conditions)
        human = bot = 0
        positions = [0, 0]
        for tally in self.store.room_tally():
            if tally.witness != "bot":
                human += tally.count
            else:
                bot += tally.count
            if tally.condition is not None and tally.condition < len(counts):
                counts[tally.condition] += tally.count
            if tally.bot_position in (1, 2):
                positions[tally.bot_position - 1] += tally.count
        return Matchmaker(
            conditions=len(counts),
            timeout=spec.lobby.timeout,
            on_timeout=spec.lobby.on_timeout,
            human_share=spec.study.human_witness_share,
            three_party=spec.study.mode == "three-party",
            market_size=spec.market.bettors if spec.study.mode == "market" else 0,
            own_person=spec.study.own_person,
            seed=spec.chat.seed,
            rooms_per_condition=counts,
            human_rooms=human,
            bot_rooms=bot,
            positions=positions,
        )

    def check(self) -> None:
        """Load every persona and pseudo-dialogue now, so a bad spec fails at start."""
        self.bots.check()

    # ---------------------------------------------------------------- clocks and records

    def wall(self) -> datetime:
        """Now, as wall time (trio's clock since the server started, on ``started``)."""
        return self.records.wall()

    def wall_iso(self) -> str:
        """:meth:`wall` as ISO 8601 text, to the millisecond."""
        return self.records.wall_iso()

    def record(
        self,
        kind: str,
        data: dict[str, Any],
        *,
        room: str | None = None,
        participant: str | None = None,
    ) -> None:
        """Write an event to the store (committed before the next frame leaves, and at
        the latest once the loop has run what else was ready)."""
        self.records.record(kind, data, room=room, participant=participant)

    # ---------------------------------------------------------------- running

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Run the lobby and the rooms until cancelled."""
        self.records.start()
        listen = getattr(self.store, "listen", None)
        if listen is None:
            # The only process of the study: a room still live was cut short by a stop.
            # (With a shared database other processes' rooms are live; left alone.)
            for room in self.store.rooms():
                if room.state == "live":
                    self.rooms.finish_room(room, "restart")
        if has_leases(self.store):
            self.rooms.lease = Lease(
                self.store,  # type: ignore[arg-type]
                lambda: self.wall().timestamp(),
                seconds=self.study.spec.storage.lease,
            )
        async with trio.open_nursery() as nursery:
            self.rooms.nursery = nursery
            if listen is not None:
                nursery.start_soon(self._listen, listen)
            if self.lease is not None:
                nursery.start_soon(self.lease.keep, self._check_lease)
            nursery.start_soon(self.records.commit_events)
            take_over = getattr(self.store, "background_checkpoints", None)
            if take_over is not None:
                nursery.start_soon(self.records.checkpoint_wal, take_over())
            task_status.started()
            try:
                await self._lobby()
            finally:
                self.store.flush()

    async def _lobby(self) -> None:
        """Form rooms from everyone waiting in the store (all processes of the study),
        holding the lobby so two processes never take the same participant."""
        while True:
            now = self.wall().timestamp()
            with self.store.lobby_lock():
                self.matchmaker = self._restore()
                for p in self.store.participants("lobby"):
                    since = now if p.waiting_since is None else p.waiting_since
                    own = p.platform_study == OWN_PERSON
                    self.matchmaker.arrive(p.pid, since, witness_only=own)
                for decision in self.matchmaker.step(now):
                    self.rooms.apply(decision)
            deadline = self.matchmaker.next_deadline()
            wait = math.inf if deadline is None else trio.current_time() + deadline - now
            with trio.move_on_at(wait):
                await self._lobby_changed.wait()
            self._lobby_changed = trio.Event()

    def _wake_lobby(self) -> None:
        self._lobby_changed.set()

    async def _listen(self, listen: Callable[..., None]) -> None:
        """Take what other processes of the study publish (a thread reads the database)."""
        inbox_send, inbox_recv = trio.open_memory_channel[dict[str, Any]](math.inf)
        stop = threading.Event()
        token = trio.lowlevel.current_trio_token()

        def deliver(message: dict[str, Any]) -> None:
            trio.from_thread.run_sync(inbox_send.send_nowait, message, trio_token=token)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(
                partial(trio.to_thread.run_sync, listen, deliver, stop, abandon_on_cancel=True)
            )
            try:
                async for message in inbox_recv:
                    await self._from_elsewhere(message)
            finally:
                stop.set()

    async def _from_elsewhere(self, message: dict[str, Any]) -> None:
        if message.get("lobby"):
            self._lobby_changed.set()
        elif "end" in message and message["end"] in self._rooms:
            self._rooms[message["end"]].end("ended_by_admin")
        elif "state" in message and message["state"] in self.connections:
            self.connections.send_state(message["state"])
        elif "to" in message and message["to"] in self.connections:
            self.deliver(message["to"], message["frame"])
        elif "room" in message and message["room"] in self._rooms:
            live = self._rooms[message["room"]]
            chat = live.chat_of(message["pid"], message.get("chat", 1))
            if chat is None or chat.done:
                return
            if message.get("text") is not None:
                await live.post(chat, message["role"], message["text"])
            else:
                live.keystroke(chat, message["role"])

    def _check_lease(self) -> None:
        """Renew this process's lease and end the rooms of processes that lost theirs;
        their people are told once the ending is committed."""
        assert self.lease is not None
        with self.connections.holding():
            self.lease.check(self.rooms.end_lost_rooms, self.rooms.lease_lost)

    def end_room(self, room_id: str) -> bool:
        """End a live room now (the admin page's button); False if it is not live."""
        return self.rooms.end_room(room_id)

    # ---------------------------------------------------------------- connections

    async def attend(self, receive: Receive, send: SendFrame) -> None:
        """Serve one websocket until it closes (refusals are sent, never raised)."""
        await self.connections.attend(receive, send, self.handler)

    def deliver(self, pid: str, frame: dict[str, Any]) -> None:
        """Queue a frame for ``pid``'s browser, if connected (the store has it anyway)."""
        self.connections.deliver(pid, frame)

    # ---------------------------------------------------------------- admin view

    def overview(self) -> dict[str, Any]:
        """What the admin page shows (server-side only; never sent to participants)."""
        participants = self.store.participants()
        rooms = self.store.rooms()
        finished: dict[str, int] = {}
        for room in rooms:
            if room.state != "live" and room.end_reason == "finished":
                label = self.condition_label(room)
                finished[label] = finished.get(label, 0) + 1
        live = [
            {
                "id": room.id,
                "condition": self.condition_label(room),
                "interrogator": room.interrogator,
                "witness": room.witness_pid,
                "messages": len(self.store.messages(room.id)),
                "created": room.created,
            }
            for room in rooms
            if room.state == "live"
        ]
        return {
            "waiting": self.matchmaker.waiting,
            "live": live,
            "finished": finished,
            "excluded": [
                {"pid": p.pid, "outcome": p.outcome}
                for p in participants
                if p.state == "done" and p.outcome not in (None, "finished")
            ],
        }

    def condition_label(self, room: Room) -> str:
        """What a room tests, for the researcher."""
        if room.condition is None:
            return "human witness"
        label = self.study.conditions[room.condition].label()
        return f"three-party: {label}" if room.witness == "both" else label
