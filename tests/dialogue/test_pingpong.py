"""Ping-pong conversion of burst chats, and the optional filter of meaningless turns."""

from __future__ import annotations

from datetime import timedelta

from sdtt.dialogue.condition import chat_mode
from sdtt.dialogue.message import Message, Transcript
from sdtt.dialogue.pingpong import (
    convert_to_pingpong,
    has_runs,
    is_meaningless,
    transcript_to_pingpong,
)
from tests.dialogue.strategies import START


def chat(*lines: tuple[str, str]) -> list[Message]:
    return [
        Message(
            side="user" if side == "A" else "response",
            text=text,
            time=START + timedelta(seconds=10 * i),
        )
        for i, (side, text) in enumerate(lines)
    ]


BURST = chat(
    ("A", "hey"),
    ("A", "you there?"),
    ("B", "yes"),
    ("B", "sorry, was cooking"),
    ("A", "..."),
    ("B", "what?"),
    ("A", "what did you cook"),
    ("B", "😂"),
    ("B", "pasta"),
)


def test_the_first_message_of_each_run_is_kept() -> None:
    done = convert_to_pingpong(BURST)
    assert [m.text for m in done.messages] == [
        "hey",
        "yes",
        "...",
        "what?",
        "what did you cook",
        "😂",
    ]
    assert done.removed_messages == 3 and done.filtered_turns == 0
    assert not has_runs(done.messages) and has_runs(BURST)


def test_the_filter_drops_whole_meaningless_turns_and_counts_them() -> None:
    done = convert_to_pingpong(BURST, drop_meaningless=True)
    assert [m.text for m in done.messages] == ["hey", "yes"]
    assert done.filtered_turns == 2
    assert not has_runs(done.messages)
    assert is_meaningless("  ?! ") and is_meaningless("") and not is_meaningless("ok 👍")


def test_a_converted_transcript_says_so_in_its_meta() -> None:
    burst = Transcript(id="h", topic="t", messages=BURST, meta={"source": "corpus"})
    assert chat_mode(burst.condition) == "burst"
    converted = transcript_to_pingpong(burst)
    assert chat_mode(converted.condition) == "pingpong"
    assert converted.meta["converted_from"] == "burst"
    assert converted.meta["pingpong_removed_messages"] == 3
    assert converted.id == "h" and burst.messages == BURST
    assert transcript_to_pingpong(converted) is converted
    # An older file that recorded the mode only in its settings is read as ping-pong.
    old = Transcript(id="o", meta={"settings": {"mode": "pingpong"}})
    assert chat_mode(old.condition) == "pingpong"
