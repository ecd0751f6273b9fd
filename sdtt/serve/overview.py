"""What the researcher's admin page shows of a running study (server-side only; never sent
to participants): who waits, the live rooms, finished rooms per condition and who left
the study early."""

from __future__ import annotations

from typing import Any

from sdtt.serve.matchmaker import Matchmaker
from sdtt.serve.spec import Study
from sdtt.serve.store import Room, StudyStore


def overview(study: Study, store: StudyStore, matchmaker: Matchmaker) -> dict[str, Any]:
    """The admin page's figures (see :func:`sdtt.serve.admin.admin_page`)."""
    participants = store.participants()
    rooms = store.rooms()
    finished: dict[str, int] = {}
    for room in rooms:
        if room.state != "live" and room.end_reason == "finished":
            label = condition_label(study, room)
            finished[label] = finished.get(label, 0) + 1
    live = [
        {
            "id": room.id,
            "condition": condition_label(study, room),
            "interrogator": room.interrogator,
            "witness": room.witness_pid,
            "messages": len(store.messages(room.id)),
            "created": room.created,
        }
        for room in rooms
        if room.state == "live"
    ]
    return {
        "waiting": matchmaker.waiting,
        "live": live,
        "finished": finished,
        "excluded": [
            {"pid": p.pid, "outcome": p.outcome}
            for p in participants
            if p.state == "done" and p.outcome not in (None, "finished")
        ],
    }


def condition_label(study: Study, room: Room) -> str:
    """What a room tests, for the researcher."""
    if room.cell is None:
        return "human witness"
    label = study.conditions[room.cell].label()
    return f"three-party: {label}" if room.witness == "both" else label
