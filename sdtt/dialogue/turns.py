"""What is done with burst turns: flattening, ping-pong conversion, the last N turns, counts
and run lengths (method.md, "Dialogue"). Segmenting messages into turns lives with
:class:`~sdtt.dialogue.message.Turn`, which it defines."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sdtt.dialogue.message import RESPONSE, Message, Turn, segment_turns


def flatten_turns(turns: Iterable[Turn]) -> list[Message]:
    """The messages of ``turns`` in order (the inverse of :func:`segment_turns`)."""
    return [message for turn in turns for message in turn.messages]


def to_pingpong(messages: Iterable[Message]) -> list[Message]:
    """Keep only the first message of each consecutive run of one side."""
    kept: list[Message] = []
    for message in messages:
        if not kept or kept[-1].side != message.side:
            kept.append(message)
    return kept


def last_turns(messages: Sequence[Message], count: int) -> list[Message]:
    """The messages of the last ``count`` burst turns (all of them if there are fewer)."""
    if count <= 0:
        return []
    return flatten_turns(segment_turns(messages)[-count:])


def count_turns(messages: Iterable[Message]) -> int:
    """How many burst turns the messages form."""
    return len(segment_turns(messages))


def side_runs(messages: Iterable[Message], side: str = RESPONSE) -> list[int]:
    """Lengths of the consecutive runs (bursts) of ``side``'s messages."""
    runs: list[int] = []
    previous: str | None = None
    for message in messages:
        if message.side == side:
            if previous == side:
                runs[-1] += 1
            else:
                runs.append(1)
        previous = message.side
    return runs
