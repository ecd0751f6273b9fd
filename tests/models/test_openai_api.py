"""The ``openai`` provider through the real SDK, against a local fake of the HTTP API.

These run on trio's real clock (network I/O can't use the autojump clock), so waits are
kept to fractions of a second; retry waits are recorded by an injected sleep instead.
"""

from __future__ import annotations

import logging
import socket
import sys
import warnings
from collections.abc import AsyncIterator, Iterator
from functools import partial

import pytest
import trio

from sdtt.errors import (
    AuthenticationError,
    BadRequestError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    ProviderUnavailableError,
    RateLimitError,
)
from sdtt.models import GenerateConfig, Model, Prompt, RetryPolicy, Usage, get_model
from sdtt.models.model import DroppedInputWarning
from sdtt.models.openai_api import OpenAIAPI
from tests.fakes.http_fake import ScriptedReply
from tests.fakes.openai_fake import FakeOpenAIServer, openai_error, rate_limited
from tests.models.sdk_helpers import MakeModel, SleepLog, model_maker, shown_text

PLANTED_KEY = "sk-test-PLANTED-4f9a8b7c6d5e"
PROMPT = Prompt(
    instructions="You are Sam.",
    history="Response: [2024-04-30 09:00:00] earlier",
    dialogue="User: [2024-05-01 10:00:00] hey",
    task="Reply as Sam.",
)
FAST = GenerateConfig(timeout=5.0, max_tokens=40, stop=("\nUser:",), seed=3, temperature=0.5)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    monkeypatch.setenv("OPENAI_API_KEY", PLANTED_KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with FakeOpenAIServer(reply="Response: [2024-05-01 10:00:09] hi!", cached_tokens=3) as fake:
        yield fake


@pytest.fixture
async def make(server: FakeOpenAIServer) -> AsyncIterator[MakeModel]:
    """Builds models on the fake server (retry waits recorded, not slept); closes them."""
    # The key is named for this endpoint, as a user must for a server that is not OpenAI's.
    api = partial(OpenAIAPI, "gpt-test", base_url=server.base_url, api_key_env="OPENAI_API_KEY")
    async with model_maker(api) as made:
        yield made


@pytest.mark.trio
async def test_success_parses_text_and_usage(server: FakeOpenAIServer) -> None:
    async with get_model("openai/gpt-test", base_url=server.base_url) as model:
        output = await model.generate(PROMPT, FAST)
    assert output.text == "Response: [2024-05-01 10:00:09] hi!"
    assert output.model == "openai/gpt-test"
    words_sent = len(PROMPT.system_text().split()) + len(PROMPT.user_text().split())
    assert output.usage == Usage(input_tokens=words_sent, cached_input_tokens=3, output_tokens=4)
    assert model.usage == output.usage
    assert output.attempts == 1
    assert output.latency > 0


@pytest.mark.trio
async def test_the_request_carries_the_prompt_and_settings(
    make: MakeModel, server: FakeOpenAIServer
) -> None:
    await make().generate(PROMPT, FAST)
    (request,) = server.requests
    body = request.json()
    assert body["messages"] == [
        {"role": "system", "content": PROMPT.system_text()},
        {"role": "user", "content": PROMPT.user_text()},
    ]
    assert (body["model"], body["max_tokens"], body["stop"], body["seed"]) == (
        "gpt-test",
        40,
        ["\nUser:"],
        3,
    )
    assert body["temperature"] == 0.5
    assert request.headers["authorization"] == f"Bearer {PLANTED_KEY}"
    # Our retry policy is the only one: the SDK reports it made no retries of its own.
    assert request.headers.get("x-stainless-retry-count") == "0"


def test_the_official_api_gets_max_completion_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", PLANTED_KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    request = OpenAIAPI("gpt-4o").request(PROMPT, FAST)
    assert request["max_completion_tokens"] == 40
    assert "max_tokens" not in request


@pytest.mark.trio
async def test_429_is_retried_after_the_wait_it_asks_for(
    make: MakeModel, server: FakeOpenAIServer
) -> None:
    server.enqueue(rate_limited("2"))
    sleep = SleepLog()
    output = await make(sleep).generate(PROMPT, FAST)
    assert output.text.endswith("hi!")
    assert output.attempts == 2
    assert sleep.waits == [2.0]
    assert len(server.requests) == 2


@pytest.mark.trio
async def test_retry_after_ms_is_waited_out_on_the_trio_clock(server: FakeOpenAIServer) -> None:
    server.enqueue(rate_limited("150", header="retry-after-ms"))
    start = trio.current_time()
    async with Model(OpenAIAPI("gpt-test", base_url=server.base_url)) as model:
        output = await model.generate(PROMPT, FAST)
    assert output.attempts == 2
    assert trio.current_time() - start >= 0.15
    assert output.latency >= 0.15


@pytest.mark.trio
async def test_rate_limit_gives_up_with_a_rate_limit_error(
    make: MakeModel, server: FakeOpenAIServer
) -> None:
    server.enqueue(rate_limited("1"), rate_limited("1"))
    model = make(retry=RetryPolicy(max_attempts=2))
    with pytest.raises(RateLimitError, match=r"HTTP 429.*slow down.*Gave up after 2"):
        await model.generate(PROMPT, FAST)


@pytest.mark.trio
async def test_500_then_success(make: MakeModel, server: FakeOpenAIServer) -> None:
    server.enqueue(openai_error(500, "The server had an error"))
    sleep = SleepLog()
    output = await make(sleep, seed=0).generate(PROMPT, FAST)
    assert output.attempts == 2
    assert output.text.endswith("hi!")
    assert len(sleep.waits) == 1
    assert 0.75 <= sleep.waits[0] <= 1.0  # first backoff of 1 s, minus jitter


@pytest.mark.trio
async def test_timeout_raises_a_timeout_error(server: FakeOpenAIServer) -> None:
    server.enqueue(ScriptedReply(body={"late": True}, delay=3.0))
    api = OpenAIAPI("gpt-test", base_url=server.base_url)
    start = trio.current_time()
    with pytest.raises(ProviderTimeoutError, match=r"openai/gpt-test: no answer within 0\.2 s"):
        await api.generate(PROMPT, GenerateConfig(timeout=0.2))
    assert trio.current_time() - start < 2.0
    await api.aclose()


@pytest.mark.trio
async def test_a_timeout_is_retried_by_the_model(make: MakeModel, server: FakeOpenAIServer) -> None:
    # A second apart, so a loaded machine answering the retry slowly is not a timeout too.
    server.enqueue(ScriptedReply(body={"late": True}, delay=10.0))
    output = await make().generate(PROMPT, GenerateConfig(timeout=1.0))
    assert output.attempts == 2
    assert output.text.endswith("hi!")


@pytest.mark.trio
@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (ScriptedReply(body="<html>Not the API</html>"), "not a chat completion"),
        (ScriptedReply(body={"unexpected": "shape"}), "holds no choices"),
        (
            ScriptedReply(body=b'{"choices": [', headers={"content-type": "application/json"}),
            "not valid JSON",
        ),
    ],
)
async def test_a_malformed_body_is_a_clear_unretried_error(
    make: MakeModel, server: FakeOpenAIServer, reply: ScriptedReply, why: str
) -> None:
    server.enqueue(reply)
    with pytest.raises(ProviderError, match=why) as caught:
        await make().generate(PROMPT, FAST)
    assert "/v1" in str(caught.value)
    assert not caught.value.retryable
    assert len(server.requests) == 1


@pytest.mark.trio
async def test_a_bad_key_is_an_auth_error_that_never_shows_the_key(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("OPENAI_API_KEY", PLANTED_KEY)
    with FakeOpenAIServer(expected_key="sk-the-right-one") as fake:
        model = Model(OpenAIAPI("gpt-test", base_url=fake.base_url, api_key_env="OPENAI_API_KEY"))
        with pytest.raises(AuthenticationError) as caught:
            await model.generate(PROMPT, FAST)
        await model.aclose()
        # The fake echoes the key it got, as real servers may: it must go no further.
        assert PLANTED_KEY in fake.requests[0].headers["authorization"]
        assert len(fake.requests) == 1
    error = caught.value
    assert "OPENAI_API_KEY" in str(error)
    assert "HTTP 401" in str(error)
    shown = shown_text(error, model.api)
    assert PLANTED_KEY not in shown
    assert PLANTED_KEY not in caplog.text
    assert "PLANTED" not in shown + caplog.text


@pytest.mark.trio
async def test_other_errors_quote_the_provider_without_the_key(
    make: MakeModel, server: FakeOpenAIServer
) -> None:
    server.enqueue(openai_error(400, f"Bad request from key {PLANTED_KEY}: max_tokens too big"))
    with pytest.raises(BadRequestError) as caught:
        await make().generate(PROMPT, FAST)
    assert "max_tokens too big" in str(caught.value)
    assert "PLANTED" not in str(caught.value)


@pytest.mark.trio
async def test_an_unreachable_server_is_a_connection_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    api = OpenAIAPI("gpt-test", base_url=f"http://127.0.0.1:{port}/v1")
    with pytest.raises(ProviderConnectionError, match=f"127.0.0.1:{port}"):
        await api.generate(PROMPT, FAST)
    await api.aclose()


@pytest.mark.trio
async def test_calls_in_flight_never_exceed_the_limit(server: FakeOpenAIServer) -> None:
    server.latency = 0.1
    model = Model(OpenAIAPI("gpt-test", base_url=server.base_url), max_concurrency=2)
    async with trio.open_nursery() as nursery:
        for _ in range(5):
            nursery.start_soon(model.generate, PROMPT, FAST)
    assert server.max_in_flight == 2
    assert model.calls == 5
    await model.aclose()


@pytest.mark.trio
async def test_a_base_url_server_needs_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAIServer(reply="ok") as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        async with get_model("openai/llama3") as model:
            output = await model.generate(PROMPT, FAST)
    assert output.text == "ok"
    assert fake.requests[0].headers["authorization"] == "Bearer not-needed"


def test_no_key_and_no_base_url_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ProviderUnavailableError, match=r"OPENAI_API_KEY.*--base-url"):
        get_model("openai/gpt-4o")


def test_a_missing_sdk_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", PLANTED_KEY)
    monkeypatch.setitem(sys.modules, "openai", None)  # makes "import openai" fail
    with pytest.raises(ProviderUnavailableError, match="pip install openai"):
        get_model("openai/gpt-4o")


@pytest.mark.trio
async def test_cache_use_the_server_does_not_report_is_unknown_not_zero(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # llama.cpp's server reuses its prefix cache but sends no prompt_tokens_details.
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with FakeOpenAIServer(reply="Response: hi", cached_tokens=None) as fake:
        async with get_model("openai/local", base_url=fake.base_url) as model:
            first = await model.generate(PROMPT, FAST)
            second = await model.generate(PROMPT, FAST)
    assert first.usage.cached_input_tokens is None
    assert model.usage.cached_input_tokens is None
    assert (first.usage + second.usage).cached_text() == "cache use not reported"
    assert model.usage.cached_share() == "?"


@pytest.mark.trio
async def test_a_server_that_drops_most_of_the_prompt_is_noticed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # llama.cpp's server with the gemma chat format drops system messages: 112 input
    # tokens were reported for a 3,264-token persona prompt.
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    long_prompt = Prompt(
        instructions="You are Sam.", history="Response: [2024-04-30 09:00:00] earlier\n" * 200
    )
    with FakeOpenAIServer(reply="Response: hi", prompt_tokens=112) as fake:
        async with get_model("openai/local", base_url=fake.base_url) as model:
            with pytest.warns(DroppedInputWarning, match="112 input tokens") as caught:
                await model.generate(long_prompt, FAST)
                await model.generate(long_prompt, FAST)
            assert len(caught) == 1  # said once per model, not per call
            assert "system message" in str(caught[0].message)
    with FakeOpenAIServer(reply="Response: hi") as honest:
        async with get_model("openai/local", base_url=honest.base_url) as model:
            with warnings.catch_warnings():
                warnings.simplefilter("error", DroppedInputWarning)
                await model.generate(long_prompt, FAST)
