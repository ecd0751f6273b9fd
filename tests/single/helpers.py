"""Small conversations of every class for the single-item tests, written for them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sdtt.dialogue.condition import Condition
from sdtt.dialogue.message import Message, Transcript

PLANTED = "<script>window.__pwned=1</script>"
CLASSES = {"HH": ("human", "human"), "HM": ("human", "machine"), "MH": ("machine", "human"),
           "MM": ("machine", "machine")}  # fmt: skip
TOPICS = ("cooking", "football", "old films", "gardening", "train travel", "board games")


def chat(chat_id: str, klass: str, length: int = 12, *, topic: str | None = None) -> Transcript:
    """A chat of ``length`` messages, A and B alternating, whose speakers are ``klass``;
    message texts name the chat and their number, one carries a planted script."""
    start = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
    a, b = CLASSES[klass]
    messages = [
        Message(
            side="user" if n % 2 == 0 else "response",
            text=f"{chat_id} message {n + 1}" + (f" {PLANTED}" if n == 1 else ""),
            time=start + timedelta(seconds=15 * n),
        )
        for n in range(length)
    ]
    return Transcript(
        id=chat_id,
        topic=topic,
        messages=messages,
        meta={"speakers": {"A": a, "B": b}, "secret": "persona-name-xyz"},
    )


def corpus(per_class: int = 3, length: int = 12) -> list[Transcript]:
    """``per_class`` chats of every class, topics in turn."""
    chats = []
    for klass in CLASSES:
        for n in range(per_class):
            index = len(chats)
            chats.append(chat(f"{klass.lower()}{n}", klass, length, topic=TOPICS[index % 6]))
    return chats


def bot_chat(chat_id: str, interrogator: str | None) -> Transcript:
    """A bot chat recorded the ordinary sdtt way (a condition, no speakers key)."""
    base = chat(chat_id, "HM", 6)
    return base.model_copy(
        update={
            "meta": {},
            "condition": Condition(persona="p", model="mock/chatty", interrogator=interrogator),
        }
    )
