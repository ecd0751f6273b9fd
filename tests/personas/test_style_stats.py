from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from sdtt.dialogue.message import Message
from sdtt.personas.style_stats import EMOTICON, message_style_stats, style_stats

START = datetime(2024, 3, 1, 18, 0, tzinfo=UTC)


def conversation(*lines: tuple[str, str]) -> list[Message]:
    return [
        Message(
            side="user" if who == "U" else "response",
            text=text,
            time=START + timedelta(seconds=9 * i),
        )
        for i, (who, text) in enumerate(lines)
    ]


EXAMPLE = conversation(
    ("U", "hi there"),
    ("R", "hey :)"),
    ("R", "Whats up?"),
    ("U", "not much. you?"),
    ("R", "haha same!!"),
    ("R", "🎉"),
    ("R", "I went out."),
    ("R", "  "),
    ("U", "nice..."),
    ("R", "yeah..."),
)


def test_counts_lengths_and_bursts_of_the_persona_side() -> None:
    stats = message_style_stats(EXAMPLE)
    assert (stats.conversations, stats.turns, stats.messages, stats.other_messages) == (1, 3, 7, 3)
    # Words per message: 2, 2, 2, 1, 3, 0, 1.
    assert stats.words_per_message.mean == pytest.approx(11 / 7)
    assert stats.words_per_message.median == 2
    assert (stats.words_per_message.minimum, stats.words_per_message.maximum) == (0, 3)
    # Characters: 6, 9, 11, 1, 11, 2, 7.
    assert stats.chars_per_message.mean == pytest.approx(47 / 7)
    assert stats.chars_per_message.median == 7
    assert stats.burst_sizes == {1: 1, 2: 1, 4: 1}
    assert stats.burst_size.mean == pytest.approx(7 / 3)
    assert stats.multi_message_bursts == pytest.approx(2 / 3)
    assert stats.burst_shares == {
        1: pytest.approx(1 / 3),
        2: pytest.approx(1 / 3),
        4: pytest.approx(1 / 3),
    }


def test_punctuation_emoji_and_laughter_rates() -> None:
    stats = message_style_stats(EXAMPLE)
    seventh = pytest.approx(1 / 7)
    assert stats.question == seventh
    assert stats.exclamation == seventh
    assert stats.final_period == seventh  # "I went out." but not "yeah..."
    assert stats.ellipsis == seventh
    assert stats.emoji == seventh
    assert stats.emoticon == seventh
    assert stats.laughter == seventh
    # Of the five messages starting with a letter, "hey", "haha" and "yeah" are lower-case.
    assert stats.lowercase_start == pytest.approx(3 / 5)


def test_the_partner_side_is_measured_the_same_way() -> None:
    stats = message_style_stats(EXAMPLE, side="user")
    assert stats.messages == 3
    assert stats.words_per_message.mean == pytest.approx((2 + 3 + 1) / 3)
    assert stats.burst_sizes == {1: 3}
    assert stats.question == pytest.approx(1 / 3)


def test_bursts_never_run_across_two_conversations() -> None:
    first = conversation(("U", "a"), ("R", "b"))
    second = conversation(("R", "c"), ("U", "d"))
    assert style_stats([first, second]).burst_sizes == {1: 2}
    assert message_style_stats([*first, *second]).burst_sizes == {2: 1}
    assert style_stats([first, second]).turns == 3


def test_no_messages_give_zeros_not_errors() -> None:
    stats = style_stats([])
    assert stats.messages == 0
    assert stats.words_per_message.count == 0
    assert stats.question == 0.0
    assert stats.burst_shares == {}


@pytest.mark.parametrize(
    ("text", "is_face"),
    [
        (":)", True),
        ("ok :D", True),
        (";-)", True),
        ("<3", True),
        ("lol xD", True),
        ("^^", True),
        ("at 10:30", False),
        ("http://x.org", False),
        ("a:b", False),
        ("(see below)", False),
    ],
)
def test_typed_faces(text: str, is_face: bool) -> None:
    assert (EMOTICON.search(text) is not None) is is_face
