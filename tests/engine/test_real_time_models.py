"""Models that compute in real time (threads, servers) on the virtual clock: their answers
time the chat by a stated thinking time, and how long they really took changes nothing."""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path

import pytest
import trio

from sdtt.engine.events import ListSink, MessageDropped, ModelCallFinished, ModelCallStarted
from sdtt.engine.interrogator import llm_interrogator
from sdtt.engine.session import SessionSettings, open_session
from sdtt.engine.simulate import (
    THINKING_SECONDS,
    RealTimeCalls,
    for_virtual_clock,
    run_on_virtual_clock,
    run_simulated_chat,
    thinking_time,
)
from sdtt.errors import ProviderTimeoutError, ServerError
from sdtt.models.base import GenerateConfig, ModelOutput, Prompt
from sdtt.models.mock import MockModelAPI, chatty_script
from sdtt.models.model import Model
from sdtt.models.retry import RetryPolicy
from sdtt.personas.bot import PersonaBot
from sdtt.personas.prompt import BotPromptBuilder
from tests.engine.helpers import START


class RandomLatency:
    """A real-time model: mock/chatty's answers, each computed in a worker thread that
    takes a random real 0 to ``most`` seconds (unseeded), as a local model or a server
    would."""

    def __init__(self, name: str = "local/jittery", most: float = 0.02) -> None:
        self.name = name
        self.most = most
        self.mock = MockModelAPI(chatty_script(), name=name)
        self.random = random.Random()

    async def generate(self, prompt: Prompt, config: GenerateConfig) -> ModelOutput:
        await trio.to_thread.run_sync(time.sleep, self.random.uniform(0.0, self.most))
        return await self.mock.generate(prompt, config)


def bot(model: RandomLatency) -> PersonaBot:
    return PersonaBot(
        model=for_virtual_clock(model),
        prompts=BotPromptBuilder(instructions="be the person", history=""),
    )


async def chat(out: Path) -> None:
    asker = llm_interrogator(
        for_virtual_clock(RandomLatency("local/asker")), topic="weekend plans", mode="burst"
    )
    result = await run_simulated_chat(
        bot(RandomLatency()),
        asker,
        turns=4,
        bot_settings=SessionSettings(seed=4),
        out_dir=out,
        session_id="sim",
        started=START,
        max_duration=3600,
    )
    assert result.turns == 4


def test_a_chat_of_models_with_random_latency_repeats_byte_for_byte(tmp_path: Path) -> None:
    runs = []
    for run in ("one", "two"):
        run_on_virtual_clock(chat, tmp_path / run)
        runs.append({p.name: p.read_bytes() for p in (tmp_path / run).iterdir()})
    assert set(runs[0]) == {"sim.jsonl", "sim.events.jsonl"}
    assert runs[0] == runs[1]


def test_each_answer_takes_its_thinking_time_and_the_partner_may_write_meanwhile() -> None:
    model = RandomLatency(most=0.05)
    first_answer: list[ModelOutput] = []

    async def session() -> list[object]:
        sink = ListSink()
        settings = SessionSettings(t1=1.0, seed=1)
        async with open_session(bot(model), settings, sink=sink, started=START) as chat:
            await chat.send_user_message("hey")
            # The call starts at 1 s and thinks for at least THINKING_SECONDS, however
            # fast the thread answers: this message comes during the call.
            await trio.sleep(1.0 + THINKING_SECONDS / 2)
            await chat.send_user_message("you there?")
            await chat.wait_idle()
        return sink.events

    real_generate = model.mock.generate

    async def remember(prompt: Prompt, config: GenerateConfig) -> ModelOutput:
        output = await real_generate(prompt, config)
        if not first_answer:
            first_answer.append(output)
        return output

    model.mock.generate = remember  # type: ignore[method-assign]
    events = run_on_virtual_clock(session)
    started = [e for e in events if isinstance(e, ModelCallStarted)]
    finished = [e for e in events if isinstance(e, ModelCallFinished)]
    assert [e.reason for e in started[:2]] == ["unread", "wrote_during_call"]
    assert started[1].unread == 1
    assert finished[0].latency == pytest.approx(thinking_time(first_answer[0]))
    assert started[1].clock == finished[0].clock, "asked again at once"
    # The first reply, written before "you there?" was read, goes stale unsent.
    assert any(isinstance(e, MessageDropped) and e.call == 1 for e in events)


class Hanging:
    """A server that never answers (its thread ends only when the call gives up)."""

    name = "openai/hanging"

    async def generate(self, prompt: Prompt, config: GenerateConfig) -> ModelOutput:
        done = threading.Event()
        try:
            await trio.to_thread.run_sync(done.wait, abandon_on_cancel=True)
        finally:
            done.set()
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        """Nothing to release."""


def test_a_call_times_out_in_real_time_while_the_chat_stands_still() -> None:
    # The call's own timeout (0.2 s) runs at real speed, so a hung server is given up on;
    # a timer of another task, due long before it in virtual time, fires only after.
    model = RealTimeCalls(Model(Hanging(), retry=RetryPolicy(max_attempts=1)))
    fired: list[str] = []

    async def main() -> float:
        async def other() -> None:
            await trio.sleep(0.001)
            fired.append("timer")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(other)
            with pytest.raises(ProviderTimeoutError):
                await model.generate(Prompt(instructions="hi"), GenerateConfig(timeout=0.2))
            fired.append("timed out")
        return trio.current_time()

    assert run_on_virtual_clock(main) == 0.001
    assert fired == ["timed out", "timer"]


def test_a_retried_call_counts_as_one_attempt_as_a_resumed_run_would_see_it() -> None:
    flaky = MockModelAPI([ServerError("HTTP 500"), "Response: hi"], name="openai/flaky")
    model = RealTimeCalls(Model(flaky, retry=RetryPolicy(initial_backoff=0.01)))

    async def call() -> tuple[ModelOutput, float]:
        output = await model.generate(Prompt(instructions="hi"), GenerateConfig())
        return output, trio.current_time()

    output, took = run_on_virtual_clock(call)
    assert len(flaky.prompts) == 2, "the server was asked twice"
    assert output.attempts == 1
    assert took == output.latency == thinking_time(output)
