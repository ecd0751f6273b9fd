"""``Model``: one provider wrapped with the retry policy, a concurrency limit and a tally.

Providers (:class:`~sdtt.models.base.ModelAPI`) make exactly one call and raise typed
errors; everything around the call lives here, identically for every provider:

- retries by :mod:`sdtt.models.retry`, waiting with ``trio.sleep`` only, so tests on
  ``autojump_clock`` run hours of backoff instantly and exactly;
- a ``trio.CapacityLimiter`` shared by every ``Model`` of the same provider, so one
  process never has more than ``max_concurrency`` calls in flight to it;
- a timeout of ``config.timeout`` seconds per attempt, for every provider;
- latency on the trio clock (retries and waits included) and a running usage tally;
- a :class:`CallRecord` per call, given to an optional callback and logged at DEBUG.
  Records carry names, token counts and error types only: never a key or a prompt.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from types import TracebackType

import trio

from sdtt.errors import ConfigError, ProviderError, ProviderTimeoutError
from sdtt.models.base import GenerateConfig, ModelAPI, ModelOutput, Prompt, Usage
from sdtt.models.retry import RetryPolicy, retry_delay

log = logging.getLogger("sdtt.models")

DEFAULT_MAX_CONCURRENCY: dict[str, int] = {"mock": 100, "openai": 8, "anthropic": 8, "local": 1}
"""Calls in flight per provider unless a ``Model`` asks for another limit."""
FALLBACK_MAX_CONCURRENCY = 8

_LIMITERS: dict[str, trio.CapacityLimiter] = {}


@dataclass(frozen=True)
class CallRecord:
    """What one ``Model.generate`` call cost and how it ended."""

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


def provider_limiter(provider: str, limit: int | None = None) -> trio.CapacityLimiter:
    """The limiter shared by every model of ``provider``; ``limit`` resizes it."""
    limiter = _LIMITERS.get(provider)
    if limiter is None:
        default = DEFAULT_MAX_CONCURRENCY.get(provider, FALLBACK_MAX_CONCURRENCY)
        limiter = trio.CapacityLimiter(limit or default)
        _LIMITERS[provider] = limiter
    elif limit is not None and limiter.total_tokens != limit:
        limiter.total_tokens = limit
    return limiter


def as_prompt(prompt: Prompt | str) -> Prompt:
    """A bare string is taken as the dialogue of a prompt without instructions."""
    return prompt if isinstance(prompt, Prompt) else Prompt(instructions="", dialogue=prompt)


class Model:
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
        self.retry = retry or RetryPolicy()
        self.max_concurrency = max_concurrency
        self.on_call = on_call
        self.usage = Usage()
        """Tokens of every successful call so far."""
        self.calls = 0
        """Calls made through ``generate``, failed ones included."""
        self._rng = random.Random(seed)
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
        config = config or self.config
        limiter = provider_limiter(self.provider, self.max_concurrency)
        started = trio.current_time()
        attempts = 0
        self.calls += 1
        while True:
            attempts += 1
            try:
                async with limiter:
                    output = await self._attempt(prompt, config)
                break
            except ProviderError as error:
                delay = retry_delay(self.retry, error, attempts, self._rng)
                if delay is None:
                    self._record(started, attempts, Usage(), error)
                    if attempts > 1:
                        raise _gave_up(error, attempts) from None
                    raise
                log.info(
                    "%s: %s on attempt %d, retrying in %.2f s",
                    self.name,
                    type(error).__name__,
                    attempts,
                    delay,
                )
            except Exception as error:
                self._record(started, attempts, Usage(), error)
                raise
            await self._sleep(delay)
        latency = trio.current_time() - started
        output = replace(output, model=self.name, latency=latency, attempts=attempts)
        self.usage = self.usage + output.usage
        self._record(started, attempts, output.usage, None)
        return output

    async def _attempt(self, prompt: Prompt, config: GenerateConfig) -> ModelOutput:
        with trio.move_on_after(config.timeout):
            return await self.api.generate(prompt, config)
        raise ProviderTimeoutError(f"{self.name}: no answer within {config.timeout:g} s.")

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

    async def __aenter__(self) -> Model:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"Model({self.name!r})"


def _gave_up(error: ProviderError, attempts: int) -> ProviderError:
    """The same kind of error, saying how many attempts were made."""
    try:
        again = type(error)(f"{error} Gave up after {attempts} attempts.")
    except TypeError:  # a subclass with another signature: keep the original
        return error
    again.retry_after = error.retry_after
    return again
