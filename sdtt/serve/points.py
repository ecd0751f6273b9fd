"""Points per outcome (the spec's ``[study.points]``): what a participant earned, summed
over every chat they were in, shown on their done page and exported (``points.csv``) so
the researcher can pay bonuses.

Each chat counts once for each of its people, by how it ended for them: ``finished``
(an interrogator once they gave the verdict, a witness once the chat finished),
``partner_left``, ``partner_error``, ``ended``... as their completion page names it
(``left`` for whoever left it themselves); a lobby wait that found nobody counts as
``timeout``, and each right verdict once more as ``correct_verdict``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from sdtt.serve.lifecycle import OUTCOMES
from sdtt.serve.spec import Study
from sdtt.serve.store import Participant, Room, StudyStore, Verdict

LABELS = {
    "finished": "finished chat",
    "timeout": "wait with no partner found",
    "partner_left": "chat your partner could not finish",
    "partner_error": "chat your partner could not finish",
    "server_error": "chat cut short on our side",
    "restart": "chat cut short on our side",
    "server_lost": "chat cut short on our side",
    "ended": "chat the researcher ended",
    "correct_verdict": "right answer",
}
"""What each outcome is called on the done page (an early end the same whoever the
partner was: see :data:`sdtt.serve.state.EARLY_END`)."""


@dataclass(frozen=True)
class Earned:
    """A participant's outcomes so far and the points they are worth."""

    counts: dict[str, int]
    """Outcome (or ``correct_verdict``) → how many times."""
    points: dict[str, float]
    """Outcome → points earned by it (only outcomes the spec gives points for)."""

    @property
    def total(self) -> float:
        """All points earned."""
        return sum(self.points.values())


def verdict_right(room: Room, verdict: Verdict) -> bool:
    """Whether ``verdict`` on ``room`` found the person (the bot, in two-party)."""
    if room.witness == "both":
        return verdict.human == str(3 - (room.bot_position or 1))
    return (verdict.human == "yes") == (room.witness == "human")


def chat_outcome(room: Room, participant: Participant) -> str | None:
    """How ``room`` ended for ``participant`` (None: not yet)."""
    if room.state == "live":
        return None
    if room.state == "verdict":  # the chat finished; the interrogator's verdict is due
        return None if participant.pid == room.interrogator else "finished"
    if participant.outcome == "left" and participant.room == room.id:
        return "left"
    reason = room.end_reason or "finished"
    return OUTCOMES.get(reason, reason)


def earned(
    study: Study,
    participant: Participant,
    rooms: Sequence[Room],
    verdicts: Sequence[Verdict],
) -> Earned:
    """What ``participant`` earned in ``rooms`` (the study's) with ``verdicts``."""
    counts: Counter[str] = Counter()
    pid = participant.pid
    for room in rooms:
        if pid in (room.interrogator, room.witness_pid):
            outcome = chat_outcome(room, participant)
            if outcome is not None:
                counts[outcome] += 1
    if participant.outcome == "timeout":
        counts["timeout"] += 1
    by_id = {room.id: room for room in rooms}
    counts["correct_verdict"] += sum(
        1
        for v in verdicts
        if v.participant == pid and v.room in by_id and verdict_right(by_id[v.room], v)
    )
    worth: dict[str, float] = {str(k): v for k, v in study.spec.study.points.items()}
    points = {key: counts[key] * value for key, value in worth.items() if counts[key]}
    return Earned(counts={k: n for k, n in counts.items() if n}, points=points)


def earned_by(study: Study, store: StudyStore, pid: str) -> Earned | None:
    """What ``pid`` earned so far (None: the study gives no points, or no such id)."""
    if not study.spec.study.points:
        return None
    participant = store.participant(pid)
    if participant is None:
        return None
    return earned(study, participant, store.rooms(), store.verdicts())


def describe(earned: Earned) -> dict[str, object]:
    """The done page's points: the total, a sentence saying it, and one line per
    outcome that earned points."""
    lines = [
        f"{earned.counts[key]} × {LABELS.get(key, key)}: {_points(value)}"
        for key, value in earned.points.items()
        if value
    ]
    return {
        "total": earned.total,
        "text": f"You earned {_points(earned.total)} in this study.",
        "lines": lines,
    }


def _points(value: float) -> str:
    return f"{value:g} point" + ("" if value == 1 else "s")
