"""Batch APIs: many calls of one model sent together, answered within hours at half price.

A provider with a batch API names, in its :class:`~sdtt.models.registry.Provider` entry
(``batch``), a module beside it holding ``create_batch(model) -> BatchBackend``: the
batch API for one :class:`~sdtt.models.model.Model`. :func:`batch_backend` finds it.
``sdtt generate --batch`` (:mod:`sdtt.generate.batch_api`) runs any backend alike, so a
new one needs no change there.

Each request body is exactly the one the provider's ``generate`` would send (its public
``request``), and each answer is read by its public ``output_of``, so prompts, cache
marks, settings and usage are the same with and without ``--batch``. Every request to a
batch API (upload, create, poll, download) goes through the provider's SDK layer
(``SdkAPI.call``: the same error mapping as a chat call, the provider's own message kept)
and the model's retry policy (``Model.call``: 429 and 5xx retried, ``retry-after``
honoured, the same deadline): :class:`SdkBatch` does that for backends on an SDK.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar, cast

from sdtt.errors import ConfigError
from sdtt.models.base import GenerateConfig, ModelOutput, Prompt
from sdtt.models.model import Model
from sdtt.models.registry import PROVIDERS, Provider, load, provider_of

BatchState = Literal["running", "ended"]
REQUEST_TIMEOUT = 300.0
"""Seconds one batch API request may take (an upload can hold thousands of prompts)."""
T = TypeVar("T")


@dataclass(frozen=True)
class BatchRequest:
    """One call of a batch; ``custom_id`` ties the answer back to its chain and step."""

    custom_id: str
    prompt: Prompt
    config: GenerateConfig


@dataclass(frozen=True)
class BatchResult:
    """The answer to one request, or why there is none."""

    custom_id: str
    output: ModelOutput | None = None
    error: str | None = None


class BatchBackend(Protocol):
    """One provider's batch API for one model."""

    model: str
    """The ``provider/model`` name."""

    async def submit(self, requests: Sequence[BatchRequest]) -> str:
        """Send the requests as one batch; return the batch id."""
        ...

    async def state(self, batch_id: str) -> BatchState:
        """Whether the batch is still running or has ended (completed, failed, expired)."""
        ...

    async def results(self, batch_id: str) -> list[BatchResult]:
        """The answers of an ended batch (requests without one come back with an error)."""
        ...


class SdkBatch:
    """What batch backends on an official SDK share: requests through the model's API
    layer (``SdkAPI.call``) under its retry policy."""

    def __init__(self, model: Model) -> None:
        self.handle = model
        """The model whose retry policy, limit and SDK client the requests use."""
        self.api: Any = model.api
        self.model: str = model.name

    async def _request(self, what: str, operation: Callable[[Any], Awaitable[T]]) -> T:
        """One batch API request (``operation`` gets the SDK client), retried by policy."""
        return await self.handle.call(
            lambda: self.api.call(operation, REQUEST_TIMEOUT),
            timeout=REQUEST_TIMEOUT,
            what=what,
        )


def batch_provider(name: str) -> Provider:
    """The provider of model ``name``, when it has a batch API; ConfigError if not (a
    command checks this before it writes anything)."""
    provider = provider_of(name)
    if provider is None or not provider.batch:
        able = " and ".join(f"{p.name}/" for p in PROVIDERS.values() if p.batch)
        raise ConfigError(
            f"--batch works with {able} models only, not {name}. "
            "Run without --batch for this model."
        )
    return provider


def batch_backend(model: Any) -> BatchBackend:
    """The batch API for ``model`` (a :class:`Model`, or a bare provider, which gets the
    default policy), from its provider's ``batch`` module; ConfigError if it has none."""
    provider = batch_provider(str(getattr(model, "name", "?")))
    create = load(provider, "create_batch", provider.batch)
    return cast(BatchBackend, create(model if isinstance(model, Model) else Model(model)))
