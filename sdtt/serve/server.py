"""The study server: participants, their connections, the lobby and the rooms, on one
trio loop.

The web layer (:mod:`sdtt.serve.app`) hands each websocket to :meth:`StudyServer.attend`
as two callables (receive a frame, send a frame), so everything here runs and is tested
without a network. Times come from trio's clock, mapped onto the wall time the server
started at, so under ``autojump_clock`` a whole study runs in milliseconds.

The server joins parts that each do one job: :mod:`~sdtt.serve.event_log` (clock and event
log), :mod:`~sdtt.serve.connections` (websockets and delivery), :mod:`~sdtt.serve.state`
(what a browser is shown on (re)connecting), :mod:`~sdtt.serve.handling` (each frame a
browser sends), :mod:`~sdtt.serve.lobby`, :mod:`~sdtt.serve.lifecycle` (rooms from
opening to end, leases), :mod:`~sdtt.serve.bots`, :mod:`~sdtt.serve.participants`,
:mod:`~sdtt.serve.relay` (messages from other processes) and
:mod:`~sdtt.serve.overview` (the admin page's figures).
"""

from __future__ import annotations

import contextlib
from datetime import datetime
from functools import partial
from typing import Any

import trio

from sdtt.serve.bots import Bots, ModelFactory
from sdtt.serve.connections import JOIN_EVENTS, Connections, Receive, SendMessage
from sdtt.serve.event_log import Records
from sdtt.serve.handling import FrameHandler
from sdtt.serve.lease import Lease, has_leases
from sdtt.serve.lifecycle import WAITED_ON, Rooms
from sdtt.serve.lobby import Lobby
from sdtt.serve.matchmaker import Matchmaker
from sdtt.serve.moderation import ModerationClient, Screener, open_screener
from sdtt.serve.overview import condition_label, overview
from sdtt.serve.participants import Participants
from sdtt.serve.protocol import new_token
from sdtt.serve.relay import Relay
from sdtt.serve.room import LiveRoom
from sdtt.serve.spec import Study
from sdtt.serve.state import state_frames
from sdtt.serve.store import Room, StudyStore, last_event_off_loop, off_loop


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
        moderation: ModerationClient | None = None,
    ) -> None:
        self.study = study
        self.store = store
        if virtual_clock and hasattr(store, "waits_off_loop"):
            store.waits_off_loop = False  # the clock would jump while the database answers
        self.records = Records(store, started)
        self._screener = open_screener(study, self.records.record, moderation)
        self.admin_token = admin_token or new_token()
        self.own_key = own_key or new_token()
        """Key of the own person's private link (own-person studies)."""
        self._rooms: dict[str, LiveRoom] = {}
        """The live rooms this process runs, by id (see :class:`Rooms`)."""
        self.connections = Connections(
            study, store, partial(state_frames, study, store, self._rooms)
        )
        self.lobby = Lobby(study, store, self.records.wall)
        self.participants = Participants(self, self.connections.send_state, self.lobby.wake)
        self.bots = Bots(study, store, open_model=open_model, virtual_clock=virtual_clock)
        self.rooms = Rooms(
            self, self._rooms, self.participants, self.connections.send_state, self.bots
        )
        self.handler = FrameHandler(
            self, self._rooms, self.participants, self.connections.send_state, self.own_key
        )
        self.relay = Relay(self.lobby.wake, self._rooms, self.connections)
        self.connections.on_gone = self._gone

    @property
    def started(self) -> datetime:
        """The wall time at trio's clock 0 (when :meth:`run` started, unless given)."""
        return self.records.started

    @property
    def matchmaker(self) -> Matchmaker:
        """The lobby's matchmaker, as the store last left it."""
        return self.lobby.matchmaker

    @property
    def screener(self) -> Screener | None:
        """The study's moderation endpoint (``[moderation]``, or the client given)."""
        return self._screener

    @property
    def lease(self) -> Lease | None:
        """This process's lease on a shared store (None with SQLite)."""
        return self.rooms.lease

    def check(self) -> None:
        """Load every persona and pseudo-dialogue now, so a bad spec fails at start."""
        self.bots.check()

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
                lambda: self.records.wall().timestamp(),
                seconds=self.study.spec.storage.lease,
            )
        async with trio.open_nursery() as nursery:
            self.rooms.nursery = nursery
            if listen is not None:
                await nursery.start(self.relay.listen, listen)
            if self.lease is not None:
                nursery.start_soon(self.lease.keep, self._check_lease)
            keep_committing = getattr(self.store, "keep_committing", None)
            if keep_committing is not None and getattr(self.store, "waits_off_loop", False):
                # (it commits what is recorded)
                nursery.start_soon(keep_committing, self._store_failed)
            else:
                nursery.start_soon(self.records.commit_events)
            take_over = getattr(self.store, "background_checkpoints", None)
            if take_over is not None:
                nursery.start_soon(self.records.checkpoint_wal, take_over())
            task_status.started()
            try:
                await self.lobby.run(self.rooms.take, self.rooms.opened)
            finally:
                self.store.flush()
                if self._screener is not None:
                    await self._screener.aclose()

    def _store_failed(self, room_id: str) -> None:
        """The database refused ``room_id``'s messages or events (the error is in the
        errors log): the room ends for its people as cut short on our side."""
        self.records.record("store_failed", {}, room=room_id)
        if self.rooms.nursery is not None:
            with contextlib.suppress(RuntimeError):  # the server is stopping
                self.rooms.nursery.start_soon(self._end_failed_room, room_id)

    async def _end_failed_room(self, room_id: str) -> None:
        self.rooms.end_room(room_id, "server_error")

    def _gone(self, pid: str, joined: int) -> None:
        """``pid``'s browser, let in by event ``joined``, went away: unless they are back
        within the grace period (a reload), they have left (see :meth:`Rooms.left`)."""
        if self.rooms.nursery is not None:
            with contextlib.suppress(RuntimeError):  # the server is stopping
                self.rooms.nursery.start_soon(self._wait_for_return, pid, joined)

    async def _wait_for_return(self, pid: str, joined: int) -> None:
        await trio.sleep(self.study.spec.chat.dropout_grace)
        if pid in self.connections:
            return  # back here
        # Back on another process of the study? The store says so, whether or not that
        # process's news has reached this one yet: any join after the one that went
        # away means they came back (and a later drop is waited for where it happened).
        if await last_event_off_loop(self.store, pid, JOIN_EVENTS) > joined:
            return
        participant = await off_loop(self.store, partial(self.store.participant, pid))
        if participant is None or participant.state not in WAITED_ON:
            return  # nobody waits on them, and without a browser they cannot move on
        if pid in self.connections:
            return  # back here while the store was read
        with self.connections.holding():
            self.rooms.left(pid)

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

    async def attend(self, receive: Receive, send: SendMessage) -> None:
        """Serve one websocket until it closes (refusals are sent, never raised)."""
        await self.connections.attend(receive, send, self.handler)

    def deliver(self, pid: str, frame: dict[str, Any]) -> None:
        """Queue a frame for ``pid``'s browser, if connected (the store has it anyway)."""
        self.connections.deliver(pid, frame)

    # ---------------------------------------------------------------- admin view

    def overview(self) -> dict[str, Any]:
        """What the admin page shows (server-side only; never sent to participants)."""
        return overview(self.study, self.store, self.matchmaker)

    def condition_label(self, room: Room) -> str:
        """What a room tests, for the researcher."""
        return condition_label(self.study, room)
