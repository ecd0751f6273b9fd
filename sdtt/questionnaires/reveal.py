"""Revealing a pair turn by turn (pure): what a reveal-mode judge sees at each step.

A chat is cut into burst turns (a run of User A's lines, then a run of User B's). Step
``t`` shows the first ``t`` turns of each chat of the pair, so both chats grow together;
a chat with fewer turns stays whole. Steps are ordinary :class:`PairItem` copies, so
every renderer (HTML, plain text) and every leak check applies to them unchanged.
"""

from __future__ import annotations

from sdtt.questionnaires.questionnaire import Line, PairItem


def chat_turns(lines: list[Line]) -> list[list[Line]]:
    """The burst turns of one chat: A's run then B's run (either may be empty)."""
    turns: list[list[Line]] = []
    for line in lines:
        starts_turn = not turns or (line.speaker == "A" and turns[-1][-1].speaker == "B")
        if starts_turn:
            turns.append([])
        turns[-1].append(line)
    return turns


def reveal_turns(item: PairItem) -> int:
    """How many steps revealing ``item`` takes (the longer chat's turns)."""
    return max((len(chat_turns(lines)) for lines in item.chats), default=0)


def revealed(item: PairItem, turn: int) -> PairItem:
    """``item`` as shown after ``turn`` turns of each chat (line numbers kept)."""
    chats = tuple(
        [line for part in chat_turns(lines)[:turn] for line in part] for lines in item.chats
    )
    return item.model_copy(update={"chats": (chats[0], chats[1])})


def new_text(item: PairItem, turn: int) -> str:
    """User B's lines that step ``turn`` adds, per chat (for the moments that moved belief)."""
    parts = []
    for number, lines in enumerate(item.chats, start=1):
        turns = chat_turns(lines)
        if turn - 1 < len(turns):
            said = " / ".join(line.text for line in turns[turn - 1] if line.speaker == "B")
            if said:
                parts.append(f"chat {number}: {said}")
    return "\n".join(parts)
