"""The lobby: everyone waiting in the store (all processes of the study) handed to the
matchmaker (:mod:`sdtt.serve.matchmaker`, pure), whose decisions open rooms. The lobby is
held while it is read and the rooms are written, so two processes never take the same
participant; on PostgreSQL that look runs in a worker thread on a connection of its own
(see :meth:`~sdtt.serve.pgstore.PostgresStore.hold_lobby`), and the rooms it formed are
opened on the loop once it is committed."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Generic, TypeVar

import trio

from sdtt.serve.matchmaker import Decision, Matchmaker, people
from sdtt.serve.participants import OWN_PERSON
from sdtt.serve.spec import Study
from sdtt.serve.store import StudyStore

BUSY_RETRY = 0.05
"""Seconds before looking again when another process is forming rooms (it may not have
seen who arrived here)."""
PACE = 0.1
"""Seconds at least between two looks at the lobby. A look reads the whole lobby from
the store (on SQLite, while every room of the process waits); when hundreds arrive at
once, one look now forms the rooms of everyone who arrived in the last tenth of a
second, instead of one look per arrival in each process (a wait this short tells no one
anything: bot and person rooms alike start up to a tenth of a second later)."""
T = TypeVar("T")
Take = Callable[[StudyStore, Decision, datetime], T]
"""Carries out a decision in the store (in the lobby's transaction, maybe in a worker
thread: nothing else), given the look's wall time; returns what opens it on the loop."""


@dataclass
class Look(Generic[T]):
    """What one look at the lobby found and did."""

    matchmaker: Matchmaker
    """The lobby as read, after the look's decisions."""
    reading: float
    """When the first bettor still reading a reveal starts waiting (``inf``: none)."""
    taken: list[T] = field(default_factory=list)
    """What :data:`Take` returned for each decision carried out."""
    again: bool = False
    """Someone left meanwhile and a decision was dropped: look again."""


class Lobby:
    """Forms rooms whenever someone arrives or a wait runs out."""

    def __init__(self, study: Study, store: StudyStore, wall: Callable[[], datetime]) -> None:
        self.study = study
        self.store = store
        self.wall = wall
        """Now, as wall time (the server's clock)."""
        self._changed = trio.Event()
        self._reading = math.inf
        """When the first bettor still reading a reveal starts waiting (see :meth:`look`)."""
        self.matchmaker = self.restore()

    def wake(self) -> None:
        """Someone arrived (here or in another process): look at the lobby again."""
        self._changed.set()

    def restore(self, store: StudyStore | None = None) -> Matchmaker:
        """The lobby as the store (``store``: a connection of the lobby's own) left it
        (the rooms formed so far kept in balance)."""
        store = self.store if store is None else store
        spec = self.study.spec
        counts = [0] * len(self.study.conditions)
        human = bot = 0
        positions = [0, 0]
        for tally in store.room_tally():
            if tally.witness != "bot":
                human += tally.count
            else:
                bot += tally.count
            if tally.cell is not None and tally.cell < len(counts):
                counts[tally.cell] += tally.count
            if tally.bot_position in (1, 2):
                positions[tally.bot_position - 1] += tally.count
        return Matchmaker(
            conditions=len(counts),
            timeout=spec.lobby.timeout,
            timeout_sd=spec.lobby.timeout_sd,
            human_waits=self._human_waits(store),
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

    def _human_waits(self, store: StudyStore) -> list[float]:
        """The lobby waits a bot room's start is drawn from: those of the last human
        rooms, where a study has both kinds of two-party room (elsewhere no start time
        can tell the witness apart)."""
        spec = self.study.spec
        share = spec.study.human_witness_share
        count = spec.lobby.match_waits
        if spec.study.mode != "two-party" or not 0 < share < 1 or not count:
            return []
        return store.human_waits(count)

    def look(self, store: StudyStore, now: datetime, take: Take[T]) -> Look[T]:
        """One look at the lobby, in the transaction holding it (on ``store``, which may
        be a connection of a worker thread's): the matchmaker's decisions carried out in
        the store by ``take``, and what it returned for each."""
        stamp = now.timestamp()
        matchmaker = self.restore(store)
        reading = math.inf
        for p in store.participants("lobby"):
            since = stamp if p.waiting_since is None else p.waiting_since
            if since > stamp:  # a market bettor still reading a reveal: not yet waiting
                reading = min(reading, since)
                continue
            own = p.platform_study == OWN_PERSON
            matchmaker.arrive(p.pid, since, witness_only=own, last_role=p.role)
        look = Look[T](matchmaker, reading)
        decisions = matchmaker.step(stamp)
        if not decisions:
            return look
        # One statement for all of them: every statement here waits for the database.
        waiting = store.still_waiting([pid for d in decisions for pid in people(d)])
        for decision in decisions:
            if waiting.issuperset(people(decision)):
                look.taken.append(take(store, decision, now))
            else:
                # Someone left (in another process) after the lobby was read: nothing
                # of this decision is carried out, and the lobby is looked at again.
                look.again = True
        return look

    async def run(self, take: Take[T], opened: Callable[[T], None]) -> None:
        """Carry out the matchmaker's decisions in the store with ``take`` (in the
        transaction holding the lobby), then hand what it returned to ``opened`` once
        that is committed; until cancelled."""
        while True:
            now = self.wall()
            look = await self.store.hold_lobby(partial(self.look, now=now, take=take))
            paced = trio.current_time() + PACE
            if look is None:  # another process holds the lobby
                await trio.sleep(BUSY_RETRY)
                continue
            self.matchmaker, self._reading = look.matchmaker, look.reading
            for taken in look.taken:
                opened(taken)
            if look.again:
                self.wake()
            due = self.matchmaker.next_deadline()
            deadline = min(math.inf if due is None else due, self._reading)
            wait = trio.current_time() + deadline - now.timestamp()
            with trio.move_on_at(wait):
                await self._changed.wait()
            await trio.sleep_until(paced)
            self._changed = trio.Event()
