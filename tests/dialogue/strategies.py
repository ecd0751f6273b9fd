"""Hypothesis strategies for messages and conversations."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import strategies as st

from sdtt.dialogue.message import Message

START = datetime(2024, 3, 1, 9, 30, tzinfo=UTC)

chat_text = st.text(min_size=1, max_size=60)
sides = st.sampled_from(["user", "response"])


@st.composite
def conversations(draw: st.DrawFn, max_size: int = 30) -> list[Message]:
    """Messages with arbitrary sides and texts, at increasing times."""
    count = draw(st.integers(min_value=0, max_value=max_size))
    time = START
    messages = []
    for _ in range(count):
        time += timedelta(seconds=draw(st.integers(min_value=0, max_value=3600)))
        messages.append(Message(side=draw(sides), text=draw(chat_text), time=time))
    return messages
