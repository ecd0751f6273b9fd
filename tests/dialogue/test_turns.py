from __future__ import annotations

import itertools
from datetime import timedelta

from hypothesis import given
from hypothesis import strategies as st

from sdtt.dialogue.message import Message, segment_turns, turn_starts
from sdtt.dialogue.turns import (
    count_turns,
    flatten_turns,
    last_turns,
    side_runs,
    to_pingpong,
)
from tests.dialogue.strategies import START, conversations


def msgs(pattern: str) -> list[Message]:
    """'uurr' -> user, user, response, response, one minute apart."""
    side = {"u": "user", "r": "response"}
    return [
        Message(side=side[c], text=f"m{i}", time=START + timedelta(minutes=i))  # type: ignore[arg-type]
        for i, c in enumerate(pattern)
    ]


def shape(messages: list[Message]) -> list[tuple[int, int]]:
    return [(len(t.user), len(t.response)) for t in segment_turns(messages)]


def test_bursts_on_both_sides_form_one_turn() -> None:
    assert shape(msgs("uuurrurrrr")) == [(3, 2), (1, 4)]


def test_conversation_opening_with_response_has_empty_user_part() -> None:
    assert shape(msgs("rruur")) == [(0, 2), (2, 1)]


def test_trailing_user_messages_form_an_unanswered_turn() -> None:
    turns = segment_turns(msgs("uruu"))
    assert shape(msgs("uruu")) == [(1, 1), (2, 0)]
    assert not turns[-1].is_complete


def test_pingpong_keeps_first_message_of_each_run() -> None:
    kept = to_pingpong(msgs("uuurrurrrr"))
    assert [m.text for m in kept] == ["m0", "m3", "m5", "m6"]


def test_last_turns_and_runs() -> None:
    messages = msgs("uurrurrrurr")
    assert [m.text for m in last_turns(messages, 2)] == ["m4", "m5", "m6", "m7", "m8", "m9", "m10"]
    assert last_turns(messages, 0) == []
    assert last_turns(messages, 99) == messages
    assert side_runs(messages) == [2, 3, 2]
    assert side_runs(messages, "user") == [2, 1, 1]


@given(conversations())
def test_segmentation_loses_and_reorders_nothing(messages: list[Message]) -> None:
    assert flatten_turns(segment_turns(messages)) == messages


@given(conversations())
def test_turns_are_maximal_runs(messages: list[Message]) -> None:
    turns = segment_turns(messages)
    for index, turn in enumerate(turns):
        assert all(m.side == "user" for m in turn.user)
        assert all(m.side == "response" for m in turn.response)
        assert turn.user or turn.response
        if index > 0:
            assert turn.user, "only the first turn may lack a user part"
        if index < len(turns) - 1:
            assert turn.response, "only the last turn may lack a response part"


@given(conversations())
def test_pingpong_alternates_and_keeps_the_turn_count(messages: list[Message]) -> None:
    kept = to_pingpong(messages)
    assert all(a.side != b.side for a, b in itertools.pairwise(kept))
    assert count_turns(kept) == count_turns(messages)
    assert all(len(t.user) <= 1 and len(t.response) <= 1 for t in segment_turns(kept))
    # Every kept message is the first of its run in the original.
    for message in kept:
        position = messages.index(message)
        assert position == 0 or messages[position - 1].side != message.side


def expected_starts(messages: list[Message]) -> list[int]:
    lengths = [len(turn.messages) for turn in segment_turns(messages)]
    return [sum(lengths[:index]) for index in range(len(lengths))]


@given(conversations(), st.lists(st.integers(min_value=1, max_value=8), max_size=8))
def test_turn_starts_split_like_segment_turns_even_when_grown_piecewise(
    messages: list[Message], steps: list[int]
) -> None:
    """A chain keeps a topic's turn starts up to date as its messages arrive a reply at a
    time; after every reply, they are the turns' starts found from scratch."""
    assert turn_starts(messages) == expected_starts(messages)
    starts: list[int] = []
    end = 0
    for step in [*steps, *[1] * len(messages)]:
        end = min(len(messages), end + step)
        assert turn_starts(messages[:end], starts) == expected_starts(messages[:end])
