"""Are the two chats of a pair comparable? Checked before judges see anything.

A judge should have to read the chats to tell them apart. A pair fails (a ``comparable``
problem, see :func:`~sdtt.questionnaires.pairing.comparability_problem`) when what is
shown differs in a way that gives the answer without reading: a different number of
turns, one chat with far more messages than the other, different modes (a burst chat
next to a ping-pong one), or times of a different kind (one chat's clock showing only
whole minutes, as some chat exports do, next to one with seconds).
"""

from __future__ import annotations

from collections.abc import Sequence

from sdtt.dialogue.message import Message
from sdtt.dialogue.pingpong import has_runs
from sdtt.dialogue.turns import count_turns
from sdtt.tasks.study import Timestamps

MAX_MESSAGE_RATIO = 3.0
"""One chat may show at most this many times the other's messages..."""
MIN_MESSAGE_GAP = 4
"""...unless they differ by fewer messages than this (short chats vary a lot)."""


def _whole_minutes(messages: Sequence[Message]) -> bool:
    return len(messages) > 1 and all(message.time.second == 0 for message in messages)


def differences(
    bot: Sequence[Message],
    human: Sequence[Message],
    *,
    bot_mode: str,
    human_mode: str,
    timestamps: Timestamps,
) -> list[str]:
    """How the shown bot chat and human chat differ beyond their words (empty: comparable)."""
    found: list[str] = []
    turns = count_turns(bot), count_turns(human)
    if turns[0] != turns[1]:
        found.append(f"{turns[0]} turns against {turns[1]}")
    few, many = sorted((len(bot), len(human)))
    if many - few >= MIN_MESSAGE_GAP and many > MAX_MESSAGE_RATIO * max(few, 1):
        found.append(f"{len(bot)} messages against {len(human)}")
    if bot_mode != human_mode:
        found.append(f"a {bot_mode} chat against a {human_mode} one")
    elif bot_mode == "pingpong" and has_runs(human):
        found.append("the human chat has bursts in a ping-pong pair")
    if timestamps != "hidden" and _whole_minutes(bot) != _whole_minutes(human):
        found.append("the times of one chat are whole minutes, the other's have seconds")
    return found
