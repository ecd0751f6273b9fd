"""Where participants and rooms may go next: one table of moves for each, and the only
functions that change a phase in the store. A move the table does not list raises
:class:`BadMove` (as h11's ``_state.py`` raises on an event its state does not allow),
so a slip shows at once instead of leaving someone stranded.

Participants: ``consent`` → ``lobby`` → ``chat`` → ``verdict`` → ``done``, with these
other moves: anyone who leaves (a dropout) or times out in the lobby is ``done``; a
witness is ``done`` when the chat ends; a room cut short makes its people ``done``; a
market bettor goes from a game back to the ``lobby`` for the next; in a study of several
``rounds`` a participant with rounds left goes back to the ``lobby`` after each chat (a
witness from ``chat``, an interrogator from ``verdict``); the own person (the real person
behind the persona) goes from ``done`` back to the ``lobby`` after each chat.

Rooms: ``live`` → ``verdict`` (the chat finished) → ``done`` (the verdict given), or
``live`` → ``done`` (cut short, or a market settled).
"""

from __future__ import annotations

from typing import Any

from sdtt.serve.store import ParticipantState, RoomState, StudyStore

PARTICIPANT_MOVES: dict[ParticipantState, frozenset[ParticipantState]] = {
    "consent": frozenset({"lobby", "done"}),
    "lobby": frozenset({"chat", "done"}),
    "chat": frozenset({"verdict", "done", "lobby"}),
    "verdict": frozenset({"done", "lobby"}),
    "done": frozenset({"lobby"}),
}
"""From each participant phase, the phases it may move to."""
ROOM_MOVES: dict[RoomState, frozenset[RoomState]] = {
    "live": frozenset({"verdict", "done"}),
    "verdict": frozenset({"done"}),
    "done": frozenset(),
}
"""From each room state, the states it may move to."""


class BadMove(RuntimeError):
    """A participant or room was to move where the table does not allow."""


def move_participant(store: StudyStore, pid: str, to: ParticipantState, **fields: Any) -> None:
    """Move ``pid`` to phase ``to`` (and set ``fields``); raises :class:`BadMove`.

    The phase is checked and changed in one statement (one round trip to the database,
    and no other process can move them in between); read again only to say why not."""
    sources = [state for state, moves in PARTICIPANT_MOVES.items() if to in moves]
    if store.update_participant(pid, if_state=sources, state=to, **fields):
        return
    participant = store.participant(pid)
    if participant is None:
        raise BadMove(f"no participant {pid!r} to move to {to!r}")
    raise BadMove(f"participant {pid!r} cannot move from {participant.state!r} to {to!r}")


def move_room(store: StudyStore, room_id: str, to: RoomState, **fields: Any) -> None:
    """Move room ``room_id`` to state ``to`` (and set ``fields``); raises :class:`BadMove`
    (checked and changed in one statement, as :func:`move_participant`)."""
    sources = [state for state, moves in ROOM_MOVES.items() if to in moves]
    if store.update_room(room_id, if_state=sources, state=to, **fields):
        return
    room = store.room(room_id)
    if room is None:
        raise BadMove(f"no room {room_id!r} to move to {to!r}")
    raise BadMove(f"room {room_id!r} cannot move from {room.state!r} to {to!r}")
