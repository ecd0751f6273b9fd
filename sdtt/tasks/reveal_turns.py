"""Revealing a pair turn by turn (pure): what a reveal-mode judge sees at each step.

A chat is cut into burst turns (a run of User A's lines, then a run of User B's). Step
``t`` shows the first ``t`` turns of each chat of the pair, so both chats grow together;
a chat with fewer turns stays whole. Steps are ordinary :class:`PairItem` copies, so
every renderer (HTML, plain text) and every leak check applies to them unchanged.
"""

from __future__ import annotations

from sdtt.tasks.layout import pair_html
from sdtt.tasks.questionnaire import Line, PairItem

BELIEF_TEXT = (
    "So far, how likely is it that User B in chat 1 is the person (and User B in chat 2 "
    "the AI)? 0 = chat 1's User B is surely the AI, 100 = chat 2's User B is surely the AI."
)
SLIDER_LABELS = ("Chat 1 is the AI", "Not sure", "Chat 2 is the AI")
REVEAL_NOTE = (
    "Each pair of chats is shown turn by turn. After every turn, set the slider to how "
    "likely you think it is that User B in chat 1 is the person. You cannot go back."
)
STEP_SUFFIX = "step"
BELIEF_SUFFIX = "belief"


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


def belief_name(pair_id: str, turn: int) -> str:
    """The name of the belief asked after ``turn`` turns of a pair."""
    return f"{pair_id}{BELIEF_SUFFIX}{turn}"


def step_name(pair_id: str, turn: int) -> str:
    """The name of the screen (SurveyJS panel) showing step ``turn`` of a pair."""
    return f"{pair_id}{STEP_SUFFIX}{turn}"


def _step_header(turn: int, turns: int) -> str:
    return f'<p style="font-weight:bold;margin:0 0 8px 0;">Turn {turn} of {turns}</p>'


def reveal_steps(item: PairItem) -> list[tuple[int, str]]:
    """Each step of revealing ``item``: its turn and its HTML (a header, then the pair cut
    to that many turns), as every reveal-mode export shows it."""
    turns = reveal_turns(item)
    return [
        (turn, _step_header(turn, turns) + pair_html(revealed(item, turn)))
        for turn in range(1, turns + 1)
    ]
