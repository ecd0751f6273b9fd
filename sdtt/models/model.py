"""``Model``: one provider wrapped with the retry policy, a concurrency limit and a tally.

Providers (:class:`~sdtt.models.base.ModelAPI`) make exactly one call and raise typed
errors; everything around the call lives here, identically for every provider:

- retries by :mod:`sdtt.models.retry`, waiting with ``trio.sleep`` only, so tests on
  ``autojump_clock`` run hours of backoff instantly and exactly;
- a ``trio.CapacityLimiter`` shared by every ``Model`` of the same provider and limit
  (``max_concurrency``, else the provider's ``max_connections``), so models configured
  alike never have more than that many calls in flight together, and a model given
  another limit gets a limiter of its own instead of resizing theirs;
- a timeout of ``config.timeout`` seconds per attempt, for every provider, and an overall
  deadline per call (``RetryPolicy.deadline``, counted from the first attempt: waiting
  for a free slot of the concurrency limit does not count). A provider with an
  ``idle_timeout`` (the embedded local model) times out only an attempt that makes no
  progress for ``config.timeout``; one making progress is never cut, and the deadline
  only stops further attempts;
- latency on the trio clock (retries and waits included) and a running usage tally;
- the same retries, limit and deadline for a provider's other requests (a batch API's
  uploads and polls) through :meth:`Model.call`;
- a :class:`CallRecord` per call, given to an optional callback and logged at DEBUG.
  Records carry names, token counts and error types only: never a key or a prompt;
- a :class:`DroppedInputWarning` (once per model) when a provider reports far fewer input
  tokens than the prompt can hold: a server that silently drops the system message (as
  llama.cpp's server does with some chat formats) loses the whole persona.
"""

from __future__ import annotations

import itertools
import logging
import warnings
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import trio

from sdtt.closing import AsyncClosing
from sdtt.errors import ConfigError, ProviderError, ProviderTimeoutError
from sdtt.models.base import GenerateConfig, ModelAPI, ModelOutput, Prompt, Usage
from sdtt.models.cpu_hold import take_at_once
from sdtt.models.registry import Provider, create_api, provider_of, require_image_input
from sdtt.models.retry import RetryPolicy, policy_from_env, retry_delay
from sdtt.seeds import derive_seed, seeded_rng

log = logging.getLogger("sdtt.models")
status_log = logging.getLogger("sdtt.retries")

CALL_LABEL: ContextVar[str] = ContextVar("sdtt_call_label", default="")
"""What the calls of the running task are for (e.g. "pair p03, order swapped"): each retry
line names it, so lines of concurrent calls can be told apart. Tasks inherit it."""


@contextmanager
def labelled_calls(label: str) -> Iterator[None]:
    """Name the model calls made inside the block (and its tasks) in their retry lines."""
    token = CALL_LABEL.set(label)
    try:
        yield
    finally:
        CALL_LABEL.reset(token)


"""One INFO line per retry (what failed, attempt k of n, the wait): the command line
prints these while a run goes on, so an outage or a hung server shows at once."""
STATUS_CHARS = 160
"""Characters of the failure kept in a retry's status line (the final error has all)."""

FALLBACK_MAX_CONCURRENCY = Provider.max_connections
"""Calls in flight to a provider missing from the registry (a test's own ``ModelAPI``)."""

_LIMITERS: dict[tuple[str, int], trio.CapacityLimiter] = {}

CHARS_PER_TOKEN_LIMIT = 12
"""No tokenizer packs this many characters of chat text into one token on average: a
reported input below ``characters / CHARS_PER_TOKEN_LIMIT`` means text was dropped."""
MIN_CHECKED_CHARS = 2000
"""Shorter prompts are not checked (too little text for the estimate to be reliable)."""
_UNSEEDED = itertools.count()
"""Numbers the models made without a seed, each its own jitter stream."""


class DroppedInputWarning(UserWarning):
    """A provider reported far fewer input tokens than the prompt it was sent."""


def dropped_input(prompt: Prompt, usage: Usage) -> int | None:
    """The prompt's length in characters when ``usage`` reports implausibly few input
    tokens for it (part of it was dropped), else ``None``."""
    chars = len(prompt.system_text()) + len(prompt.user_text())
    if chars < MIN_CHECKED_CHARS or usage.input_tokens <= 0:
        return None
    return chars if usage.input_tokens * CHARS_PER_TOKEN_LIMIT < chars else None


@dataclass(frozen=True)
class CallRecord:
    """What one ``Model.generate`` call cost and how it ended (for ``on_call`` callbacks
    and logs; a pseudo-dialogue chain's file keeps its calls as
    :class:`sdtt.generate.chain.PseudoCallRecord`)."""

    model: str
    """The ``provider/model`` name."""
    usage: Usage
    """Tokens of the successful attempt (zero when the call failed)."""
    latency: float
    """Seconds on the trio clock from the call to its end, retries and waits included."""
    attempts: int
    """Provider calls made, the first included."""
    error: str | None = None
    """The class name of the error the call ended with, or ``None`` on success."""


CallCallback = Callable[[CallRecord], None]
Sleep = Callable[[float], Awaitable[None]]
T = TypeVar("T")
FailureCallback = Callable[[int, BaseException], None]


def default_limit(provider: str) -> int:
    """Calls in flight to ``provider`` at once when a model names no limit of its own."""
    record = provider_of(f"{provider}/")
    return FALLBACK_MAX_CONCURRENCY if record is None else record.max_connections


def provider_limiter(provider: str, limit: int | None = None) -> trio.CapacityLimiter:
    """The limiter shared by every model of ``provider`` configured with ``limit``.

    ``None`` means the provider's default. Models with another limit get another
    limiter: configuring one model never changes how many calls another may make.
    """
    key = (provider, limit or default_limit(provider))
    limiter = _LIMITERS.get(key)
    if limiter is None:
        limiter = trio.CapacityLimiter(key[1])
        _LIMITERS[key] = limiter
    return limiter


def as_prompt(prompt: Prompt | str) -> Prompt:
    """A bare string is taken as the dialogue of a prompt without instructions."""
    return prompt if isinstance(prompt, Prompt) else Prompt(instructions="", dialogue=prompt)


class Model(AsyncClosing):
    """A provider with retries, a concurrency limit, timing and a usage tally.

    Get one with :func:`sdtt.models.get_model`; use it as an async context manager (or
    call :meth:`aclose`) to release the provider's connections or weights.
    """

    def __init__(
        self,
        api: ModelAPI,
        *,
        config: GenerateConfig | None = None,
        retry: RetryPolicy | None = None,
        max_concurrency: int | None = None,
        on_call: CallCallback | None = None,
        seed: int | None = None,
        sleep: Sleep = trio.sleep,
    ) -> None:
        if max_concurrency is not None and max_concurrency < 1:
            raise ConfigError(f"max_concurrency must be at least 1, not {max_concurrency}.")
        self.api = api
        self.config = config or GenerateConfig()
        """Used when ``generate`` gets no config of its own."""
        self.retry = retry or policy_from_env()
        self.max_concurrency = max_concurrency
        self.on_call = on_call
        self.usage = Usage()
        """Tokens of every successful call so far."""
        self.calls = 0
        """Calls made through ``generate``, failed ones included."""
        # Unseeded models still jitter apart from each other (their retries must not
        # line up), and alike from run to run.
        if seed is None:
            seed = derive_seed(0, "unseeded-model", next(_UNSEEDED))
        self._rng = seeded_rng(seed, "retry-jitter")
        self._warned_dropped = False
        # Injectable so HTTP tests (real clock) can check requested waits without waiting.
        self._sleep = sleep

    @property
    def name(self) -> str:
        """The ``provider/model`` name."""
        return self.api.name

    @property
    def provider(self) -> str:
        """The provider part of the name."""
        return self.name.split("/", 1)[0]

    async def generate(
        self, prompt: Prompt | str, config: GenerateConfig | None = None
    ) -> ModelOutput:
        """Ask the model, retrying what the policy retries; raise the last error otherwise.

        The output's ``latency`` and ``attempts`` cover the whole call, retries included.
        """
        prompt = as_prompt(prompt)
        if prompt.images:
            # Before any call: a text-only provider would drop the images silently.
            require_image_input(self.name)
        config = config or self.config
        started = trio.current_time()
        self.calls += 1

        async def attempt(deadline: _Deadline) -> ModelOutput:
            return await self._attempt(prompt, config, deadline)

        def failed(attempts: int, error: BaseException) -> None:
            self._record(started, attempts, Usage(), error)

        output, attempts = await self._retrying(attempt, failed)
        latency = trio.current_time() - started
        output = replace(output, model=self.name, latency=latency, attempts=attempts)
        self._check_input(prompt, output.usage)
        self.usage = self.usage + output.usage
        self._record(started, attempts, output.usage, None)
        return output

    async def call(
        self, operation: Callable[[], Awaitable[T]], *, timeout: float = 60.0, what: str = ""
    ) -> T:
        """Run one provider request other than ``generate`` (a batch API's upload, poll or
        download) under the same retry policy, concurrency limit and deadline.

        ``operation`` makes the request and raises the typed errors of
        :mod:`sdtt.errors` (an SDK provider's ``call`` maps its SDK's errors); each
        attempt may take ``timeout`` seconds. ``what`` names the request in logs and
        timeout errors. Not counted in ``calls`` or ``usage``.
        """
        label = f"{self.name} {what}".strip()

        async def attempt(deadline: _Deadline) -> T:
            seconds = min(timeout, deadline.remaining())
            with trio.move_on_after(seconds):
                return await operation()
            raise ProviderTimeoutError(f"{label}: {_no_answer(seconds, timeout)}")

        result, _ = await self._retrying(attempt, lambda attempts, error: None)
        return result

    async def _retrying(
        self, attempt: Callable[[_Deadline], Awaitable[T]], failed: FailureCallback
    ) -> tuple[T, int]:
        """``attempt`` until it succeeds or the policy gives up; the result and attempts."""
        limiter = provider_limiter(self.provider, self.max_concurrency)
        deadline = _Deadline(self.retry.deadline)
        attempts = 0
        while True:
            attempts += 1
            try:
                await take_at_once(limiter)
                try:
                    deadline.start()
                    return await attempt(deadline), attempts
                finally:
                    limiter.release()
            except ProviderError as error:
                delay = retry_delay(self.retry, error, attempts, self._rng)
                spent = delay is not None and deadline.passed_after(delay)
                if delay is None or spent:
                    failed(attempts, error)
                    if spent or deadline.passed_after(0.0):
                        raise _gave_up(error, attempts, self.retry, deadline) from None
                    if attempts > 1:
                        raise _gave_up(error, attempts, self.retry) from None
                    error.attempts = attempts
                    raise
                label = CALL_LABEL.get()
                status_log.info(
                    "%s%s (attempt %d of %d failed; next try in %s s)",
                    f"{label}: " if label else "",
                    _short(error.base_message),
                    attempts,
                    self.retry.max_attempts,
                    seconds_text(delay),
                )
            except Exception as error:
                failed(attempts, error)
                raise
            await self._sleep(delay)

    def _check_input(self, prompt: Prompt, usage: Usage) -> None:
        chars = dropped_input(prompt, usage)
        if chars is None or self._warned_dropped:
            return
        self._warned_dropped = True
        warnings.warn(
            DroppedInputWarning(
                f"{self.name} reported {usage.input_tokens} input tokens for a prompt of "
                f"{chars:,} characters (at least {chars // CHARS_PER_TOKEN_LIMIT:,} tokens): "
                "the server seems to have dropped part of it, such as the system message "
                "that holds the persona. llama.cpp's server does this with chat formats "
                "that have no system role (e.g. --chat_format gemma); use a format or "
                "template with one."
            ),
            stacklevel=3,
        )

    async def _attempt(
        self, prompt: Prompt, config: GenerateConfig, deadline: _Deadline
    ) -> ModelOutput:
        if self.retry.attempt_timeout is not None:
            # The provider's own HTTP timeout follows the config: raise it too.
            config = replace(config, timeout=self.retry.attempt_timeout)
        if getattr(self.api, "idle_timeout", False):
            # The provider times out a call that stops making progress (the local model:
            # no step of work for config.timeout). A call that is making progress runs
            # to its end, however long: cut off, this machine's CPU would redo the work.
            # The call's deadline still decides whether a failed attempt is tried again.
            return await self.api.generate(prompt, config)
        timeout = min(config.timeout, deadline.remaining())
        with trio.move_on_after(timeout):
            return await self.api.generate(prompt, config)
        raise ProviderTimeoutError(f"{self.name}: {_no_answer(timeout, config.timeout)}")

    def _record(
        self, started: float, attempts: int, usage: Usage, error: BaseException | None
    ) -> None:
        record = CallRecord(
            model=self.name,
            usage=usage,
            latency=trio.current_time() - started,
            attempts=attempts,
            error=None if error is None else type(error).__name__,
        )
        log.debug("model call %s", record)
        if self.on_call is not None:
            self.on_call(record)

    async def aclose(self) -> None:
        """Release the provider's connections or weights."""
        await self.api.aclose()

    def __repr__(self) -> str:
        return f"Model({self.name!r})"


def get_model(
    name: str,
    *,
    config: GenerateConfig | None = None,
    retry: RetryPolicy | None = None,
    max_concurrency: int | None = None,
    on_call: CallCallback | None = None,
    seed: int | None = None,
    **options: Any,
) -> Model:
    """A :class:`Model` for ``provider/model``, e.g. ``openai/gpt-4o`` or ``mock/chatty``.

    ``config`` is the default for calls that bring none; ``retry``, ``max_concurrency``
    (per provider), ``on_call`` and ``seed`` (retry jitter) configure the wrapper. Other
    ``options`` go to the provider (``base_url=`` for openai/anthropic, ``replies=`` for
    mock); options set to ``None`` are dropped. Raises :class:`ConfigError` for a
    malformed name or an unknown provider and :class:`ProviderUnavailableError` when the
    provider can't run here.
    """
    return Model(
        create_api(name, **options),
        config=config,
        retry=retry,
        max_concurrency=max_concurrency,
        on_call=on_call,
        seed=seed,
    )


class _Deadline:
    """The overall deadline of one call, started when its first attempt starts."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self.started: float | None = None

    def start(self) -> None:
        """Start counting (only the first time)."""
        if self.started is None:
            self.started = trio.current_time()

    def remaining(self) -> float:
        """Seconds left (infinite without a deadline)."""
        if self.seconds is None or self.started is None:
            return float("inf")
        return max(self.started + self.seconds - trio.current_time(), 0.0)

    def passed_after(self, wait: float) -> bool:
        """True when the deadline will have passed after waiting ``wait`` seconds."""
        return self.remaining() <= wait

    def elapsed(self) -> float:
        """Seconds since the first attempt started."""
        return 0.0 if self.started is None else trio.current_time() - self.started


def seconds_text(seconds: float) -> str:
    """Seconds as people write them: whole when at least 10, else to a tenth ("0.2")."""
    if seconds >= 10:
        return f"{seconds:.0f}"
    return f"{seconds:.1f}".removesuffix(".0") if seconds >= 0.1 else f"{seconds:.2g}"


def _short(text: str) -> str:
    """A failure's message for a status line: one line, at most ``STATUS_CHARS``, and
    without the full stop that the bracketed attempt count follows."""
    text = " ".join(text.split())
    if len(text) > STATUS_CHARS:
        return text[: STATUS_CHARS - 3] + "..."
    return text if text.endswith("...") else text.removesuffix(".")


def _no_answer(waited: float, attempt_timeout: float) -> str:
    """The timeout message of an attempt that waited ``waited`` of ``attempt_timeout`` s."""
    text = f"no answer within {seconds_text(waited)} s"
    if waited < attempt_timeout:
        # Cut short by the call deadline: say so, or the figure looks arbitrary.
        text += (
            f", what was left of the call's deadline (an attempt may take "
            f"{seconds_text(attempt_timeout)} s)"
        )
    return text + "."


def _gave_up(
    error: ProviderError, attempts: int, policy: RetryPolicy, deadline: _Deadline | None = None
) -> ProviderError:
    """The same kind of error, saying how many attempts were made (and why no more)."""
    note = f"Gave up after {attempts} attempt{'s' if attempts > 1 else ''}"
    if deadline is not None and deadline.seconds is not None:
        note += (
            f" in {deadline.elapsed():.0f} s: the call deadline of {deadline.seconds:g} s is "
            f"spent (set {policy.deadline_env} to allow more)"
        )
    base = error.base_message.rstrip()
    # The provider's own words may end without a full stop: keep the note apart from them.
    separator = " " if base.endswith((".", "!", "?")) else ". "
    try:
        again = type(error)(f"{base}{separator}{note}.")
    except TypeError:  # a subclass with another signature: keep the original
        error.attempts = attempts
        return error
    again.retry_after = error.retry_after
    again.attempts = attempts
    again.base_message = error.base_message
    return again
