"""Shared pieces of the engine tests: a fixed start time and bots with scripted replies."""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import trio

from sdtt.dialogue.render import format_time
from sdtt.engine.events import Event, ListSink, MessageSent, UserMessage
from sdtt.engine.schedule import preset_decides
from sdtt.engine.session import SessionSettings, open_session
from sdtt.models.base import GenerateConfig, Prompt
from sdtt.models.mock import (
    CHATTY_REPLIES,
    MockItem,
    MockModelAPI,
    MockReply,
    MockScript,
    _last_time,
    _response_lines,
)
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


CHATTY_TEXTS = [text for burst in CHATTY_REPLIES for text in burst]
"""The mock bot's casual lines (3 to 39 characters)."""


def chatty_of_eight() -> MockScript:
    """``mock/chatty``'s lines, timestamped as it does (a few seconds apart after the
    prompt's last time), eight to a reply, so the burst size is the delay preset's to
    choose."""
    turn = itertools.count()

    def reply(prompt: Prompt, config: GenerateConfig) -> str:
        start = next(turn)
        texts = [CHATTY_TEXTS[(start + k) % len(CHATTY_TEXTS)] for k in range(8)]
        return _response_lines(texts, _last_time(prompt))

    return reply


@dataclass
class Schedule:
    """When a bot answered: (length, seconds) of each answer's first message after its
    question, (length, seconds) of each later one after the one before, and each
    answer's size."""

    delays: list[tuple[int, float]] = field(default_factory=list)
    gaps: list[tuple[int, float]] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)


async def reply_schedule(
    preset: str, questions: int = 400, *, t1: float = 3.0, script: MockScript | None = None
) -> Schedule:
    """The schedule of a bot timed by ``preset`` (writing by ``script``, default
    :func:`chatty_of_eight`) to whom a person sends ``questions`` questions, each a few
    seconds after the bot finished its answer (run it on a virtual clock)."""
    bot, _ = scripted_bot(script=script or chatty_of_eight())
    settings = SessionSettings(t1=t1, delays=preset, seed=5)  # type: ignore[arg-type]
    sink = ListSink()
    rng = random.Random(3)
    found = Schedule()
    async with open_session(bot, settings, sink=sink) as session:
        for _ in range(questions):
            await trio.sleep(rng.uniform(1, 5))
            before = len(sink.events)
            asked = trio.current_time()
            await session.send_user_message("so what do you think?")
            await session.wait_idle()
            sent = [e for e in sink.events[before:] if isinstance(e, MessageSent)]
            found.sizes.append(len(sent))
            found.delays.append((len(sent[0].text), sent[0].clock - asked))
            found.gaps += [(len(b.text), b.clock - a.clock) for a, b in itertools.pairwise(sent)]
    return found
