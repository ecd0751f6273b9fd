"""Concurrent SDK calls take the CPU one at a time, and never keep the hold while they wait.

The first three tests drive :class:`CpuHold` itself. The others run the real ``openai``
SDK against the local fake server, on the real clock.
"""

from __future__ import annotations

from collections.abc import Iterator

import openai
import pytest
import trio

from sdtt.models import GenerateConfig, Model, ModelOutput, Prompt, get_model
from sdtt.models.cpu_hold import CpuHold
from sdtt.models.openai_api import OpenAIAPI
from tests.fakes.http_fake import ScriptedReply
from tests.fakes.openai_fake import FakeOpenAIServer, chat_completion

PROMPT = Prompt(instructions="You are Sam.", dialogue="User: [2024-05-01 10:00:00] hey")
CONFIG = GenerateConfig(timeout=20.0, max_tokens=20)


@pytest.mark.trio
async def test_waiting_calls_take_the_hold_first_come_first_served(
    autojump_clock: trio.abc.Clock,
) -> None:
    cpu = CpuHold()
    order: list[str] = []

    async def call(name: str, arrives: float) -> None:
        await trio.sleep(arrives)
        await cpu.take()
        await cpu.take()  # taking the hold one has does nothing
        order.append(name)
        await trio.sleep(1)  # the holder yields; no one else gets in meanwhile
        order.append(name)
        cpu.give()
        cpu.give()  # giving one up twice does nothing

    async with trio.open_nursery() as nursery:
        for name, arrives in (("a", 0.0), ("b", 0.1), ("c", 0.2), ("d", 0.3)):
            nursery.start_soon(call, name, arrives)
    assert order == ["a", "a", "b", "b", "c", "c", "d", "d"]


@pytest.mark.trio
async def test_opening_a_connection_or_waiting_for_the_server_gives_the_hold_up() -> None:
    cpu = CpuHold()
    for waiting, resuming in (
        ("connection.connect_tcp.started", "http11.send_request_headers.started"),
        ("connection.start_tls.started", "http11.send_request_headers.started"),
        ("http11.send_request_body.complete", "http11.receive_response_headers.complete"),
        ("http2.send_request_body.complete", "http2.receive_response_headers.complete"),
    ):
        await cpu.take()
        await cpu._trace(waiting, {})
        assert not cpu.holding(), waiting
        await cpu._trace(resuming, {})
        assert cpu.holding(), resuming
        cpu.give()


def test_a_new_trio_run_starts_with_a_free_hold_though_a_task_died_holding_it() -> None:
    cpu = CpuHold()

    async def die_holding() -> None:
        await cpu.take()
        raise RuntimeError("crashed mid-call")

    with pytest.raises(RuntimeError):
        trio.run(die_holding)

    async def take_and_give() -> bool:
        with trio.fail_after(1):
            await cpu.take()
        held = cpu.holding()
        cpu.give()
        return held

    assert trio.run(take_and_give)


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(reply="Response: [2024-05-01 10:00:09] hi!") as fake:
        yield fake


@pytest.mark.trio
async def test_a_call_waiting_for_its_server_holds_up_no_other_call(
    server: FakeOpenAIServer,
) -> None:
    # The first request is answered after 30 s; the others at once. Had the slow call
    # kept the hold while it waited, none of the others could build or read anything.
    server.enqueue(ScriptedReply(body=chat_completion("Response: slow"), delay=30))
    async with (
        get_model("openai/gpt-test", base_url=server.base_url) as model,
        trio.open_nursery() as nursery,
    ):
        nursery.start_soon(model.generate, PROMPT, CONFIG)
        with trio.fail_after(10):
            while server.in_flight < 1:
                await trio.sleep(0.01)
        with trio.fail_after(10):
            async with trio.open_nursery() as others:
                for _ in range(3):
                    others.start_soon(model.generate, PROMPT, CONFIG)
        assert len(server.requests) == 4
        nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_an_answer_is_parsed_in_the_calls_hold(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    held_while_parsing: list[bool] = []
    output_of = OpenAIAPI.output_of

    def watched(self: OpenAIAPI, completion: object) -> ModelOutput:
        held_while_parsing.append(self._cpu.holding())
        return output_of(self, completion)

    monkeypatch.setattr(OpenAIAPI, "output_of", watched)
    server.latency = 0.2
    async with (
        get_model("openai/gpt-test", base_url=server.base_url) as model,
        trio.open_nursery() as nursery,
    ):
        for _ in range(5):
            nursery.start_soon(model.generate, PROMPT, CONFIG)
    assert held_while_parsing == [True] * 5


@pytest.mark.trio
async def test_more_calls_than_the_sdks_connection_cap_all_finish(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With the SDK's cap, a call keeping the hold would wait for a pooled connection
    # that only a call needing the hold could free: every call would hang.
    monkeypatch.setattr(
        openai,
        "DEFAULT_CONNECTION_LIMITS",
        openai.DEFAULT_CONNECTION_LIMITS.__class__(max_connections=2, max_keepalive_connections=2),
    )
    server.latency = 0.2
    outputs: list[ModelOutput] = []

    async def one(model: Model) -> None:
        outputs.append(await model.generate(PROMPT, CONFIG))

    async with get_model("openai/gpt-test", base_url=server.base_url, max_concurrency=6) as model:
        with trio.fail_after(15):
            async with trio.open_nursery() as nursery:
                for _ in range(6):
                    nursery.start_soon(one, model)
    assert [output.text for output in outputs] == ["Response: [2024-05-01 10:00:09] hi!"] * 6
