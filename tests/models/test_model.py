"""``Model``: retries, timeouts, the per-provider limit and the usage tally, on virtual time."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import pytest
import trio
import trio.testing

from sdtt.errors import (
    AuthenticationError,
    ConfigError,
    ModelOutputError,
    ProviderTimeoutError,
    RateLimitError,
    ServerError,
)
from sdtt.models import CallRecord, GenerateConfig, Model, Prompt, RetryPolicy, Usage
from sdtt.models.mock import MockItem, MockModelAPI, MockReply
from sdtt.models.model import provider_limiter

PROMPT = Prompt(instructions="You are Sam.", dialogue="User: [2024-05-01 10:00:00] hi")


def model_of(replies: Sequence[MockItem], *, name: str = "mock/test", **kwargs: Any) -> Model:
    return Model(MockModelAPI(replies, name=name), **kwargs)


@pytest.mark.trio
async def test_rate_limit_waits_exactly_the_retry_after(
    autojump_clock: trio.testing.MockClock,
) -> None:
    model = model_of([RateLimitError("slow down", retry_after=7.0), "ok"])
    start = trio.current_time()
    output = await model.generate(PROMPT)
    assert output.text == "ok"
    assert output.attempts == 2
    assert trio.current_time() - start == pytest.approx(7.0)
    assert output.latency == pytest.approx(7.0)


@pytest.mark.trio
async def test_server_errors_back_off_exponentially_with_jitter(
    autojump_clock: trio.testing.MockClock,
) -> None:
    policy = RetryPolicy(initial_backoff=2.0, jitter=0.25, max_attempts=5)
    model = model_of([ServerError("a"), ServerError("b"), "ok"], retry=policy, seed=1)
    output = await model.generate(PROMPT)
    assert output.attempts == 3
    # Waits of 2 s then 4 s, each shortened by at most a quarter.
    assert 1.5 + 3.0 <= output.latency <= 2.0 + 4.0
    again = model_of([ServerError("a"), ServerError("b"), "ok"], retry=policy, seed=1)
    assert (await again.generate(PROMPT)).latency == output.latency


@pytest.mark.trio
async def test_models_made_without_a_seed_back_off_apart(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # Their retries after one outage must not line up, or they hit the server together.
    policy = RetryPolicy(initial_backoff=2.0, jitter=0.5, max_attempts=5)
    waits = set()
    for _ in range(4):
        model = model_of([ServerError("a"), ServerError("b"), "ok"], retry=policy)
        waits.add((await model.generate(PROMPT)).latency)
    assert len(waits) == 4


@pytest.mark.trio
async def test_gives_up_after_max_attempts_with_the_same_error_type(
    autojump_clock: trio.testing.MockClock,
) -> None:
    records: list[CallRecord] = []
    model = model_of(
        [ServerError("down")] * 3, retry=RetryPolicy(max_attempts=3), on_call=records.append
    )
    with pytest.raises(ServerError, match="Gave up after 3 attempts") as caught:
        await model.generate(PROMPT)
    assert "down" in str(caught.value)
    assert records == [
        CallRecord(
            model="mock/test",
            usage=Usage(),
            latency=records[0].latency,
            attempts=3,
            error="ServerError",
        )
    ]
    assert records[0].latency > 0


@pytest.mark.trio
async def test_non_retryable_errors_propagate_at_once(
    autojump_clock: trio.testing.MockClock,
) -> None:
    api = MockModelAPI([AuthenticationError("bad key"), "never reached"])
    model = Model(api)
    start = trio.current_time()
    with pytest.raises(AuthenticationError, match="bad key"):
        await model.generate(PROMPT)
    assert trio.current_time() == start
    assert len(api.prompts) == 1


@pytest.mark.trio
async def test_model_output_errors_are_not_retried(autojump_clock: trio.testing.MockClock) -> None:
    api = MockModelAPI([ModelOutputError("garbage"), "ok"])
    with pytest.raises(ModelOutputError):
        await Model(api).generate(PROMPT)
    assert len(api.prompts) == 1


@pytest.mark.trio
async def test_a_slow_provider_times_out_after_config_timeout(
    autojump_clock: trio.testing.MockClock,
) -> None:
    model = model_of([MockReply("late", delay=100.0)], retry=RetryPolicy(max_attempts=1))
    start = trio.current_time()
    with pytest.raises(ProviderTimeoutError, match="5 s"):
        await model.generate(PROMPT, GenerateConfig(timeout=5.0))
    assert trio.current_time() - start == pytest.approx(5.0)


@pytest.mark.trio
async def test_a_timeout_is_retried(autojump_clock: trio.testing.MockClock) -> None:
    policy = RetryPolicy(initial_backoff=1.0, jitter=0.0)
    model = model_of([MockReply("late", delay=100.0), "ok"], retry=policy)
    output = await model.generate(PROMPT, GenerateConfig(timeout=5.0))
    assert output.text == "ok"
    assert output.latency == pytest.approx(6.0)


@pytest.mark.trio
async def test_concurrency_is_limited_per_provider_across_models(
    autojump_clock: trio.testing.MockClock,
) -> None:
    replies = [MockReply("ok", delay=1.0)] * 6
    first = model_of(replies, name="limited/a", max_concurrency=2)
    second = model_of(replies, name="limited/b", max_concurrency=2)
    start = trio.current_time()
    async with trio.open_nursery() as nursery:
        for model in (first, second, first, second, first, second):
            nursery.start_soon(model.generate, PROMPT)
    # Six one-second calls, two at a time, shared by both models of the provider.
    assert trio.current_time() - start == pytest.approx(3.0)
    assert provider_limiter("limited", 2).total_tokens == 2


@pytest.mark.trio
async def test_a_call_with_a_free_slot_reaches_the_provider_before_other_tasks_run() -> None:
    """Many chains answered at once each send their next request as soon as they have
    handled their answer, not after every other chain has handled its own."""
    order: list[str] = []

    class Provider:
        name = "probe/first"

        async def generate(self, prompt: Prompt, config: GenerateConfig) -> Any:
            order.append("request sent")
            return await MockModelAPI(["ok"], name=self.name).generate(prompt, config)

        async def aclose(self) -> None:
            pass

    async def another_task() -> None:
        order.append("another task")

    model = Model(Provider())
    async with trio.open_nursery() as nursery:
        nursery.start_soon(another_task)
        await model.generate(PROMPT)
    assert order == ["request sent", "another task"]


@pytest.mark.trio
async def test_a_model_with_its_own_limit_leaves_the_others_limit_alone(
    autojump_clock: trio.testing.MockClock,
) -> None:
    replies = [MockReply("ok", delay=1.0)] * 3
    narrow = model_of(replies, name="sized/a", max_concurrency=1)
    wide = model_of(replies, name="sized/b", max_concurrency=4)
    start = trio.current_time()
    async with trio.open_nursery() as nursery:
        for _ in range(3):
            nursery.start_soon(narrow.generate, PROMPT)
        for _ in range(3):
            nursery.start_soon(wide.generate, PROMPT)
    # The narrow model's three calls one at a time; the wide one's alongside, at once
    # (the narrow model's limit does not shrink the wide one's, nor the other way round).
    assert trio.current_time() - start == pytest.approx(3.0)
    assert provider_limiter("sized", 4).total_tokens == 4
    assert provider_limiter("sized", 1).total_tokens == 1


@pytest.mark.trio
async def test_usage_is_tallied_and_every_call_recorded(
    autojump_clock: trio.testing.MockClock,
) -> None:
    records: list[CallRecord] = []
    usage = Usage(input_tokens=100, cached_input_tokens=80, output_tokens=7)
    model = model_of(
        [MockReply("one", delay=2.0, usage=usage), MockReply("two", usage=usage)],
        on_call=records.append,
    )
    await model.generate(PROMPT)
    await model.generate(PROMPT)
    assert model.usage == Usage(input_tokens=200, cached_input_tokens=160, output_tokens=14)
    assert model.calls == 2
    assert [(r.usage, r.attempts, r.error) for r in records] == [(usage, 1, None)] * 2
    assert records[0].latency == pytest.approx(2.0)


@pytest.mark.trio
async def test_calls_are_logged_without_prompt_text(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="sdtt")
    secret_prompt = Prompt(instructions="private persona history xyzzy", dialogue="hi")
    await model_of([RateLimitError("x", retry_after=0.0), "ok"]).generate(secret_prompt)
    assert "sdtt.retries" in caplog.text and "attempt 1 of" in caplog.text
    assert "model call" in caplog.text
    assert "xyzzy" not in caplog.text


@pytest.mark.trio
async def test_a_plain_string_is_taken_as_the_dialogue() -> None:
    api = MockModelAPI(["ok"])
    await Model(api).generate("User: hello")
    assert api.prompts[0].user_text() == "User: hello"


@pytest.mark.trio
async def test_generate_uses_the_models_default_config() -> None:
    seen: list[GenerateConfig] = []

    def script(prompt: Prompt, config: GenerateConfig) -> str:
        seen.append(config)
        return "ok"

    config = GenerateConfig(max_tokens=12)
    model = Model(MockModelAPI(script), config=config)
    output = await model.generate(PROMPT)
    await model.generate(PROMPT, GenerateConfig(max_tokens=3))
    assert [c.max_tokens for c in seen] == [12, 3]
    assert output.model == "mock/model"


def test_invalid_concurrency_is_refused() -> None:
    with pytest.raises(ConfigError, match="max_concurrency"):
        Model(MockModelAPI(["x"]), max_concurrency=0)


@pytest.mark.trio
async def test_other_provider_requests_get_the_same_retry_policy(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # What a batch API's upload or poll goes through (Model.call), on virtual time.
    answers: list[Any] = [RateLimitError("slow down", retry_after=7.0), ServerError("x"), "ok"]

    async def request() -> str:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return str(answer)

    model = model_of(["unused"], retry=RetryPolicy(initial_backoff=2.0, jitter=0.0))
    start = trio.current_time()
    assert await model.call(request, what="batch upload") == "ok"
    assert trio.current_time() - start == pytest.approx(7.0 + 4.0)
    assert model.calls == 0


@pytest.mark.trio
async def test_a_hanging_provider_request_times_out_and_is_retried(
    autojump_clock: trio.testing.MockClock,
) -> None:
    hangs = [True, False]

    async def request() -> str:
        if hangs.pop(0):
            await trio.sleep_forever()
        return "ok"

    model = model_of(["unused"], retry=RetryPolicy(initial_backoff=1.0, jitter=0.0))
    start = trio.current_time()
    assert await model.call(request, timeout=30.0, what="batch status") == "ok"
    assert trio.current_time() - start == pytest.approx(31.0)


@pytest.mark.trio
async def test_a_last_attempt_cut_short_by_the_deadline_says_so_in_round_figures(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # Two full attempts of 60 s and a wait leave 35.8 s of the 160.9 s deadline: the
    # message says so with a sensible precision, and what a full attempt may take.
    policy = RetryPolicy(deadline=160.9, initial_backoff=1.7, jitter=0.0, max_attempts=5)
    model = model_of([MockReply("late", delay=1000.0)] * 5, retry=policy)
    with pytest.raises(ProviderTimeoutError) as caught:
        await model.generate(PROMPT, GenerateConfig(timeout=60.0))
    message = str(caught.value)
    assert "no answer within 36 s, what was left of the call's deadline" in message
    assert "(an attempt may take 60 s). Gave up after 3 attempts in 161 s" in message


@pytest.mark.trio
async def test_the_attempts_note_is_a_sentence_of_its_own(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # Providers' own messages often end without a full stop.
    model = model_of([ServerError("internal server error")] * 2, retry=RetryPolicy(max_attempts=2))
    with pytest.raises(ServerError) as caught:
        await model.generate(PROMPT)
    assert str(caught.value) == "internal server error. Gave up after 2 attempts."
