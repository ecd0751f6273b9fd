"""The one retry policy, and how HTTP failures are classified for it (pure, no clock).

Retried: connection failures, timeouts, HTTP 408, 409, 429 and 5xx. When the provider
says how long to wait (``retry-after-ms`` or ``retry-after``), that wait is honoured (up
to ``max_retry_after``); otherwise the wait doubles from ``initial_backoff`` up to
``max_backoff``, shortened by up to ``jitter`` (a fraction) drawn from a seeded RNG so
many clients don't retry in lockstep. Everything else propagates at once.

Every call also has an overall deadline (``deadline`` seconds, attempts and waits
included, 300 by default): no retry starts, and no attempt runs, past it, so a hanging
server costs at most that long per call however many attempts are allowed. (The
embedded local model is the exception: an attempt that is making progress runs to its
end, as cutting it off would only redo the same work on this machine's CPU; it times
out after ``timeout`` seconds without progress, and the deadline stops a retry.) The
environment variables ``SDTT_CALL_DEADLINE`` (seconds) and ``SDTT_MAX_ATTEMPTS`` change
the defaults of every command, and ``SDTT_ATTEMPT_TIMEOUT`` replaces the seconds each
attempt may take (each call names its own otherwise, often 60).

Long unattended runs (``sdtt generate``) give their models :func:`long_run_policy`: the
same policy with more attempts and longer waits, so a server restart is ridden out, and
``SDTT_STEP_DEADLINE`` (900 s) as the deadline of each call. It is still one loop, in
``Model``: nothing retries around it.

``Model`` drives this policy with ``trio.sleep``; this module never sleeps.
"""

from __future__ import annotations

import os
import random
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from sdtt.errors import (
    AuthenticationError,
    BadRequestError,
    ConfigError,
    ProviderError,
    RateLimitError,
    ServerError,
)

RETRYABLE_STATUSES = frozenset({408, 409, 429})
"""Client-side statuses worth retrying; every 5xx is retried too."""

MAX_ERROR_TEXT = 300
"""Characters of a provider's own error message kept in our error text."""

CALL_DEADLINE_ENV = "SDTT_CALL_DEADLINE"
ATTEMPT_TIMEOUT_ENV = "SDTT_ATTEMPT_TIMEOUT"
MAX_ATTEMPTS_ENV = "SDTT_MAX_ATTEMPTS"
STEP_DEADLINE_ENV = "SDTT_STEP_DEADLINE"
DEFAULT_CALL_DEADLINE = 300.0
"""Seconds one call may take in all, its attempts and the waits between them included."""
DEFAULT_STEP_DEADLINE = 900.0
"""Seconds one call of a long run may take in all, its attempts and waits included."""
LONG_RUN_ATTEMPTS = 15
"""Attempts per call of a long run unless ``SDTT_MAX_ATTEMPTS`` says otherwise."""
LONG_RUN_MAX_BACKOFF = 60.0
"""A long run's waits grow to a minute: enough for a restarting server to come back."""


def seconds_from_env(name: str, default: float | None) -> float | None:
    """A positive number of seconds from environment variable ``name``; ``0``/``none``: no limit."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if raw.lower() in ("0", "none", "inf"):
        return None
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise ConfigError(
            f"{name}={raw!r} is not a number of seconds. Set it to a positive number, "
            "or to 0 for no limit."
        )
    return value


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait before calling a provider again."""

    max_attempts: int = 5
    """Calls in all, the first included; 1 disables retries."""
    initial_backoff: float = 1.0
    """Seconds before the first retry when the provider gave no ``retry-after``."""
    max_backoff: float = 30.0
    """The exponential wait never exceeds this many seconds."""
    jitter: float = 0.25
    """Each wait is shortened by a random fraction in ``[0, jitter)``."""
    max_retry_after: float = 120.0
    """A provider's ``retry-after`` is honoured up to this many seconds."""
    deadline: float | None = DEFAULT_CALL_DEADLINE
    """Seconds a call may take in all, attempts and waits included; ``None``: no limit."""
    attempt_timeout: float | None = None
    """Seconds one attempt may take, replacing each call's own ``timeout`` when set. A
    slow local server keeps working on a request whose client gave up, so short attempts
    only queue up behind it: give such a server long attempts instead."""
    deadline_env: str = CALL_DEADLINE_ENV
    """The environment variable that sets ``deadline``, named when it is spent."""

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ConfigError(f"max_attempts must be at least 1, not {self.max_attempts}.")
        if self.deadline is not None and self.deadline <= 0:
            raise ConfigError(f"The call deadline must be positive, not {self.deadline}.")
        if self.initial_backoff < 0 or self.max_backoff < 0 or self.max_retry_after < 0:
            raise ConfigError("Retry waits must not be negative.")
        if not 0 <= self.jitter <= 1:
            raise ConfigError(f"jitter must be between 0 and 1, not {self.jitter}.")


def attempts_from_env(default: int) -> int:
    """The number of attempts in ``SDTT_MAX_ATTEMPTS``, or ``default`` when it is unset."""
    raw = os.environ.get(MAX_ATTEMPTS_ENV, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise ConfigError(
            f"{MAX_ATTEMPTS_ENV}={raw!r} is not a whole number of attempts (1 or more)."
        )
    return int(raw)


def policy_from_env() -> RetryPolicy:
    """The default policy with ``SDTT_CALL_DEADLINE``, ``SDTT_MAX_ATTEMPTS`` and
    ``SDTT_ATTEMPT_TIMEOUT`` applied."""
    return RetryPolicy(
        max_attempts=attempts_from_env(RetryPolicy.max_attempts),
        deadline=seconds_from_env(CALL_DEADLINE_ENV, DEFAULT_CALL_DEADLINE),
        attempt_timeout=seconds_from_env(ATTEMPT_TIMEOUT_ENV, None),
    )


def long_run_policy() -> RetryPolicy:
    """The policy for long unattended runs (``sdtt generate``, batch APIs included).

    More attempts (15, or ``SDTT_MAX_ATTEMPTS``) and waits growing to a minute, all within
    ``SDTT_STEP_DEADLINE`` (900 s by default) per call; ``SDTT_ATTEMPT_TIMEOUT`` applies
    as for every call.
    """
    return RetryPolicy(
        max_attempts=attempts_from_env(LONG_RUN_ATTEMPTS),
        max_backoff=LONG_RUN_MAX_BACKOFF,
        deadline=seconds_from_env(STEP_DEADLINE_ENV, DEFAULT_STEP_DEADLINE),
        attempt_timeout=seconds_from_env(ATTEMPT_TIMEOUT_ENV, None),
        deadline_env=STEP_DEADLINE_ENV,
    )


def backoff_delay(policy: RetryPolicy, failures: int, rng: random.Random) -> float:
    """Seconds to wait after ``failures`` failed calls when the provider named no wait."""
    exponent = min(max(failures - 1, 0), 62)
    delay = min(policy.initial_backoff * 2.0**exponent, policy.max_backoff)
    return delay * (1.0 - policy.jitter * rng.random())


def retry_delay(
    policy: RetryPolicy, error: BaseException, failures: int, rng: random.Random
) -> float | None:
    """Seconds to wait before the next call, or ``None`` to give up and raise ``error``.

    ``failures`` counts the failed calls so far, this one included.
    """
    if not isinstance(error, ProviderError) or not error.retryable:
        return None
    if failures >= policy.max_attempts:
        return None
    if error.retry_after is not None and error.retry_after >= 0:
        return min(error.retry_after, policy.max_retry_after)
    return backoff_delay(policy, failures, rng)


def parse_retry_after(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """The wait a response asks for, in seconds; ``None`` when it names none.

    Reads ``retry-after-ms`` (milliseconds, used by OpenAI and Anthropic) first, then
    ``retry-after`` as seconds or as an HTTP date (relative to ``now``, default: now).
    """
    lowered = {name.lower(): value for name, value in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis is not None:
        try:
            return max(float(millis) / 1000.0, 0.0)
        except ValueError:
            pass
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    try:
        return max(float(raw), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    reference = now if now is not None else datetime.now(UTC)
    return max((when - reference).total_seconds(), 0.0)


def is_retryable_status(status: int) -> bool:
    """True for the HTTP statuses the policy retries (408, 409, 429, 5xx)."""
    return status in RETRYABLE_STATUSES or 500 <= status <= 599


def error_for_status(
    status: int,
    model: str,
    detail: str,
    *,
    key_env: str,
    retry_after: float | None = None,
) -> ProviderError:
    """The typed error for an HTTP failure of ``model`` (``provider/model``).

    ``detail`` is the provider's own message, already scrubbed of secrets; it is left out
    of authentication errors entirely because those are where servers echo keys.
    """
    said = f" The provider said: {detail}" if detail else ""
    if status in (401, 403):
        return AuthenticationError(
            f"{model}: the API key was rejected (HTTP {status}). Check that the {key_env} "
            "environment variable holds a valid key with access to this model."
        )
    if "logits_all=False" in detail:
        # llama-cpp-python's server answers a request for log-probabilities so (HTTP 500)
        # when started without them: no retry will change that.
        return BadRequestError(
            f"{model}: the server gives no token log-probabilities (HTTP {status}).{said} "
            "Start it with them (python -m sdtt.models.llama_server --logprobs), or leave "
            "out --logprobs."
        )
    if status == 429:
        return RateLimitError(f"{model}: rate limited (HTTP 429).{said}", retry_after=retry_after)
    if is_retryable_status(status):
        return ServerError(
            f"{model}: the provider failed (HTTP {status}).{said}", retry_after=retry_after
        )
    if status == 400 and _CONTEXT_OVERFLOW.search(detail):
        return BadRequestError(
            f"{model}: the prompt is longer than the model's context (HTTP 400).{said} "
            "Put fewer turns of persona history in the prompt (--history-turns N; on demo "
            "and simulate, --context-tokens N cuts it to fit a context of N tokens), or "
            "give the server a larger context (llama.cpp: -c / --n-ctx; Ollama: num_ctx)."
        )
    if status == 400 and "no connected db" in detail.lower():
        # LiteLLM's proxy looks a key it does not know up in its database, which a local
        # proxy has not got: the request carried no key, or the wrong one.
        return AuthenticationError(
            f"{model}: the server did not accept the request's key (HTTP 400).{said} "
            "A LiteLLM proxy says this when a request carries no key or the wrong one: "
            "name the environment variable holding its master key with --api-key-env "
            "(e.g. --api-key-env LITELLM_MASTER_KEY)."
        )
    if status == 404:
        return BadRequestError(
            f"{model}: not found (HTTP 404); check the model name and the base URL.{said}"
        )
    return BadRequestError(f"{model}: the request was rejected (HTTP {status}).{said}")


_CONTEXT_OVERFLOW = re.compile(
    r"context[ _-]?(length|window|size)|maximum context|exceeds? (the )?(available )?context"
    r"|n_ctx|prompt is too long",
    re.IGNORECASE,
)
"""How servers say a prompt does not fit (OpenAI, vLLM and llama-cpp-python: "maximum
context length is"; llama.cpp: "exceeds the available context size"; Anthropic: "prompt
is too long")."""


def provider_message(body: object) -> str:
    """The provider's own message in an error body (``{"error": {"message": ...}}``).

    Both OpenAI and Anthropic use that shape (or hand over the inner object); a plain-text
    body is returned as it is.
    The result is raw: pass it through :func:`scrub` before showing it anywhere.
    """
    if isinstance(body, dict):
        # The OpenAI SDK hands over the inner error object, Anthropic's the whole body.
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
        return error if isinstance(error, str) else ""
    return body if isinstance(body, str) else ""


_KEY_LIKE = re.compile(r"\b(?:sk|pk|rk|key|token)[-_][A-Za-z0-9_\-\.\*]{6,}", re.IGNORECASE)


def scrub(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every secret and anything shaped like an API key replaced, shortened.

    Providers' error messages sometimes quote the key they received; this is applied to
    every provider message before it reaches an exception, a log or the screen.
    """
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[redacted]")
    text = _KEY_LIKE.sub("[redacted]", text)
    text = " ".join(text.split())
    if len(text) > MAX_ERROR_TEXT:
        text = text[: MAX_ERROR_TEXT - 3] + "..."
    return text
