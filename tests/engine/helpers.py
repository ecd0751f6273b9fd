"""Shared pieces of the engine tests: a fixed start time and bots with scripted replies."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from sdtt.dialogue.render import format_time
from sdtt.engine.events import Event, MessageSent, UserMessage
from sdtt.engine.schedule import preset_decides
from sdtt.models.mock import MockItem, MockModelAPI, MockReply, MockScript
from sdtt.models.model import Model
from sdtt.models.retry import RetryPolicy
from sdtt.personas.bot import PersonaBot
from sdtt.personas.prompt import BotPromptBuilder

START = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def lines(*texts: str, at: Sequence[float | None] = ()) -> str:
    """``Response:`` lines; ``at`` gives seconds after START for each timestamp."""
    out = []
    for index, text in enumerate(texts):
        offset = at[index] if index < len(at) else None
        stamp = "" if offset is None else f"[{format_time(START + timedelta(seconds=offset))}] "
        out.append(f"Response: {stamp}{text}")
    return "\n".join(out)


def reply(*texts: str, delay: float = 2.0, at: Sequence[float | None] = ()) -> MockReply:
    """A scripted reply of ``texts`` arriving after ``delay`` seconds."""
    return MockReply(lines(*texts, at=at), delay=delay)


def scripted_bot(
    *items: MockItem, retries: int = 1, script: MockScript | None = None
) -> tuple[PersonaBot, MockModelAPI]:
    """A persona bot answering from ``items`` (or by ``script``), through the real
    ``Model`` wrapper."""
    api = MockModelAPI(script or list(items), name="mock/test")
    model = Model(api, retry=RetryPolicy(max_attempts=retries, jitter=0), seed=0)
    bot = PersonaBot(
        model=model,
        prompts=BotPromptBuilder(instructions="be the person", history=""),
        empty_retries=0,
        resample=preset_decides,
    )
    return bot, api


def chat_lines(events: Sequence[Event]) -> list[tuple[float, str, str]]:
    """``(clock, side, text)`` of every message event, in order."""
    return [
        (event.clock, "user" if isinstance(event, UserMessage) else "bot", event.text)
        for event in events
        if isinstance(event, UserMessage | MessageSent)
    ]
