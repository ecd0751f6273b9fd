"""What a participant's browser is sent to show where they are: the phase frame and the
chat so far, rebuilt from the store whenever the phase changes or the browser
(re)connects, so a reconnect shows everything again."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import trio

from sdtt.serve.market_room import MarketRoom, game_id
from sdtt.serve.participants import OWN_PERSON, rounds_played
from sdtt.serve.points import describe, earned_by, verdict_right
from sdtt.serve.protocol import message_frame
from sdtt.serve.room import LiveRoom
from sdtt.serve.spec import Study, StudySection
from sdtt.serve.store import Participant, Room, StoredMessage, StudyStore

EARLY_END = (
    "Your chat partner could not continue, so the chat ended early. You still get the "
    "completion code."
)
"""What an interrogator reads when a chat ended early, the same whether a person left
(``partner_left``) or the bot failed (``partner_error``): named apart, each told the
interrogator which kind of witness it had been."""
NOTES = {
    "finished": "Thank you, you have finished the study.",
    "timeout": "No chat partner could be found in time. Thank you for waiting.",
    "partner_error": EARLY_END,
    "server_error": "Something went wrong on our side, so the chat ended early. You "
    "still get the completion code.",
    "ended": "The researcher ended this chat. You still get the completion code.",
    "partner_left": EARLY_END,
    "left": "You left the chat, so it ended. You still get the completion code.",
    "restart": "The chat was interrupted by a server restart. You still get the completion code.",
    "server_lost": "The chat was interrupted because one of our servers stopped. You "
    "still get the completion code.",
    "declined": "You chose not to take part, so no data of yours will be used. Please "
    "return the study on the platform you came from; you can close this page.",
}
"""What a participant who is done reads, by their outcome."""


ROOM_PHASES = ("chat", "verdict")
"""The phases whose frames name the participant's room and show its messages."""


@dataclass(frozen=True)
class StateRows:
    """What :func:`state_frames` reads from the store (see :func:`state_rows`)."""

    participant: Participant | None
    room: Room | None = None
    """Their room, in the phases whose frame names it (chat, verdict)."""
    messages: list[StoredMessage] | None = None
    """Their room's messages as stored (shown unless this process runs the room)."""


def state_rows(store: StudyStore, pid: str) -> StateRows:
    """The rows :func:`state_frames` reads (a worker thread may read them, see
    :func:`~sdtt.serve.store.off_loop`)."""
    participant = store.participant(pid)
    if participant is None or participant.room is None or participant.state not in ROOM_PHASES:
        return StateRows(participant)
    room, messages = store.room(participant.room), store.messages(participant.room)
    return StateRows(participant, room, messages)


def state_frames(
    study: Study,
    store: StudyStore,
    rooms: Mapping[str, LiveRoom],
    pid: str,
    rows: StateRows | None = None,
) -> list[dict[str, Any]]:
    """The frames that show ``pid`` their phase and, in a chat or at the verdict, the
    messages of their room (``rooms``: the live rooms this process runs, by id;
    ``rows``: :func:`state_rows`, read here unless given)."""
    rows = state_rows(store, pid) if rows is None else rows
    participant, room = rows.participant, rows.room
    assert participant is not None
    frame: dict[str, Any] = {"type": "phase", "phase": participant.state}
    if participant.state == "lobby" and participant.platform_study != OWN_PERSON:
        frame["wait"] = _lobby_wait(study)
    if participant.state == "lobby" and study.spec.study.mode == "market":
        frame["market"] = True  # the page says they wait for the other bettors
    if participant.state == "chat":
        frame["role"] = participant.role
        frame["instructions"] = _instructions(study, participant.role)
        # A market game runs on its clock: "turn k of X" only when X also ends it.
        counted = study.spec.study.mode != "market" or study.spec.market.end_at_turns
        frame["turns"] = study.spec.study.turns if counted else 0
        if study.spec.study.rounds > 1 and participant.platform_study != OWN_PERSON:
            frame["round"] = [rounds_played(store, pid), study.spec.study.rounds]
        three = room is not None and room.witness == "both"
        frame["chats"] = 2 if three and participant.role == "interrogator" else 1
        if study.spec.study.belief_slider and participant.role == "interrogator":
            frame["belief"] = _last_reading(store, pid, participant.room)
        live = rooms.get(participant.room or "")
        limit = study.spec.time_limit
        if limit:  # seconds left on the chat's clock (the whole limit until it runs)
            left = limit if live is None else live.closes_at - trio.current_time()
            frame["ends_in"] = max(0, round(min(left, limit)))
    if participant.state == "verdict":
        frame["chats"] = 2 if room is not None and room.witness == "both" else 1
    if participant.state == "done":
        spec = study.spec.study
        declined = participant.outcome == "declined"  # no code for who did not take part
        code = completion_code(study, participant.outcome)
        frame["code"] = None if declined else code
        frame["url"] = None if declined else _completion_url(spec.completion_url, code, spec)
        if spec.feedback and participant.room is not None:
            frame["right"] = _verdict_right(store, pid, participant.room)
        points = earned_by(study, store, pid)
        if points is not None and not declined:
            frame["points"] = describe(points)
        frame["note"] = NOTES.get(participant.outcome or "finished", NOTES["finished"])
    frames = [frame]
    if participant.state == "chat" and study.spec.study.mode == "market" and participant.room:
        frame["game"] = game_id(participant.room)  # every market frame of theirs names it
        frame["market"] = participant.role != "witness"  # the target answers; it does not trade
        market = rooms.get(participant.room)
        if not isinstance(market, MarketRoom):
            if frame["market"]:  # the game runs in another process: it sends the rest
                store.publish({"room": participant.room, "market_state": pid})
                return frames
        elif frame["market"]:
            return [*frames, *market.state_frames(pid)]
        else:
            return [*frames, {"type": "history", "messages": market.history_for(pid)}]
    if participant.state in ROOM_PHASES and participant.room is not None:
        live = rooms.get(participant.room)  # run here: its messages are at hand
        role = participant.role or "interrogator"
        if live is None:
            assert rows.messages is not None  # (read with the room, see state_rows)
            messages = rows.messages
        elif role == "witness":  # a witness sees its own answers at once
            messages = sorted([*live.shown, *live.unshown()], key=lambda m: m.seq)
        else:  # not the answers the typing indicator still holds from the interrogator
            messages = live.shown
        frames.append({"type": "history", "messages": [message_frame(m, role) for m in messages]})
        if live is not None and role != "witness":
            frames.extend(live.indicator_frames())
    return frames


def completion_code(study: Study, outcome: str | None) -> str:
    """The completion code of a participant done with ``outcome`` (the spec's
    ``completion_codes`` entry for it, else ``completion_code``)."""
    spec = study.spec.study
    codes: dict[str, str] = {str(k): v for k, v in spec.completion_codes.items()}
    return codes.get(outcome or "finished", spec.completion_code)


def _completion_url(url: str | None, code: str, spec: StudySection) -> str | None:
    """``completion_url`` with the outcome's code in place of the main one (Prolific's
    URL carries the code)."""
    if url is None or code == spec.completion_code:
        return url
    return url.replace(spec.completion_code, code)


def _verdict_right(store: StudyStore, pid: str, room_id: str) -> bool | None:
    """Whether ``pid``'s verdict in the room was right (None: no verdict there)."""
    room = store.room(room_id)
    verdict = next(
        (v for v in store.verdicts() if v.participant == pid and v.room == room_id), None
    )
    if room is None or verdict is None:
        return None
    return verdict_right(room, verdict)


def _lobby_wait(study: Study) -> float:
    """Real seconds the lobby waits at most (the page says roughly how long)."""
    return study.spec.lobby.timeout / study.spec.chat.speed


def _last_reading(store: StudyStore, pid: str, room: str | None) -> int | None:
    """The slider reading ``pid`` last gave in ``room`` (a reload puts the slider
    back there), None if none."""
    mine = [b.value for b in store.beliefs() if b.participant == pid and b.room == room]
    return mine[-1] if mine else None


def _instructions(study: Study, role: str | None) -> str:
    spec = study.spec.study
    return spec.witness_instructions if role == "witness" else spec.instructions
