"""The lobby as a pure state machine: who waits, which rooms to form, who timed out.

It reads no clock and does no I/O: the server tells it when participants arrive or
leave and asks :meth:`Matchmaker.step` at a time of its choosing (the earliest being
:meth:`Matchmaker.next_deadline`), so every rule is tested on plain numbers.

Rules:

- two-party: a room's witness is a person while the share of human-witness rooms formed
  so far is below ``human_share`` (and a partner waits); otherwise the bot. Three-party:
  every room has both, the person and the bot side by side;
- a room with the bot takes the condition with the fewest rooms so far (the first such,
  so the design fills evenly in a fixed order); in three-party the bot's position (chat 1
  or 2) is the one used less so far, a tie drawn at random;
- of two people paired, the one who waited longer is the interrogator. With an own
  person (``witness_only`` arrivals: the real person behind the persona, by private
  link) only they are ever the human witness, and they never time out;
- market: a game forms as soon as ``market_size`` bettors wait; its target is the bot of
  the condition with the fewest rooms, or, while person targets are due by
  ``human_share``, one more participant (the latest to arrive); when the first has
  waited ``timeout`` seconds, ``"bot"`` starts a bot game with whoever waits, ``"end"``
  lets the first go;
- someone waiting for a human partner gets up to their own timeout, ``timeout`` plus a
  normal draw of standard deviation ``timeout_sd`` (fixed per participant); then
  ``on_timeout`` decides: ``"bot"`` gives them a two-party bot room after all, ``"end"``
  finishes them (with the completion code);
- a bot room is not formed before its interrogator waited as long as the interrogator
  of one of the last human rooms did (``human_waits``, one drawn per participant), so
  the lobby's wait has the same spread before either kind of room and an instant start
  never means the bot. (Jones & Bergen waited the mean of the last 5 human games: equal
  means, but a wait that never varies still gave the bot away.)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from sdtt.seeds import seeded_rng
from sdtt.serve.spec import OnTimeout


@dataclass(frozen=True)
class BotRoom:
    """Form a room of ``interrogator`` with the bot of condition number ``cell``."""

    interrogator: str
    cell: int
    timed_out: bool = False


@dataclass(frozen=True)
class HumanRoom:
    """Form a two-party room of two people."""

    interrogator: str
    witness: str


@dataclass(frozen=True)
class ThreeRoom:
    """Form a three-party room: the interrogator chats with ``witness`` and the bot of
    condition number ``cell`` side by side, the bot in chat ``bot_position``."""

    interrogator: str
    witness: str
    cell: int
    bot_position: Literal[1, 2]


@dataclass(frozen=True)
class TimedOut:
    """``pid`` waited too long and leaves without a chat."""

    pid: str


@dataclass(frozen=True)
class MarketGame:
    """Form a market game: ``bettors`` question and trade on the bot of condition number
    ``cell``, or (``target`` set, ``cell`` None) on a person."""

    bettors: tuple[str, ...]
    cell: int | None
    timed_out: bool = False
    target: str | None = None


Decision = BotRoom | HumanRoom | ThreeRoom | TimedOut | MarketGame


def people(decision: Decision) -> tuple[str, ...]:
    """The participants a decision takes out of the lobby."""
    if isinstance(decision, TimedOut):
        return (decision.pid,)
    if isinstance(decision, MarketGame):
        return decision.bettors if decision.target is None else (*decision.bettors, decision.target)
    if isinstance(decision, BotRoom):
        return (decision.interrogator,)
    return (decision.interrogator, decision.witness)


@dataclass
class Matchmaker:
    """The lobby of one study (see the module docstring for its rules)."""

    conditions: int
    timeout: float
    on_timeout: OnTimeout = "bot"
    human_share: float = 0.0
    three_party: bool = False
    own_person: bool = False
    seed: int = 0
    rooms_per_condition: list[int] = field(default_factory=list)
    human_rooms: int = 0
    bot_rooms: int = 0
    positions: list[int] = field(default_factory=lambda: [0, 0])
    market_size: int = 0
    """Bettors per market game (0: not a market study)."""
    timeout_sd: float = 0.0
    human_waits: list[float] = field(default_factory=list)
    """Seconds the interrogators of the last human rooms waited (empty: bots at once)."""
    _waiting: dict[str, float] = field(default_factory=dict)
    _timeouts: dict[str, float] = field(default_factory=dict)
    _witness_only: set[str] = field(default_factory=set)
    _last_role: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.conditions < 1:
            raise ValueError("a study needs at least one condition")
        if not self.rooms_per_condition:
            self.rooms_per_condition = [0] * self.conditions

    @property
    def waiting(self) -> list[str]:
        """Participants in the lobby, longest waiting first."""
        return list(self._waiting)

    def arrive(
        self, pid: str, now: float, *, witness_only: bool = False, last_role: str | None = None
    ) -> None:
        """``pid`` entered the lobby at ``now`` (a second arrival keeps the first time);
        ``last_role``: their role in their previous round, if any."""
        self._waiting.setdefault(pid, now)
        if pid not in self._timeouts:
            # Drawn from the participant's id: the lobby is rebuilt on every step, and a
            # participant's deadline must not move.
            draw = seeded_rng(self.seed, pid).gauss(0.0, 1.0)
            self._timeouts[pid] = max(0.0, self.timeout + self.timeout_sd * draw)
        if witness_only:
            self._witness_only.add(pid)
        if last_role is not None:
            self._last_role[pid] = last_role

    def leave(self, pid: str) -> None:
        """``pid`` left the lobby without a room."""
        self._waiting.pop(pid, None)

    def _bot_wait(self, pid: str) -> float:
        if not self.human_waits:
            return 0.0
        return seeded_rng(self.seed, pid, "wait").choice(self.human_waits)

    def _human_due(self) -> bool:
        if self.three_party or self.human_share >= 1:
            return True
        if self.human_share <= 0:
            return False
        formed = self.human_rooms + self.bot_rooms
        # Forming a human room now keeps the share at or under the target.
        return self.human_rooms < self.human_share * (formed + 1)

    def _condition(self) -> int:
        counts = self.rooms_per_condition
        condition = counts.index(min(counts))
        counts[condition] += 1
        return condition

    def _bot_room(self, pid: str, *, timed_out: bool = False) -> BotRoom:
        self.bot_rooms += 1
        del self._waiting[pid]
        return BotRoom(interrogator=pid, cell=self._condition(), timed_out=timed_out)

    def _partner(self, first: str) -> str | None:
        for pid in self._waiting:
            if pid != first and (pid in self._witness_only or not self.own_person):
                return pid
        return None

    def _pair(self, first: str, partner: str) -> Decision:
        del self._waiting[first], self._waiting[partner]
        if (
            partner not in self._witness_only
            and self._last_role.get(first) == "interrogator"
            and self._last_role.get(partner) != "interrogator"
        ):
            # Roles alternate over a participant's rounds: the last interrogator witnesses.
            first, partner = partner, first
        self.human_rooms += 1
        if not self.three_party:
            return HumanRoom(interrogator=first, witness=partner)
        low = min(self.positions)
        choices = [p for p in (1, 2) if self.positions[p - 1] == low]
        # Seeded by the room's number and interrogator: the lobby is rebuilt on every
        # step, and one Random(seed) rebuilt each time made every tie the same choice.
        rng = seeded_rng(self.seed, sum(self.positions), first)
        position: Literal[1, 2] = 1 if rng.choice(choices) == 1 else 2
        self.positions[position - 1] += 1
        return ThreeRoom(
            interrogator=first, witness=partner, cell=self._condition(), bot_position=position
        )

    def _interrogators(self) -> list[str]:
        return [pid for pid in self._waiting if pid not in self._witness_only]

    def step(self, now: float) -> list[Decision]:
        """Rooms to form and participants to let go at ``now``, in lobby order."""
        decisions: list[Decision] = []
        if self.market_size:
            return self._market_step(now)
        while candidates := self._interrogators():
            first = candidates[0]
            if not self._human_due():
                if now - self._waiting[first] < self._bot_wait(first):
                    break
                decisions.append(self._bot_room(first))
                continue
            partner = self._partner(first)
            if partner is not None:
                decisions.append(self._pair(first, partner))
                continue
            if now - self._waiting[first] < self._timeouts[first]:
                break
            if self.on_timeout == "end":
                del self._waiting[first]
                decisions.append(TimedOut(first))
            else:
                decisions.append(self._bot_room(first, timed_out=True))
        return decisions

    def _market_step(self, now: float) -> list[Decision]:
        decisions: list[Decision] = []
        while waiting := self._interrogators():
            full = len(waiting) >= self.market_size
            if not full and now - self._waiting[waiting[0]] < self.timeout:
                break
            if not full and self.on_timeout == "end":
                del self._waiting[waiting[0]]
                decisions.append(TimedOut(waiting[0]))
                continue
            bettors = tuple(waiting[: self.market_size])
            if full and len(waiting) > self.market_size and self._human_due():
                target = waiting[self.market_size]
                for pid in (*bettors, target):
                    del self._waiting[pid]
                self.human_rooms += 1
                decisions.append(MarketGame(bettors, None, target=target))
                continue
            if full and self._human_due() and now - self._waiting[waiting[0]] < self.timeout:
                break  # a person is due as the target: wait a while for one more
            for pid in bettors:
                del self._waiting[pid]
            self.bot_rooms += 1
            decisions.append(MarketGame(bettors, self._condition(), timed_out=not full))
        return decisions

    def next_deadline(self) -> float | None:
        """When :meth:`step` next has something to do without a new arrival."""
        candidates = self._interrogators()
        if not candidates:
            return None
        first = candidates[0]
        if self.market_size:
            return self._waiting[first] + self.timeout
        if not self._human_due():
            return self._waiting[first] + self._bot_wait(first)
        return self._waiting[first] + self._timeouts[first]
