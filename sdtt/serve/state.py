"""What a participant's browser is sent to show where they are: the phase frame and the
chat so far, rebuilt from the store whenever the phase changes or the browser
(re)connects, so a reconnect shows everything again."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import trio

from sdtt.serve.market_room import MarketRoom
from sdtt.serve.protocol import message_frame
from sdtt.serve.room import LiveRoom
from sdtt.serve.spec import Study
from sdtt.serve.store import StudyStore

NOTES = {
    "finished": "Thank you, you have finished the study.",
    "timeout": "No chat partner could be found in time. Thank you for waiting.",
    "partner_error": "Your chat partner could not continue, so the chat ended early. "
    "You still get the completion code.",
    "server_error": "Something went wrong on our side, so the chat ended early. You "
    "still get the completion code.",
    "ended": "The researcher ended this chat. You still get the completion code.",
    "partner_left": "Your chat partner left, so the chat ended early. You still get the "
    "completion code.",
    "left": "You left the chat, so it ended. You still get the completion code.",
    "restart": "The chat was interrupted by a server restart. You still get the completion code.",
    "server_lost": "The chat was interrupted because one of our servers stopped. You "
    "still get the completion code.",
}
"""What a participant who is done reads, by their outcome."""


def state_frames(
    study: Study, store: StudyStore, rooms: Mapping[str, LiveRoom], pid: str
) -> list[dict[str, Any]]:
    """The frames that show ``pid`` their phase and, in a chat or at the verdict, the
    messages of their room (``rooms``: the live rooms this process runs, by id)."""
    participant = store.participant(pid)
    assert participant is not None
    frame: dict[str, Any] = {"type": "phase", "phase": participant.state}
    if participant.state == "chat":
        frame["role"] = participant.role
        frame["instructions"] = _instructions(study, participant.role)
        room = store.room(participant.room or "")
        three = room is not None and room.witness == "both"
        frame["chats"] = 2 if three and participant.role == "interrogator" else 1
        live = rooms.get(participant.room or "")
        limit = study.spec.chat.time_limit
        if limit:  # seconds left on the chat's clock (the whole limit until it runs)
            left = limit if live is None else live.closes_at - trio.current_time()
            frame["ends_in"] = max(0, round(min(left, limit)))
    if participant.state == "verdict":
        room = store.room(participant.room or "")
        frame["chats"] = 2 if room is not None and room.witness == "both" else 1
    if participant.state == "done":
        spec = study.spec.study
        frame["code"] = spec.completion_code
        frame["url"] = spec.completion_url
        frame["note"] = NOTES.get(participant.outcome or "finished", NOTES["finished"])
    frames = [frame]
    market = rooms.get(participant.room or "")
    if participant.state == "chat" and isinstance(market, MarketRoom):
        frame["market"] = True
        messages = store.messages(market.id)
        frames.append({"type": "history", "messages": [market.frame_for(m, pid) for m in messages]})
        if pid in market.bettors:
            frames.append(market.state_frame(pid))
        else:
            frame["market"] = False  # the target answers; it does not trade
        return frames
    if participant.state in ("chat", "verdict") and participant.room is not None:
        frames.append(
            {
                "type": "history",
                "messages": [
                    message_frame(m, participant.role or "interrogator")
                    for m in store.messages(participant.room)
                ],
            }
        )
    return frames


def _instructions(study: Study, role: str | None) -> str:
    spec = study.spec.study
    return spec.witness_instructions if role == "witness" else spec.instructions
