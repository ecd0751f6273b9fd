"""The lobby: everyone waiting in the store (all processes of the study) handed to the
matchmaker (:mod:`sdtt.serve.matchmaker`, pure), whose decisions open rooms. The lobby is
held while it is read and the rooms are formed, so two processes never take the same
participant."""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime

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
the store while every room of the process waits; when hundreds arrive at once, one look
now forms the rooms of everyone who arrived in the last tenth of a second, instead of
one look per arrival in each process (a wait this short tells no one anything: bot and
person rooms alike start up to a tenth of a second later)."""


class Lobby:
    """Forms rooms whenever someone arrives or a wait runs out."""

    def __init__(self, study: Study, store: StudyStore, wall: Callable[[], datetime]) -> None:
        self.study = study
        self.store = store
        self.wall = wall
        """Now, as wall time (the server's clock)."""
        self._changed = trio.Event()
        self._reading = math.inf
        """When the first bettor still reading a reveal starts waiting (see :meth:`_step`)."""
        self.matchmaker = self.restore()

    def wake(self) -> None:
        """Someone arrived (here or in another process): look at the lobby again."""
        self._changed.set()

    def restore(self) -> Matchmaker:
        """The lobby as the store left it (the rooms formed so far kept in balance)."""
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
            timeout_sd=spec.lobby.timeout_sd,
            human_waits=self._human_waits(),
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

    def _human_waits(self) -> list[float]:
        """The lobby waits a bot room's start is drawn from: those of the last human
        rooms, where a study has both kinds of two-party room (elsewhere no start time
        can tell the witness apart)."""
        spec = self.study.spec
        share = spec.study.human_witness_share
        count = spec.lobby.match_waits
        if spec.study.mode != "two-party" or not 0 < share < 1 or not count:
            return []
        return self.store.human_waits(count)

    def _step(self, now: float, apply: Callable[[Decision], None]) -> None:
        self.matchmaker = self.restore()
        self._reading = math.inf
        for p in self.store.participants("lobby"):
            since = now if p.waiting_since is None else p.waiting_since
            if since > now:  # a market bettor still reading a reveal: not yet waiting
                self._reading = min(self._reading, since)
                continue
            own = p.platform_study == OWN_PERSON
            self.matchmaker.arrive(p.pid, since, witness_only=own, last_role=p.role)
        decisions = self.matchmaker.step(now)
        if not decisions:
            return
        # One statement for all of them: every statement here waits for the database on the loop.
        waiting = self.store.still_waiting([pid for d in decisions for pid in people(d)])
        for decision in decisions:
            if waiting.issuperset(people(decision)):
                apply(decision)
            else:
                # Someone left (in another process) after the lobby was read: nothing
                # of this decision is carried out, and the lobby is looked at again.
                self.wake()

    async def run(self, apply: Callable[[Decision], None]) -> None:
        """Hand the matchmaker's decisions to ``apply`` until cancelled."""
        while True:
            now = self.wall().timestamp()
            with self.store.lobby_lock() as held:
                if held:
                    self._step(now, apply)
            paced = trio.current_time() + PACE
            if not held:
                await trio.sleep(BUSY_RETRY)
                continue
            due = self.matchmaker.next_deadline()
            deadline = min(math.inf if due is None else due, self._reading)
            wait = trio.current_time() + deadline - now
            with trio.move_on_at(wait):
                await self._changed.wait()
            await trio.sleep_until(paced)
            self._changed = trio.Event()
