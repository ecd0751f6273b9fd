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
import uuid
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

import trio

from sdtt.engine.session import SessionSettings
from sdtt.engine.simulate import for_virtual_clock, persona_bot
from sdtt.errors import SdttError
from sdtt.generate.chainfile import count_pseudo_turns, load_pseudo_messages
from sdtt.models.base import GenerateConfig
from sdtt.models.model import Model
from sdtt.models.registry import get_model
from sdtt.personas.bot import PersonaBot
from sdtt.personas.persona import Persona
from sdtt.personas.store import find_persona
from sdtt.personas.timing import persona_timing
from sdtt.serve.connections import Connections, Receive, SendFrame
from sdtt.serve.handling import FrameHandler
from sdtt.serve.lease import Lease, LeaseStore, has_leases
from sdtt.serve.market_room import MarketRoom, games_played, refund_game
from sdtt.serve.matchmaker import (
    BotRoom,
    Decision,
    HumanRoom,
    MarketGame,
    Matchmaker,
    ThreeRoom,
    TimedOut,
)
from sdtt.serve.participants import OWN_PERSON, Participants
from sdtt.serve.records import Records
from sdtt.serve.room import BotSetup, LiveRoom
from sdtt.serve.spec import Condition, Study
from sdtt.serve.state import state_frames
from sdtt.serve.store import Room, StudyStore

ModelFactory = Callable[[Condition, int], Model]


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
        self._open_model = open_model or _open_model
        self._virtual_clock = virtual_clock
        self._personas: dict[str, Persona] = {}
        self._bots: dict[int, PersonaBot] = {}
        self._turns: dict[Path, int] = {}
        self._rooms: dict[str, LiveRoom] = {}
        self._lobby_changed = trio.Event()
        self._nursery: trio.Nursery | None = None
        self.lease: Lease | None = None
        """This process's lease on a shared store (None with SQLite)."""
        self.matchmaker = self._restore()
        self.connections = Connections(
            study, store, partial(state_frames, study, store, self._rooms)
        )
        self.participants = Participants(self, self.connections.send_state, self._wake_lobby)
        self.handler = FrameHandler(
            self, self._rooms, self.participants, self.connections.send_state, self.own_key
        )

    @property
    def started(self) -> datetime:
        """The wall time at trio's clock 0 (when :meth:`run` started, unless given)."""
        return self.records.started

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
        for condition in self.study.conditions:
            self._persona(condition.persona)
            pseudo = self.study.pseudo_path(condition)
            if pseudo is not None:
                load_pseudo_messages(pseudo)

    def _persona(self, name: str) -> Persona:
        if name not in self._personas:
            self._personas[name] = find_persona(name)
        return self._personas[name]

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
                    self._finish_room(room, "restart")
        if has_leases(self.store):
            self.lease = Lease(
                self.store,  # type: ignore[arg-type]
                lambda: self.wall().timestamp(),
                seconds=self.study.spec.storage.lease,
            )
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
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
                    self._apply(decision)
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

    def _apply(self, decision: Decision) -> None:
        if isinstance(decision, TimedOut):
            self.record("lobby_timeout", {"outcome": "end"}, participant=decision.pid)
            self.participants.finish(decision.pid, "timeout")
            return
        if isinstance(decision, MarketGame):
            self._start_market(decision)
            return
        three = isinstance(decision, ThreeRoom)
        room = Room(
            id=f"room-{uuid.uuid4().hex[:12]}",
            mode="three-party" if three else "two-party",
            witness="bot" if isinstance(decision, BotRoom) else "both" if three else "human",
            condition=None if isinstance(decision, HumanRoom) else decision.condition,
            interrogator=decision.interrogator,
            witness_pid=None if isinstance(decision, BotRoom) else decision.witness,
            state="live",
            end_reason=None,
            created=self.wall_iso(),
            ended=None,
            bot_position=decision.bot_position if isinstance(decision, ThreeRoom) else None,
        )
        self.store.add_room(room)
        if self.lease is not None:  # in the lobby's transaction: never a room without owner
            self._lease_store().own_room(room.id, self.lease.server)
        if isinstance(decision, BotRoom) and decision.timed_out:
            self.record(
                "lobby_timeout", {"outcome": "bot"}, room=room.id, participant=decision.interrogator
            )
        live = LiveRoom(record=room, server=self, turns=self.study.spec.study.turns)
        self._rooms[room.id] = live
        for pid, role in live.members().items():
            self.store.update_participant(pid, state="chat", role=role, room=room.id)
            self.connections.send_state(pid)
        assert self._nursery is not None
        self._nursery.start_soon(self._run_room, live)

    def _start_market(self, game: MarketGame) -> None:
        room = Room(
            id=f"room-{uuid.uuid4().hex[:12]}",
            mode="market",
            witness="bot" if game.target is None else "human",
            condition=game.condition,
            interrogator=game.bettors[0],
            witness_pid=game.target,
            state="live",
            end_reason=None,
            created=self.wall_iso(),
            ended=None,
        )
        self.store.add_room(room)
        if game.timed_out:
            self.record(
                "lobby_timeout", {"outcome": "market", "bettors": len(game.bettors)}, room=room.id
            )
        live = MarketRoom(
            record=room,
            server=self,
            turns=self.study.spec.study.turns,
            bettors=game.bettors,
            spec=self.study.spec.market,
        )
        self._rooms[room.id] = live
        for pid, role in live.members().items():
            self.store.update_participant(pid, state="chat", role=role, room=room.id)
            self.connections.send_state(pid)
        assert self._nursery is not None
        self._nursery.start_soon(self._run_room, live)

    def _end_market(self, live: MarketRoom, reason: str) -> None:
        """Reveal and pay out (or, cut short, refund); bettors play on or are done."""
        if reason == "finished":
            live.settle(target_human=live.record.witness == "human")
        else:
            live.refund()
        self.store.update_room(live.id, state="done", end_reason=reason, ended=self.wall_iso())
        self.record("room_ended", {"reason": reason}, room=live.id)
        note = {"model_error": "partner_error", "ended_by_admin": "ended"}.get(reason, reason)
        if live.record.witness_pid is not None:
            self.participants.finish(live.record.witness_pid, note)
        for pid in live.bettors:
            if reason == "finished" and games_played(self.store, pid) < live.spec.games:
                self.participants.enter_lobby(pid)
                self.connections.send_state(pid)
            else:
                self.participants.finish(pid, note)

    async def _run_room(self, live: LiveRoom) -> None:
        try:
            if live.record.condition is None:
                await live.run(None)
            else:
                await self._run_bot(live)
        except Exception as error:
            # One room's failure never takes the others down: it ends, told and recorded.
            self.record(
                "room_error", {"error": type(error).__name__, "message": str(error)}, room=live.id
            )
            live.end("model_error" if isinstance(error, SdttError) else "server_error")
        reason = live.end_reason or "finished"
        del self._rooms[live.id]
        if isinstance(live, MarketRoom):
            self._end_market(live, reason)
            return
        if reason == "finished":
            self.store.update_room(live.id, state="verdict")
            self.record("chat_finished", {}, room=live.id)
            self.store.update_participant(live.record.interrogator, state="verdict")
            self.connections.send_state(live.record.interrogator)
            if live.record.witness_pid is not None:
                self.participants.finish(live.record.witness_pid, "finished")
                self.participants.release_own_person(live.record.witness_pid)
        else:
            room = self.store.room(live.id)
            assert room is not None
            if room.state == "live":  # else another process has ended it already
                self._finish_room(room, reason)

    # ---------------------------------------------------------------- leases

    def _lease_store(self) -> LeaseStore:
        assert has_leases(self.store)
        return self.store  # type: ignore[return-value]

    def _check_lease(self) -> None:
        """Renew this process's lease and end the rooms of processes that lost theirs;
        their people are told once the ending is committed."""
        assert self.lease is not None
        with self.connections.holding():
            self.lease.check(self._end_lost_rooms, self._lease_lost)

    def _end_lost_rooms(self, room_ids: list[str]) -> None:
        for room_id in room_ids:
            room = self.store.room(room_id)
            if room is not None and room.state == "live":
                self._finish_room(room, "server_lost")

    def _lease_lost(self) -> None:
        """This process was too slow and was taken for dead: the rooms the others ended
        stop here too (they are not ended a second time)."""
        self.record("lease_lost", {"server": self.lease.server if self.lease else None})
        for live in list(self._rooms.values()):
            room = self.store.room(live.id)
            if room is None or room.state != "live":
                live.end("server_lost")

    async def _run_bot(self, live: LiveRoom) -> None:
        assert live.record.condition is not None
        condition = self.study.conditions[live.record.condition]
        spec = self.study.spec
        persona = self._persona(condition.persona)
        pseudo_path = self.study.pseudo_path(condition)
        number = self.store.room_count()
        model = self._open_model(condition, spec.chat.seed + number)
        try:
            bot = self._bot(condition, persona, model)
            settings = SessionSettings(
                mode="burst",
                t1=spec.chat.t1,
                delays=condition.delays,
                timing=persona_timing(persona) if condition.delays == "fitted" else None,
                max_messages=spec.chat.max_messages,
                seed=spec.chat.seed + number,
            )
            meta = {
                "persona": condition.persona,
                "model": condition.model,
                "interrogator": "human",
                "pseudo": condition.pseudo or None,
                "pseudo_turns": self._pseudo_turns(pseudo_path),
                "live_turns": spec.study.turns,
                "condition": condition.index,
                "study": self.study.name,
            }
            await live.run(BotSetup(bot, settings, meta))
        finally:
            with trio.CancelScope(shield=True):
                await model.aclose()

    def _bot(self, condition: Condition, persona: Persona, model: Model) -> PersonaBot:
        """The condition's persona bot speaking through ``model``. Its prompt (the
        persona's history and pseudo-dialogue) is built once per condition: building it
        takes long enough to hold up every other room's delivery."""
        template = self._bots.get(condition.index)
        if template is None:
            pseudo_path = self.study.pseudo_path(condition)
            template = persona_bot(
                model,
                persona,
                mode="burst",
                pseudo=load_pseudo_messages(pseudo_path) if pseudo_path is not None else [],
                max_messages=self.study.spec.chat.max_messages,
            )
            self._bots[condition.index] = template
        return replace(template, model=for_virtual_clock(model) if self._virtual_clock else model)

    def _pseudo_turns(self, path: Path | None) -> int:
        if path is None:
            return 0
        if path not in self._turns:
            self._turns[path] = count_pseudo_turns(path)
        return self._turns[path]

    def _finish_room(self, room: Room, reason: str) -> None:
        """End a room early; its people are told and get the completion code."""
        self.store.update_room(room.id, state="done", end_reason=reason, ended=self.wall_iso())
        self.record("room_ended", {"reason": reason}, room=room.id)
        note = {"model_error": "partner_error", "ended_by_admin": "ended"}.get(reason, reason)
        people = [room.interrogator, room.witness_pid]
        if room.mode == "market":  # every bettor of a game a stop cut short, paid back
            refund_game(self, room.id)
            people += [p.pid for p in self.store.participants() if p.room == room.id]
        for pid in dict.fromkeys(people):
            if pid is not None:
                self.participants.finish(pid, note)
                self.participants.release_own_person(pid)

    def end_room(self, room_id: str) -> bool:
        """End a live room now (the admin page's button); False if it is not live."""
        live = self._rooms.get(room_id)
        if live is None:
            room = self.store.room(room_id)
            if room is None or room.state != "live":
                return False
            self.store.publish({"end": room_id})  # it runs in another process
            return True
        live.end("ended_by_admin")
        return True

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


def _open_model(condition: Condition, seed: int) -> Model:
    return get_model(condition.model, config=GenerateConfig(stop=("\nUser:",)), seed=seed)
