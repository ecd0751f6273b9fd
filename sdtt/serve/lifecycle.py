"""Rooms from opening to end: a room for each of the lobby's decisions (a bot, human,
three-party or market room), run in the server's nursery, then ended as it finished or was
cut short. One room's failure never takes the others down.

On a shared store (PostgreSQL) each room is owned by this process's lease; the rooms of a
process whose lease ran out are ended here (``server_lost``), and if this process was the
one taken for dead, its rooms that the others ended stop too.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

import trio

from sdtt.errors import SdttError
from sdtt.serve.bots import Bots
from sdtt.serve.lease import Lease, LeaseStore, has_leases
from sdtt.serve.market_room import MarketRoom, games_played, refund_game
from sdtt.serve.matchmaker import (
    BotRoom,
    Decision,
    HumanRoom,
    MarketGame,
    ThreeRoom,
    TimedOut,
    people,
)
from sdtt.serve.participants import Participants
from sdtt.serve.phases import BadMove, move_participant, move_room
from sdtt.serve.room import LiveRoom, RoomHost
from sdtt.serve.store import Room, StudyStore

WAITED_ON = ("lobby", "chat")
"""The phases in which others wait on a participant (see :meth:`Rooms.left`)."""
OUTCOMES = {"model_error": "partner_error", "ended_by_admin": "ended"}
"""A participant's outcome for a room's end reason, where the two differ."""


class Rooms:
    """Opens, runs and ends this process's rooms."""

    def __init__(
        self,
        host: RoomHost,
        live: dict[str, LiveRoom],
        participants: Participants,
        send_state: Callable[[str], None],
        bots: Bots,
    ) -> None:
        self.host = host
        """The server the rooms run on (its study, store, clock, log and delivery)."""
        self.live = live
        """The live rooms this process runs, by id (added and removed only here)."""
        self.participants = participants
        self.send_state = send_state
        self.bots = bots
        self.nursery: trio.Nursery | None = None
        """Where rooms run (the server's, once it runs)."""
        self.lease: Lease | None = None
        """This process's lease on a shared store (None with SQLite)."""

    # ---------------------------------------------------------------- opening

    def take(self, store: StudyStore, decision: Decision, now: datetime) -> Taken:
        """Carry out one of the lobby's decisions in ``store``, in the lobby's transaction
        (maybe in a worker thread, on a connection of the lobby's own: so only the
        store, nothing of the loop's); :meth:`opened` does the rest once it is
        committed."""
        if isinstance(decision, TimedOut):
            move_participant(store, decision.pid, "done", outcome="timeout")
            return Taken(decision, None)
        room = _room_record(decision, now.isoformat(timespec="milliseconds"))
        store.add_room(room)
        if self.lease is not None:  # in the lobby's transaction: never a room without owner
            _lease_store(store).own_room(room.id, self.lease.server)
        for pid in people(decision):
            role = "witness" if pid == room.witness_pid else "interrogator"
            move_participant(store, pid, "chat", role=role, room=room.id)
        return Taken(decision, room)

    def opened(self, taken: Taken) -> None:
        """Open and run the room :meth:`take` wrote (or end the wait that timed out); its
        people are shown where they are now."""
        decision, room = taken.decision, taken.room
        if room is None:
            assert isinstance(decision, TimedOut)
            self.host.records.record("lobby_timeout", {"outcome": "end"}, participant=decision.pid)
            self.participants.shown_done(decision.pid, "timeout")
            return
        if isinstance(decision, MarketGame):
            if decision.timed_out:
                data = {"outcome": "market", "bettors": len(decision.bettors)}
                self.host.records.record("lobby_timeout", data, room=room.id)
            spec = self.host.study.spec
            self._open(
                MarketRoom(
                    record=room,
                    server=self.host,
                    turns=spec.study.turns,
                    bettors=decision.bettors,
                    spec=spec.market,
                )
            )
            return
        if isinstance(decision, BotRoom) and decision.timed_out:
            self.host.records.record(
                "lobby_timeout", {"outcome": "bot"}, room=room.id, participant=decision.interrogator
            )
        self._open(LiveRoom(record=room, server=self.host, turns=self.host.study.spec.study.turns))

    def _open(self, live: LiveRoom) -> None:
        """Show the room's people their room and start running it."""
        self.live[live.id] = live
        for pid in live.members():
            self.send_state(pid)
        assert self.nursery is not None
        self.nursery.start_soon(self._run, live)

    # ---------------------------------------------------------------- running and ending

    async def _run(self, live: LiveRoom) -> None:
        try:
            if live.record.cell is None:
                await live.run(None)
            else:
                await self.bots.run(live)
        except Exception as error:
            # One room's failure never takes the others down: it ends, told and recorded.
            self.host.records.record(
                "room_error", {"error": type(error).__name__, "message": str(error)}, room=live.id
            )
            live.end("model_error" if isinstance(error, SdttError) else "server_error")
        reason = live.end_reason or "finished"
        del self.live[live.id]
        if isinstance(live, MarketRoom):
            self._end_market(live, reason)
            return
        store = self.host.store
        finished = reason == "finished"
        if finished:
            try:
                move_room(store, live.id, "verdict")
            except BadMove:  # another process ended it as it finished: shown below
                finished = False
        if finished:
            self.host.records.record("chat_finished", {}, room=live.id)
            try:
                move_participant(store, live.record.interrogator, "verdict")
            except BadMove:
                # They left (on another process) as the chat finished, before that
                # process's word to end the room came: it ends as their leaving ends it.
                room = store.room(live.id)
                assert room is not None
                self.finish_room(room, "partner_left")
                return
            self.send_state(live.record.interrogator)
            if live.record.witness_pid is not None:
                with contextlib.suppress(BadMove):  # they left (elsewhere) as it finished
                    self.participants.round_done(live.record.witness_pid)
                self.participants.release_own_person(live.record.witness_pid)
        else:
            room = store.room(live.id)
            assert room is not None
            if room.state == "live":
                self.finish_room(room, reason)
            else:
                # Another process ended it (this one was taken for dead) and told its
                # people; shown here too, as that word may not reach a stalled process.
                for pid in live.members():
                    self.send_state(pid)

    def _end_market(self, live: MarketRoom, reason: str) -> None:
        """Reveal and pay out (or, cut short, refund); bettors play on or are done. A game
        another process ended meanwhile (this one was taken for dead, and the other paid
        its trades back) is neither settled nor refunded here: its people are shown how
        it ended."""
        store = self.host.store
        try:  # (checked and moved in one statement: one process ends a game)
            move_room(store, live.id, "done", end_reason=reason, ended=self.host.records.wall_iso())
        except BadMove:
            for pid in live.members():
                self.send_state(pid)
            return
        if reason == "finished":
            live.settle(target_human=live.record.witness == "human")
        else:
            live.refund()
        self.host.records.record("room_ended", {"reason": reason}, room=live.id)
        note = OUTCOMES.get(reason, reason)
        if live.record.witness_pid is not None:
            self.participants.finish(live.record.witness_pid, note)
        for pid in live.bettors:
            if reason == "finished" and games_played(store, pid) < live.spec.games:
                # The next game waits while they read the reveal: until they press
                # Continue, or at most reveal_seconds (one idle bettor cannot hold the
                # others up for longer).
                self.participants.enter_lobby(pid, after=live.spec.reveal_seconds)
                self.send_state(pid)
            else:
                self.participants.finish(pid, note)

    def finish_room(self, room: Room, reason: str) -> None:
        """End a room early; its people are told and get the completion code."""
        store = self.host.store
        move_room(store, room.id, "done", end_reason=reason, ended=self.host.records.wall_iso())
        self.host.records.record("room_ended", {"reason": reason}, room=room.id)
        note = OUTCOMES.get(reason, reason)
        people = [room.interrogator, room.witness_pid]
        if room.mode == "market":  # every bettor of a game a stop cut short, paid back
            refund_game(self.host, room.id)
            people += [p.pid for p in store.participants() if p.room == room.id]
        for pid in dict.fromkeys(people):
            participant = store.participant(pid) if pid is not None else None
            if participant is not None and participant.state != "done":  # (one who left is)
                self.participants.finish(participant.pid, note)
                self.participants.release_own_person(participant.pid)

    def left(self, pid: str) -> None:
        """``pid``'s browser stayed away past the grace period: they leave the lobby, or
        their room ends (``partner_left``) and their partner gets the completion code."""
        participant = self.host.store.participant(pid)
        if participant is None or participant.state not in WAITED_ON:
            return  # nobody waits on them (consent, verdict or done)
        self.host.records.record("participant_left", {"phase": participant.state}, participant=pid)
        room = participant.room if participant.state == "chat" else None
        self.participants.finish(pid, "left")
        if room is None:
            self.participants.wake_lobby()
            return
        live = self.live.get(room)
        if live is not None:
            live.end("partner_left")
        else:  # it runs in another process
            self.host.store.publish({"end": room, "reason": "partner_left"})

    def end_room(self, room_id: str, reason: str = "ended_by_admin") -> bool:
        """End a live room now (by default: the admin page's button); False if it is not
        live."""
        live = self.live.get(room_id)
        if live is None:
            room = self.host.store.room(room_id)
            if room is None or room.state != "live":
                return False
            self.host.store.publish({"end": room_id, "reason": reason})  # elsewhere
            return True
        live.end(reason)
        return True

    # ---------------------------------------------------------------- leases

    def end_lost_rooms(self, room_ids: list[str]) -> None:
        """End the rooms of processes whose lease ran out."""
        for room_id in room_ids:
            room = self.host.store.room(room_id)
            if room is not None and room.state == "live":
                self.finish_room(room, "server_lost")

    def lease_lost(self) -> None:
        """This process was too slow and was taken for dead: the rooms the others ended
        stop here too (they are not ended a second time)."""
        self.host.records.record(
            "lease_lost", {"server": self.lease.server if self.lease else None}
        )
        for live in list(self.live.values()):
            room = self.host.store.room(live.id)
            if room is None or room.state != "live":
                live.end("server_lost")


@dataclass(frozen=True)
class Taken:
    """A decision of the lobby as written in the store, to be opened on the loop."""

    decision: Decision
    room: Room | None
    """The room it formed (None: a wait that timed out)."""


def _room_record(decision: Decision, created: str) -> Room:
    """The stored room a decision forms (live from ``created``)."""
    if isinstance(decision, MarketGame):
        return Room(
            id=f"room-{uuid.uuid4().hex[:12]}",
            mode="market",
            witness="bot" if decision.target is None else "human",
            cell=decision.cell,
            interrogator=decision.bettors[0],
            witness_pid=decision.target,
            state="live",
            end_reason=None,
            created=created,
            ended=None,
        )
    assert not isinstance(decision, TimedOut)
    three = isinstance(decision, ThreeRoom)
    return Room(
        id=f"room-{uuid.uuid4().hex[:12]}",
        mode="three-party" if three else "two-party",
        witness="bot" if isinstance(decision, BotRoom) else "both" if three else "human",
        cell=None if isinstance(decision, HumanRoom) else decision.cell,
        interrogator=decision.interrogator,
        witness_pid=None if isinstance(decision, BotRoom) else decision.witness,
        state="live",
        end_reason=None,
        created=created,
        ended=None,
        bot_position=decision.bot_position if isinstance(decision, ThreeRoom) else None,
    )


def _lease_store(store: StudyStore) -> LeaseStore:
    assert has_leases(store)
    return store  # type: ignore[return-value]
