"""The retry policy and HTTP failure classification (pure: no clock, no network)."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest

from sdtt.errors import (
    AuthenticationError,
    BadRequestError,
    ConfigError,
    ModelOutputError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    ServerError,
)
from sdtt.models.retry import (
    RetryPolicy,
    backoff_delay,
    error_for_status,
    is_retryable_status,
    parse_retry_after,
    provider_message,
    retry_delay,
    scrub,
)

NO_JITTER = RetryPolicy(jitter=0.0, initial_backoff=1.0, max_backoff=10.0, max_attempts=10)


def test_backoff_doubles_up_to_the_cap() -> None:
    rng = random.Random(0)
    delays = [backoff_delay(NO_JITTER, failures, rng) for failures in range(1, 7)]
    assert delays == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0]


def test_jitter_only_shortens_and_is_reproducible_with_a_seed() -> None:
    policy = RetryPolicy(jitter=0.25, initial_backoff=4.0)
    first = [backoff_delay(policy, 1, random.Random(7)) for _ in range(3)]
    assert len(set(first)) == 1  # same seed, same wait
    spread = [backoff_delay(policy, 1, random.Random(seed)) for seed in range(50)]
    assert all(3.0 <= delay <= 4.0 for delay in spread)
    assert len(set(spread)) > 10


@pytest.mark.parametrize(
    "error",
    [
        ProviderConnectionError("x"),
        ProviderTimeoutError("x"),
        RateLimitError("x"),
        ServerError("x"),
    ],
)
def test_transient_failures_are_retried(error: ProviderError) -> None:
    assert retry_delay(NO_JITTER, error, 1, random.Random(0)) == 1.0


@pytest.mark.parametrize(
    "error",
    [
        AuthenticationError("x"),
        BadRequestError("x"),
        ProviderError("malformed"),
        ModelOutputError("x"),
        ValueError("a bug"),
    ],
)
def test_other_failures_are_not_retried(error: Exception) -> None:
    assert retry_delay(NO_JITTER, error, 1, random.Random(0)) is None


def test_retry_after_is_honoured_exactly_and_capped() -> None:
    policy = RetryPolicy(max_retry_after=60.0)
    rng = random.Random(0)
    assert retry_delay(policy, RateLimitError("x", retry_after=7.5), 1, rng) == 7.5
    assert retry_delay(policy, RateLimitError("x", retry_after=0.0), 1, rng) == 0.0
    assert retry_delay(policy, ServerError("x", retry_after=3600.0), 1, rng) == 60.0


def test_gives_up_after_max_attempts() -> None:
    policy = RetryPolicy(max_attempts=3)
    rng = random.Random(0)
    assert retry_delay(policy, ServerError("x"), 2, rng) is not None
    assert retry_delay(policy, ServerError("x"), 3, rng) is None


def test_invalid_policies_are_refused() -> None:
    with pytest.raises(ConfigError, match="max_attempts"):
        RetryPolicy(max_attempts=0)
    with pytest.raises(ConfigError, match="jitter"):
        RetryPolicy(jitter=2.0)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after-ms": "1500"}, 1.5),
        ({"Retry-After": "3"}, 3.0),
        ({"retry-after": "0.25"}, 0.25),
        ({"retry-after-ms": "200", "retry-after": "9"}, 0.2),
        ({"retry-after": "Wed, 01 May 2024 10:00:30 GMT"}, 30.0),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "-4"}, 0.0),
        ({}, None),
    ],
)
def test_parse_retry_after(headers: dict[str, str], expected: float | None) -> None:
    now = datetime(2024, 5, 1, 10, 0, 0, tzinfo=UTC)
    assert parse_retry_after(headers, now=now) == expected


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (401, AuthenticationError),
        (403, AuthenticationError),
        (408, ServerError),
        (409, ServerError),
        (429, RateLimitError),
        (500, ServerError),
        (503, ServerError),
        (529, ServerError),
        (400, BadRequestError),
        (404, BadRequestError),
        (422, BadRequestError),
    ],
)
def test_statuses_map_to_typed_errors(status: int, kind: type[ProviderError]) -> None:
    error = error_for_status(status, "openai/m", "detail", key_env="OPENAI_API_KEY")
    assert type(error) is kind
    assert error.retryable == is_retryable_status(status)
    assert "openai/m" in str(error)
    assert f"HTTP {status}" in str(error)


def test_auth_errors_name_the_variable_and_drop_the_providers_text() -> None:
    error = error_for_status(401, "openai/m", "Incorrect key sk-123", key_env="OPENAI_API_KEY")
    assert "OPENAI_API_KEY" in str(error)
    assert "sk-123" not in str(error)


def test_rate_limit_carries_retry_after() -> None:
    error = error_for_status(429, "a/m", "", key_env="K", retry_after=4.0)
    assert isinstance(error, RateLimitError)
    assert error.retry_after == 4.0


def test_scrub_removes_the_key_and_key_shaped_tokens() -> None:
    text = "bad key hunter2-secret-value and also sk-proj-AbC123xyz987 in there"
    cleaned = scrub(text, ["hunter2-secret-value"])
    assert "hunter2" not in cleaned
    assert "AbC123xyz987" not in cleaned
    assert "bad key" in cleaned


def test_scrub_folds_whitespace_and_shortens() -> None:
    cleaned = scrub("<html>\n  <body>" + "x" * 1000)
    assert "\n" not in cleaned
    assert len(cleaned) <= 300
    assert cleaned.endswith("...")


def test_provider_message_reads_both_error_shapes() -> None:
    assert provider_message({"error": {"message": "slow down"}}) == "slow down"
    assert provider_message({"type": "error", "error": {"message": "over"}}) == "over"
    assert provider_message({"message": "inner object", "type": "x"}) == "inner object"
    assert provider_message("Bad Gateway") == "Bad Gateway"
    assert provider_message({"unexpected": 1}) == ""
    assert provider_message(None) == ""


def test_a_prompt_longer_than_the_context_is_not_retried_and_says_what_to_change() -> None:
    said = "This model's maximum context length is 8192 tokens. However, you requested 11432"
    error = error_for_status(400, "openai/gemma", said, key_env="OPENAI_API_KEY")
    assert not error.retryable
    assert "longer than the model's context" in str(error) and said in str(error)
    assert "--history-turns" in str(error) and "--context-tokens" in str(error)
    other = error_for_status(400, "openai/gemma", "bad field", key_env="OPENAI_API_KEY")
    assert "--history-turns" not in str(other)


def test_litellms_no_connected_db_says_to_send_the_proxys_key() -> None:
    # LiteLLM 1.108 answers a request without its master key so.
    said = "No connected db."
    error = error_for_status(400, "anthropic/claude-gemma", said, key_env="ANTHROPIC_API_KEY")
    assert isinstance(error, AuthenticationError) and not error.retryable
    assert "--api-key-env LITELLM_MASTER_KEY" in str(error)


def test_a_server_without_logprobs_is_not_asked_again_and_says_how_to_start_it() -> None:
    # llama-cpp-python's server started without logits_all answers a logprobs request so.
    said = "logprobs is not supported for models created with logits_all=False"
    error = error_for_status(500, "openai/gemma", said, key_env="OPENAI_API_KEY")
    assert not error.retryable
    assert "llama_server --logprobs" in str(error)
