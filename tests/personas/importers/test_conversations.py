"""Choosing the persona, assigning sides, group chats and splitting at silences."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdtt.dialogue.message import Message
from sdtt.errors import InputError
from sdtt.personas.conversations import (
    ChatMessage,
    ConversationSplitter,
    assign_sides,
    find_participant,
    split_conversations,
)

T0 = datetime(2024, 4, 13, 9, 0, tzinfo=UTC)


def chat(*rows: tuple[str, int]) -> list[ChatMessage]:
    """Messages from (sender, minutes after T0)."""
    return [ChatMessage(sender=s, text=f"{s} {m}", time=T0 + timedelta(minutes=m)) for s, m in rows]


COUNTS = {"Ann Smith": 5, "Bob Jones": 3, "~ Dee": 1, "Ann Lee": 2}


@pytest.mark.parametrize(
    ("wanted", "found"),
    [
        ("Ann Smith", "Ann Smith"),
        ("  ann   SMITH ", "Ann Smith"),
        ("Dee", "~ Dee"),
        ("Bobby", "Bob Jones"),  # an alias
    ],
)
def test_find_participant(wanted: str, found: str) -> None:
    assert find_participant(wanted, COUNTS, {"Bob Jones": {"Bobby"}}) == found


def test_part_of_a_name_is_refused_with_the_candidates() -> None:
    # "bob" fits one sender only, yet it is not the name: the user must say whom.
    with pytest.raises(InputError, match="only part of a name") as caught:
        find_participant("bob", COUNTS)
    assert "'Bob Jones'" in str(caught.value) and caught.value.field == "--me"
    with pytest.raises(InputError) as caught:
        find_participant("ann", COUNTS)
    assert "'Ann Lee', 'Ann Smith'" in str(caught.value)
    with pytest.raises(InputError, match="only part of a name"):
        find_participant("jones", COUNTS)


def test_ambiguous_and_unknown_names() -> None:
    with pytest.raises(InputError, match="fits several participants"):
        find_participant("ann smith", {"Ann Smith": 1, "ann  smith": 2})
    with pytest.raises(InputError) as caught:
        find_participant("Carol", COUNTS, option="--with")
    assert caught.value.field == "--with"
    assert "'Ann Smith' (5), 'Bob Jones' (3)" in str(caught.value)


def test_sides_and_time_order() -> None:
    messages = chat(("Bob", 2), ("Ann", 1), ("Bob", 3))
    sided = assign_sides(messages, "Ann")
    assert [(m.side, m.text) for m in sided.messages] == [
        ("response", "Ann 1"),
        ("user", "Bob 2"),
        ("user", "Bob 3"),
    ]


def test_group_chats() -> None:
    messages = chat(("Ann", 0), ("Bob", 1), ("Cleo", 2), ("Ann", 3))
    with pytest.raises(InputError, match="group chat"):
        assign_sides(messages, "Ann")
    merged = assign_sides(messages, "Ann", merge_others=True)
    assert [m.side for m in merged.messages] == ["response", "user", "user", "response"]
    only_bob = assign_sides(messages, "Ann", ["Bob"])
    assert [m.text for m in only_bob.messages] == ["Ann 0", "Bob 1", "Ann 3"]
    assert only_bob.dropped_others == 1


def test_chat_with_nobody_else() -> None:
    with pytest.raises(InputError, match="only 'Ann' wrote"):
        assign_sides(chat(("Ann", 0), ("Ann", 1)), "Ann")


def test_split_at_silences_longer_than_the_gap() -> None:
    times = [0, 30, 90, 151, 152]
    messages = [Message(side="user", text=str(m), time=T0 + timedelta(minutes=m)) for m in times]
    parts = split_conversations(messages, timedelta(minutes=60))
    # Exactly the gap (30 -> 90) stays together; more (90 -> 151) splits.
    assert [[m.text for m in part] for part in parts] == [["0", "30", "90"], ["151", "152"]]


def test_threads_never_mix() -> None:
    messages = [Message(side="user", text=str(m), time=T0 + timedelta(minutes=m)) for m in range(4)]
    parts = split_conversations(messages, timedelta(hours=1), ["a", "b", "a", "b"])
    assert [[m.text for m in part] for part in parts] == [["0", "2"], ["1", "3"]]


def _split_whole(
    messages: list[Message], gap: timedelta, threads: list[str | None]
) -> list[list[Message]]:
    """The rule spelt out on the whole chat: each thread's messages cut at silences
    longer than ``gap``, the conversations sorted (stably) by their first message."""
    by_thread: dict[str | None, list[Message]] = {}
    for message, thread in zip(messages, threads, strict=True):
        by_thread.setdefault(thread, []).append(message)
    conversations: list[list[Message]] = []
    for thread_messages in by_thread.values():
        current: list[Message] = []
        for message in thread_messages:
            if current and message.time - current[-1].time > gap:
                conversations.append(current)
                current = []
            current.append(message)
        conversations.append(current)
    return sorted(conversations, key=lambda conversation: conversation[0].time)


@settings(max_examples=400, deadline=None)
@given(
    steps=st.lists(
        st.tuples(
            st.sampled_from([0, 0, 1, 5, 30, 61, 200]), st.sampled_from([None, "a", "b", "c"])
        ),
        max_size=40,
    ),
    gap_minutes=st.sampled_from([1, 30, 60]),
)
def test_split_a_message_at_a_time_is_the_split_of_the_whole_chat(
    steps: list[tuple[int, str | None]], gap_minutes: int
) -> None:
    # Equal times, threads that fall silent and come back, and silences longer than the
    # gap in one thread while another goes on: the order and the cuts must be the same.
    minutes = 0
    messages, threads = [], []
    for number, (step, thread) in enumerate(steps):
        minutes += step
        messages.append(
            Message(side="user", text=str(number), time=T0 + timedelta(minutes=minutes))
        )
        threads.append(thread)
    gap = timedelta(minutes=gap_minutes)
    handed: list[list[Message]] = []
    splitter = ConversationSplitter(gap, handed.append)
    for message, thread in zip(messages, threads, strict=True):
        splitter.add(message, thread)
    splitter.close()
    assert (
        handed
        == split_conversations(messages, gap, threads)
        == _split_whole(messages, gap, threads)
    )


def test_a_finished_conversation_is_handed_on_before_the_chat_ends() -> None:
    handed: list[list[Message]] = []
    splitter = ConversationSplitter(timedelta(minutes=30), handed.append)
    for minutes, thread in ((0, None), (1, "t"), (5, None), (100, None), (101, "t")):
        splitter.add(Message(side="user", text="x", time=T0 + timedelta(minutes=minutes)), thread)
    # At minute 100 both the first flow and the thread had been silent past the gap.
    assert [[m.time.minute for m in c] for c in handed] == [[0, 5], [1]]
