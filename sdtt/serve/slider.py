"""Live belief slider readings as belief traces (:mod:`sdtt.beliefs.traces`).

A two-party interrogator's slider says how likely their partner is a person; each
reading becomes a point of one trace per interrogator and room (``item_kind`` 'single',
target 'chat', source 'slider'), so ``sdtt score`` and ``sdtt report`` analyse live
beliefs as they do reveal-mode ones. A point's ``turn`` is the number of burst turns the
witness had answered when the reading was given, ``message`` the messages sent so far,
``time_s`` the seconds since the room opened and ``text`` the witness messages since the
previous reading (for the moments that moved belief; researcher-side only).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sdtt.beliefs.traces import BeliefPoint, BeliefTrace
from sdtt.dialogue.message import Message
from sdtt.dialogue.shown import Shown
from sdtt.engine.simulate import answered_turns
from sdtt.serve.store import Belief, Room, StoredMessage


def _seconds(since: str, time: str) -> float:
    return max(0.0, (datetime.fromisoformat(time) - datetime.fromisoformat(since)).total_seconds())


def slider_points(
    room: Room, messages: Sequence[StoredMessage], readings: Sequence[Belief]
) -> list[BeliefPoint]:
    """The readings of one interrogator in ``room`` as belief points, in order given."""
    points = []
    shown = 0
    for reading in readings:
        before = [m for m in messages if m.seq <= reading.seq]
        chat = [
            Message(
                side="user" if m.sender == "interrogator" else "response",
                text=m.text,
                time=datetime.fromisoformat(m.time),
            )
            for m in before
        ]
        revealed = [m.text for m in before[shown:] if m.sender == "witness"]
        shown = max(shown, len(before))
        points.append(
            BeliefPoint(
                turn=answered_turns(chat),
                message=reading.seq,
                time_s=_seconds(room.created, reading.time),
                belief=float(reading.value),
                source="slider",
                text=" / ".join(revealed) or None,
            )
        )
    return points


def slider_traces(
    study: str,
    room: Room,
    messages: Sequence[StoredMessage],
    readings: Sequence[Belief],
    *,
    shown: Shown,
) -> list[BeliefTrace]:
    """One trace per interrogator of a one-chat room (two-party, own-person) with slider
    readings; three-party rooms show no slider and give none."""
    if room.witness == "both":
        return []
    mine = [b for b in readings if b.room == room.id and b.participant == room.interrogator]
    if not mine:
        return []
    ended_early = room.end_reason not in (None, "finished")
    return [
        BeliefTrace(
            study=study,
            judge_id=room.interrogator,
            judge_type="human",
            item_id=room.id,
            item_kind="single",
            target="chat",
            target_human=room.witness == "human",
            points=slider_points(room, messages, mine),
            excluded=ended_early,
            exclusion_reason=f"room ended early: {room.end_reason}" if ended_early else None,
            source=f"sdtt-serve:{study}",
            shown=shown,
        )
    ]
