"""One retry policy, the model's: every attempt counted, long runs given a stronger policy,
and its deadline (virtual time)."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
import trio.testing

from sdtt.errors import ConfigError, ServerError
from sdtt.generate.chain import ChainSpec, topic_targets
from sdtt.generate.chainfile import read_chain
from sdtt.generate.runner import RunOptions, run_chains
from sdtt.models import GenerateConfig, Model, Prompt, RetryPolicy
from sdtt.models.mock import MockModelAPI, MockReply
from sdtt.models.retry import long_run_policy, policy_from_env
from tests.generate.helpers import TOPICS, hashed_script, make_persona, word_usage


def flaky_model(failures: int, *, retry: RetryPolicy | None = None, hang: bool = False) -> Model:
    """The hashed script, after ``failures`` server errors (or hangs) on the first call."""
    script = hashed_script(1, 3)
    left = [failures]

    def answer(prompt: Prompt, config: GenerateConfig) -> MockReply | ServerError:
        if left[0] > 0:
            left[0] -= 1
            if hang:
                return MockReply(text="late", delay=10_000.0)
            return ServerError("HTTP 503 from the server")
        text = script(prompt, config)
        return MockReply(text=text, usage=word_usage(prompt, text))

    policy = retry or RetryPolicy(max_attempts=5, jitter=0.0, initial_backoff=1.0)
    return Model(MockModelAPI(answer, name="mock/flaky"), retry=policy)


def one_chain() -> list[ChainSpec]:
    return [
        ChainSpec(persona="tester", model="mock/flaky", seed=1, topics=topic_targets(TOPICS, 2, 1))
    ]


async def run_one(tmp_path: Path, model: Model, options: RunOptions) -> Path:
    persona = make_persona()
    report = await run_chains(
        one_chain(),
        tmp_path,
        personas=lambda name: persona,
        models=lambda name: model,
        options=options,
    )
    return report.chains[0].path


@pytest.mark.trio
async def test_a_long_run_rides_out_failures_with_the_models_own_policy(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    # 7 failures in a row: more than a default policy allows, within a long run's.
    model = flaky_model(7, retry=long_run_policy())
    path = await run_one(tmp_path, model, RunOptions())
    chain = read_chain(path)
    assert not chain.errors
    # The first call's 7 failures, then each call's answer (a chain no longer records
    # attempts: they are not reproducible; a study's run log keeps them).
    assert len(model.api.prompts) == 7 + len(chain.calls)  # type: ignore[attr-defined]


@pytest.mark.trio
async def test_a_step_that_keeps_failing_makes_the_policys_attempts_and_no_more(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    model = flaky_model(100, retry=RetryPolicy(max_attempts=15, deadline=None))
    path = await run_one(tmp_path, model, RunOptions())
    (error,) = read_chain(path).errors
    assert "Gave up after 15 attempts." in error["message"]
    assert len(model.api.prompts) == 15  # type: ignore[attr-defined]


@pytest.mark.trio
async def test_a_hanging_server_costs_a_long_run_at_most_the_step_deadline(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SDTT_STEP_DEADLINE", "150")
    model = flaky_model(100, hang=True, retry=long_run_policy())
    started = trio.current_time()
    path = await run_one(tmp_path, model, RunOptions())
    assert trio.current_time() - started <= 150.0 + 1e-6
    (error,) = read_chain(path).errors
    assert "deadline of 150 s is spent" in error["message"]
    assert "SDTT_STEP_DEADLINE" in error["message"]


@pytest.mark.trio
async def test_the_call_deadline_stops_the_retries_and_says_so(
    autojump_clock: trio.testing.MockClock,
) -> None:
    model = flaky_model(100, hang=True, retry=RetryPolicy(deadline=150.0, max_attempts=10))
    started = trio.current_time()
    with pytest.raises(Exception, match="call deadline of 150 s is spent") as caught:
        await model.generate(Prompt(instructions="hi"), GenerateConfig(timeout=60.0))
    assert trio.current_time() - started <= 150.0 + 1e-6
    assert "SDTT_CALL_DEADLINE" in str(caught.value)
    assert caught.value.attempts == 3  # type: ignore[attr-defined]


def test_the_deadlines_are_set_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SDTT_CALL_DEADLINE", "42")
    monkeypatch.setenv("SDTT_MAX_ATTEMPTS", "2")
    monkeypatch.setenv("SDTT_STEP_DEADLINE", "0")
    monkeypatch.setenv("SDTT_ATTEMPT_TIMEOUT", "600")
    policy = policy_from_env()
    assert (policy.deadline, policy.max_attempts, policy.attempt_timeout) == (42.0, 2, 600.0)
    assert long_run_policy().deadline is None
    assert long_run_policy().max_attempts == 2
    monkeypatch.setenv("SDTT_CALL_DEADLINE", "soon")
    with pytest.raises(ConfigError, match="SDTT_CALL_DEADLINE='soon'"):
        policy_from_env()


@pytest.mark.trio
async def test_the_attempt_timeout_reaches_the_provider(
    autojump_clock: trio.testing.MockClock,
) -> None:
    seen: list[float] = []

    def answer(prompt: Prompt, config: GenerateConfig) -> str:
        seen.append(config.timeout)
        return "ok"

    model = Model(MockModelAPI(answer, name="mock/x"), retry=RetryPolicy(attempt_timeout=900.0))
    await model.generate(Prompt(instructions="hi"), GenerateConfig(timeout=60.0))
    assert seen == [900.0]
