"""The ``anthropic`` provider through the real SDK, against a local fake of the HTTP API.

Real trio clock (network I/O); retry waits are recorded by an injected sleep.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from functools import partial
from typing import Any

import pytest
import trio

from sdtt.errors import (
    AuthenticationError,
    ProviderError,
    ProviderTimeoutError,
    ProviderUnavailableError,
    ServerError,
)
from sdtt.models import GenerateConfig, Model, Prompt, RetryPolicy, Usage, get_model
from sdtt.models.anthropic_api import (
    CACHE_MARKS_ENV,
    EMPTY_USER_TEXT,
    MAX_CACHE_MARKS,
    AnthropicAPI,
)
from tests.fakes.anthropic_fake import FakeAnthropicServer, anthropic_error, rate_limited
from tests.fakes.http_fake import ScriptedReply
from tests.models.sdk_helpers import MakeModel, SleepLog, model_maker, shown_text

PLANTED_KEY = "sk-ant-test-PLANTED-0a1b2c3d4e5f"
PROMPT = Prompt(
    instructions="You are Sam, a student who writes short messages.",
    history="Response: [2024-04-30 09:00:00] earlier message",
    dialogue="User: [2024-05-01 10:00:00] hey",
    task="Reply as Sam.",
)
FAST = GenerateConfig(timeout=5.0, max_tokens=50, stop=("\nUser:", " "), temperature=0.7)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropicServer]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", PLANTED_KEY)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    # The fake imitates Anthropic's prompt cache, so it gets the marks Anthropic gets.
    monkeypatch.setenv(CACHE_MARKS_ENV, "1")
    with FakeAnthropicServer(reply="Response: [2024-05-01 10:00:09] hi!") as fake:
        yield fake


@pytest.fixture
async def make(server: FakeAnthropicServer) -> AsyncIterator[MakeModel]:
    """Builds models on the fake server (retry waits recorded, not slept); closes them."""
    # The key is named for this endpoint, as a user must for a server that is not Anthropic's.
    api = partial(
        AnthropicAPI, "claude-test", base_url=server.base_url, api_key_env="ANTHROPIC_API_KEY"
    )
    async with model_maker(api) as made:
        yield made


@pytest.mark.trio
async def test_success_parses_text_and_counts_cached_input(server: FakeAnthropicServer) -> None:
    async with get_model("anthropic/claude-test", base_url=server.base_url) as model:
        first = await model.generate(PROMPT, FAST)
        second = await model.generate(PROMPT, FAST)
    assert first.text == "Response: [2024-05-01 10:00:09] hi!"
    assert first.model == "anthropic/claude-test"
    system_words = len(PROMPT.system_text().split())
    total = system_words + len(PROMPT.user_text().split())
    # The fake caches the marked system block on first sight, as Anthropic does.
    assert first.usage == Usage(input_tokens=total, cached_input_tokens=0, output_tokens=4)
    assert second.usage == Usage(
        input_tokens=total, cached_input_tokens=system_words, output_tokens=4
    )
    assert model.usage == first.usage + second.usage


@pytest.mark.trio
async def test_the_stable_prefix_is_marked_for_caching(
    make: MakeModel, server: FakeAnthropicServer
) -> None:
    await make().generate(PROMPT, FAST)
    body = server.requests[0].json()
    assert body["system"] == [
        {"type": "text", "text": PROMPT.system_text(), "cache_control": {"type": "ephemeral"}}
    ]
    assert body["messages"] == [{"role": "user", "content": PROMPT.user_text()}]
    assert (body["model"], body["max_tokens"]) == ("claude-test", 50)
    # Not Anthropic's own API (a fake on loopback), so the temperature is sent.
    assert body["temperature"] == 0.7
    # Whitespace-only stop sequences are refused by the API, so they are left out.
    assert body["stop_sequences"] == ["\nUser:"]
    assert PLANTED_KEY in server.requests[0].headers.get(
        "x-api-key", server.requests[0].headers.get("authorization", "")
    )


FINISHED = "(New chat. Topic: pets)\nUser: [2024-05-01 09:00:00] my cat sleeps all day"
CHAINED = Prompt(
    instructions=PROMPT.instructions,
    history=PROMPT.history,
    dialogue=f"{FINISHED}\n\n(New chat. Topic: food)\nUser: [2024-05-01 10:00:00] hungry?",
    task="Continue the chat.",
    stable_dialogue_chars=len(FINISHED),
)


def marks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Every block of a request body that carries a cache mark."""
    blocks = list(body.get("system", []))
    for item in body["messages"]:
        if isinstance(item["content"], list):
            blocks.extend(item["content"])
    return [block for block in blocks if "cache_control" in block]


def received_user_text(body: dict[str, Any]) -> str:
    """The user message's text as the model reads it (its blocks concatenated)."""
    content = body["messages"][0]["content"]
    return content if isinstance(content, str) else "".join(b["text"] for b in content)


@pytest.mark.trio
async def test_a_stable_dialogue_part_gets_its_own_cache_mark_and_the_text_is_unchanged(
    make: MakeModel, server: FakeAnthropicServer
) -> None:
    model = make()
    await model.generate(CHAINED, FAST)
    await model.generate(replace(CHAINED, stable_dialogue_chars=0), FAST)
    with_mark, without = (request.json() for request in server.requests)
    assert len(marks(with_mark)) == 2 <= MAX_CACHE_MARKS
    assert with_mark["messages"][0]["content"] == [
        {"type": "text", "text": FINISHED, "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": CHAINED.user_text()[len(FINISHED) :]},
    ]
    assert len(marks(without)) == 1
    assert without["messages"][0]["content"] == CHAINED.user_text()
    assert received_user_text(with_mark) == received_user_text(without) == CHAINED.user_text()
    assert with_mark["system"] == without["system"]


@pytest.mark.trio
async def test_a_longer_dialogue_reads_the_stable_part_from_the_cache(
    make: MakeModel, server: FakeAnthropicServer
) -> None:
    model = make()
    first = await model.generate(CHAINED, FAST)
    grown = replace(CHAINED, dialogue=CHAINED.dialogue + "\nResponse: [2024-05-01 10:00:05] yes")
    second = await model.generate(grown, FAST)
    stable_words = len(PROMPT.system_text().split()) + len(FINISHED.split())
    assert first.usage.cached_input_tokens == 0
    # Read from the cache: the system prompt and the finished chat, though the rest grew.
    assert second.usage.cached_input_tokens == stable_words
    assert second.usage.input_tokens == stable_words + len(
        grown.user_text()[len(FINISHED) :].split()
    )


@pytest.mark.parametrize(
    "prompt",
    [
        replace(CHAINED, stable_dialogue_chars=len(CHAINED.dialogue) + 1),
        replace(CHAINED, stable_dialogue_chars=-3),
        replace(CHAINED, task="", stable_dialogue_chars=len(CHAINED.dialogue)),
        replace(CHAINED, dialogue="   " + CHAINED.dialogue, stable_dialogue_chars=2),
    ],
    ids=["past-the-dialogue", "negative", "nothing-after-it", "whitespace-only"],
)
def test_an_unusable_stable_length_sends_one_plain_user_message(
    monkeypatch: pytest.MonkeyPatch, prompt: Prompt
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", PLANTED_KEY)
    request = AnthropicAPI("claude-test").request(prompt, FAST)
    assert request["messages"] == [{"role": "user", "content": prompt.user_text()}]


def test_an_empty_dialogue_gets_a_placeholder_user_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", PLANTED_KEY)
    request = AnthropicAPI("claude-test").request(Prompt(instructions="Be Sam."), FAST)
    assert request["messages"] == [{"role": "user", "content": EMPTY_USER_TEXT}]


@pytest.mark.trio
async def test_429_is_retried_after_the_wait_it_asks_for(
    make: MakeModel, server: FakeAnthropicServer
) -> None:
    server.enqueue(rate_limited("3"))
    sleep = SleepLog()
    output = await make(sleep).generate(PROMPT, FAST)
    assert output.attempts == 2
    assert output.text.endswith("hi!")
    assert sleep.waits == [3.0]


@pytest.mark.trio
async def test_500_then_success(make: MakeModel, server: FakeAnthropicServer) -> None:
    server.enqueue(anthropic_error(500, "Internal server error"))
    sleep = SleepLog()
    output = await make(sleep).generate(PROMPT, FAST)
    assert output.attempts == 2
    assert len(sleep.waits) == 1


@pytest.mark.trio
async def test_overloaded_is_a_retryable_server_error(
    make: MakeModel, server: FakeAnthropicServer
) -> None:
    server.enqueue(*[anthropic_error(529, "Overloaded", kind="overloaded_error")] * 2)
    with pytest.raises(ServerError, match=r"HTTP 529.*Overloaded.*Gave up after 2"):
        await make(retry=RetryPolicy(max_attempts=2)).generate(PROMPT, FAST)


@pytest.mark.trio
async def test_timeout_raises_a_timeout_error(server: FakeAnthropicServer) -> None:
    server.enqueue(ScriptedReply(body={"late": True}, delay=3.0))
    api = AnthropicAPI("claude-test", base_url=server.base_url)
    start = trio.current_time()
    with pytest.raises(ProviderTimeoutError, match=r"no answer within 0\.2 s"):
        await api.generate(PROMPT, GenerateConfig(timeout=0.2))
    assert trio.current_time() - start < 2.0
    await api.aclose()


@pytest.mark.trio
@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (ScriptedReply(body="<html>Not the API</html>"), "no content blocks"),
        (ScriptedReply(body={"content": "not blocks"}), "no content blocks"),
        (
            ScriptedReply(body=b'{"content": [', headers={"content-type": "application/json"}),
            "not valid JSON",
        ),
    ],
)
async def test_a_malformed_body_is_a_clear_unretried_error(
    make: MakeModel, server: FakeAnthropicServer, reply: ScriptedReply, why: str
) -> None:
    server.enqueue(reply)
    with pytest.raises(ProviderError, match=why) as caught:
        await make().generate(PROMPT, FAST)
    assert "not a Messages API reply" in str(caught.value)
    assert not caught.value.retryable
    assert len(server.requests) == 1


@pytest.mark.trio
async def test_a_bad_key_is_an_auth_error_that_never_shows_the_key(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("ANTHROPIC_API_KEY", PLANTED_KEY)
    with FakeAnthropicServer(expected_key="sk-ant-the-right-one") as fake:
        model = Model(
            AnthropicAPI("claude-test", base_url=fake.base_url, api_key_env="ANTHROPIC_API_KEY")
        )
        with pytest.raises(AuthenticationError) as caught:
            await model.generate(PROMPT, FAST)
        await model.aclose()
        assert len(fake.requests) == 1
    error = caught.value
    assert "ANTHROPIC_API_KEY" in str(error)
    shown = shown_text(error, model.api)
    assert "PLANTED" not in shown
    assert "PLANTED" not in caplog.text


def test_no_key_and_no_base_url_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    with pytest.raises(ProviderUnavailableError, match="ANTHROPIC_API_KEY"):
        get_model("anthropic/claude-sonnet-4-5")


@pytest.mark.trio
async def test_a_server_that_is_not_anthropic_gets_plain_strings_and_the_temperature(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A proxy like LiteLLM's in front of a local server refuses a list of system blocks
    # (HTTP 500); cache marks cannot help there, so none are sent.
    monkeypatch.setenv("ANTHROPIC_API_KEY", PLANTED_KEY)
    monkeypatch.delenv(CACHE_MARKS_ENV, raising=False)
    with FakeAnthropicServer(reply="Response: hi", string_system_only=True) as fake:
        async with get_model("anthropic/claude-test", base_url=fake.base_url) as model:
            output = await model.generate(CHAINED, replace(FAST, temperature=0.0))
        body = fake.requests[0].json()
    assert output.text == "Response: hi"
    assert body["system"] == CHAINED.system_text()
    assert body["messages"] == [{"role": "user", "content": CHAINED.user_text()}]
    assert body["temperature"] == 0.0
    # The proxy reported no cache use: unknown, not 0.
    assert output.usage.cached_input_tokens is None


def test_anthropic_itself_keeps_the_cache_marks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", PLANTED_KEY)
    monkeypatch.delenv(CACHE_MARKS_ENV, raising=False)
    for base_url in (None, "https://api.anthropic.com"):
        body = AnthropicAPI("claude-test", base_url=base_url).request(CHAINED, FAST)
        assert len(marks(body)) == 2
    forced = AnthropicAPI("claude-test", base_url="http://127.0.0.1:4000", cache_marks=True)
    assert len(marks(forced.request(CHAINED, FAST))) == 2
    proxy = AnthropicAPI("claude-test", base_url="http://127.0.0.1:4000")
    assert proxy.request(CHAINED, replace(FAST, temperature=1.5))["temperature"] == 1.0
    # Anthropic's current Messages API takes no temperature.
    assert "temperature" not in AnthropicAPI("claude-test").request(CHAINED, FAST)
