from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdtt.judges.parsing import parse_label, parse_option


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("A", "A"),
        ("B", "B"),
        ("(B)", "B"),
        ("Option A", "A"),
        ("**B**", "B"),
        ("  A.\n", "A"),
        ("The answer is B", "B"),
        ("Answer: A", "A"),
        ("Chat 2 reads like a script.\nAnswer: B", "B"),
    ],
)
def test_clear_answers_are_read(text: str, expected: str) -> None:
    assert parse_option(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "A or B",
        "A and B are both plausible",
        "I think it's A, but maybe B",
        "Answer: A\nAnswer: B",
        "Chat 1",
        "a",
        "C",
        "I cannot tell.",
        "Both chats seem human",
        "B is more likely, though A has odd timing",
    ],
)
def test_unclear_answers_are_not_guessed(text: str) -> None:
    assert parse_option(text) is None


@given(st.text(alphabet=st.sampled_from(list("AB ab().:*\n-Option answerisC12")), max_size=40))
def test_parser_never_returns_an_option_absent_from_the_text(text: str) -> None:
    found = parse_option(text)
    assert found is None or found in text
    if found is not None:
        other = "B" if found == "A" else "A"
        assert other not in text.replace("Answer", "").replace("answer", "")


@given(st.text(max_size=60))
def test_parser_on_any_text_returns_none_or_a_present_option(text: str) -> None:
    found = parse_option(text)
    assert found is None or found in text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("human", "human"),
        ("AI", "ai"),
        ("**Human.**", "human"),
        ("Answer: AI", "ai"),
        ("human or AI", None),
        ("probably human", None),
        ("", None),
    ],
)
def test_single_transcript_labels(text: str, expected: str | None) -> None:
    assert parse_label(text) == expected
