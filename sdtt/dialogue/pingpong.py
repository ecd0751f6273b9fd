"""Ping-pong versions of burst chats (method.md, "Dialogue"), with an optional filter.

The paper derives its ping-pong data from burst data by keeping the first message of
every run of one side (:func:`~sdtt.dialogue.turns.to_pingpong`), then removed empty or
meaningless turns by hand. :func:`convert_to_pingpong` does both and counts what it
left out, so callers can report it; the filter is off unless asked for.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from sdtt.dialogue.condition import Condition, chat_mode
from sdtt.dialogue.message import Message, Transcript, segment_turns
from sdtt.dialogue.turns import flatten_turns, to_pingpong


def is_meaningless(text: str) -> bool:
    """True for a message with no letter or digit: empty, punctuation, emoji only."""
    return not any(char.isalnum() for char in text)


def has_runs(messages: Sequence[Message]) -> bool:
    """True when some side writes twice in a row (the chat is not ping-pong)."""
    return any(before.side == after.side for before, after in itertools.pairwise(messages))


@dataclass(frozen=True)
class Conversion:
    """A chat converted to ping-pong, and what was left out."""

    messages: list[Message]
    removed_messages: int
    """Later messages of runs, left out by the conversion."""
    filtered_turns: int
    """Turns left out by the filter because one of their messages was meaningless."""


def convert_to_pingpong(
    messages: Sequence[Message], *, drop_meaningless: bool = False
) -> Conversion:
    """Keep the first message of each run; with ``drop_meaningless`` also leave out every
    turn whose user or response message is meaningless (:func:`is_meaningless`).

    Dropping whole turns keeps the sides alternating.
    """
    kept = to_pingpong(messages)
    removed = len(messages) - len(kept)
    filtered = 0
    if drop_meaningless:
        turns = segment_turns(kept)
        good = [turn for turn in turns if not any(is_meaningless(m.text) for m in turn.messages)]
        filtered = len(turns) - len(good)
        kept = flatten_turns(good)
    return Conversion(messages=kept, removed_messages=removed, filtered_turns=filtered)


def transcript_to_pingpong(transcript: Transcript, *, drop_meaningless: bool = False) -> Transcript:
    """A ping-pong copy of ``transcript``; its meta says it was converted and what was lost.

    A transcript already in ping-pong mode comes back unchanged (filtered, if asked).
    """
    if chat_mode(transcript.condition) == "pingpong" and not drop_meaningless:
        return transcript
    done = convert_to_pingpong(transcript.messages, drop_meaningless=drop_meaningless)
    meta = dict(transcript.meta)
    if chat_mode(transcript.condition) != "pingpong":
        meta["converted_from"] = "burst"
    meta["pingpong_removed_messages"] = done.removed_messages
    if drop_meaningless:
        meta["pingpong_filtered_turns"] = done.filtered_turns
    condition = (transcript.condition or Condition()).model_copy(update={"mode": "pingpong"})
    return transcript.model_copy(
        update={"messages": done.messages, "meta": meta, "condition": condition}
    )
