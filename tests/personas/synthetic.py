"""Small corpora in chitchat-dataset's raw format, and small persona files, for tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sdtt.dialogue.message import Message, Transcript
from sdtt.personas.persona import Persona, PersonaInfo

T0 = datetime(2018, 5, 2, 19, 0, 0, tzinfo=UTC)
"""13:00 Mountain daylight time."""


def stamp(seconds: float) -> str:
    """A corpus timestamp ``seconds`` after :data:`T0`, in the corpus's ``...Z`` form."""
    return (T0 + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def raw_conversation(
    messages: list[tuple[str, str]],
    *,
    prompt: str | None = "Mozart or Beethoven?",
    start: float = 0.0,
    gap: float = 10.0,
) -> dict[str, Any]:
    """A raw conversation: ``(sender, text)`` pairs ``gap`` seconds apart, grouped in turns."""
    turns: list[list[dict[str, str]]] = []
    for index, (sender, text) in enumerate(messages):
        item = {"text": text, "timestamp": stamp(start + index * gap), "sender": sender}
        if turns and turns[-1][0]["sender"] == sender:
            turns[-1].append(item)
        else:
            turns.append([item])
    return {"messages": turns, "prompt": prompt, "start": stamp(start), "ratings": None}


def chat(a: str, b: str, rounds: int, *, tag: str = "") -> list[tuple[str, str]]:
    """``rounds`` exchanges: ``a`` writes one message, ``b`` answers with two."""
    pairs: list[tuple[str, str]] = []
    for index in range(rounds):
        pairs.append((a, f"{tag}question {index} from {a}?"))
        pairs.append((b, f"{tag}answer {index}"))
        pairs.append((b, f"{tag}and more {index}"))
    return pairs


def persona(name: str = "ada", *, messages: int = 4) -> Persona:
    """A small valid persona: one conversation alternating user and response."""
    start = datetime(2024, 3, 1, 18, 0, tzinfo=UTC)
    conversation = Transcript(
        id="c1",
        topic="weekend",
        messages=[
            Message(
                side="user" if index % 2 == 0 else "response",
                text=f"message {index}",
                time=start + timedelta(seconds=30 * index),
            )
            for index in range(messages)
        ],
    )
    info = PersonaInfo(name=name, source="test", license="CC0", attribution="made up")
    return Persona(info=info, conversations=[conversation])
