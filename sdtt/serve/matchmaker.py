"""The lobby as a pure state machine: who waits, which rooms to form, who timed out.

It reads no clock and does no I/O: the server tells it when participants arrive or
leave and asks :meth:`Matchmaker.step` at a time of its choosing (the earliest being
:meth:`Matchmaker.next_deadline`), so every rule is tested on plain numbers.

Rules:

- a room's witness is a person while the share of human-witness rooms formed so far is
  below the spec's ``human_witness_share`` (and two people wait); otherwise the bot;
- a bot room takes the condition with the fewest rooms so far (the first such, so the
  design fills evenly in a fixed order);
- of two people paired, the one who waited longer is the interrogator;
- someone alone in the lobby while a human-witness room is due waits for a partner up to
  the timeout; then ``on_timeout`` decides: ``"bot"`` gives them a bot room after all,
  ``"end"`` finishes them (with the completion code).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sdtt.serve.spec import OnTimeout


@dataclass(frozen=True)
class BotRoom:
    """Form a room of ``interrogator`` with the bot of ``condition``."""

    interrogator: str
    condition: int
    timed_out: bool = False


@dataclass(frozen=True)
class HumanRoom:
    """Form a room of two people."""

    interrogator: str
    witness: str


@dataclass(frozen=True)
class TimedOut:
    """``pid`` waited too long and leaves without a chat."""

    pid: str


Decision = BotRoom | HumanRoom | TimedOut


@dataclass
class Matchmaker:
    """The lobby of one study (see the module docstring for its rules)."""

    conditions: int
    timeout: float
    on_timeout: OnTimeout = "bot"
    human_share: float = 0.0
    rooms_per_condition: list[int] = field(default_factory=list)
    human_rooms: int = 0
    bot_rooms: int = 0
    _waiting: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.conditions < 1:
            raise ValueError("a study needs at least one condition")
        if not self.rooms_per_condition:
            self.rooms_per_condition = [0] * self.conditions

    @property
    def waiting(self) -> list[str]:
        """Participants in the lobby, longest waiting first."""
        return list(self._waiting)

    def arrive(self, pid: str, now: float) -> None:
        """``pid`` entered the lobby at ``now`` (a second arrival keeps the first time)."""
        self._waiting.setdefault(pid, now)

    def leave(self, pid: str) -> None:
        """``pid`` left the lobby without a room."""
        self._waiting.pop(pid, None)

    def _human_due(self) -> bool:
        if self.human_share <= 0:
            return False
        formed = self.human_rooms + self.bot_rooms
        # Forming a human room now keeps the share at or under the target.
        return self.human_rooms < self.human_share * (formed + 1) or self.human_share >= 1

    def _bot_room(self, pid: str, *, timed_out: bool = False) -> BotRoom:
        counts = self.rooms_per_condition
        condition = counts.index(min(counts))
        counts[condition] += 1
        self.bot_rooms += 1
        del self._waiting[pid]
        return BotRoom(interrogator=pid, condition=condition, timed_out=timed_out)

    def step(self, now: float) -> list[Decision]:
        """Rooms to form and participants to let go at ``now``, in lobby order."""
        decisions: list[Decision] = []
        while self._waiting:
            first = next(iter(self._waiting))
            if self._human_due():
                if len(self._waiting) >= 2:
                    pair = list(self._waiting)[:2]
                    for pid in pair:
                        del self._waiting[pid]
                    self.human_rooms += 1
                    decisions.append(HumanRoom(interrogator=pair[0], witness=pair[1]))
                    continue
                if now - self._waiting[first] < self.timeout:
                    break
                if self.on_timeout == "end":
                    del self._waiting[first]
                    decisions.append(TimedOut(first))
                    continue
                decisions.append(self._bot_room(first, timed_out=True))
                continue
            decisions.append(self._bot_room(first))
        return decisions

    def next_deadline(self) -> float | None:
        """When :meth:`step` next has something to do without a new arrival."""
        if not self._waiting:
            return None
        return next(iter(self._waiting.values())) + self.timeout
