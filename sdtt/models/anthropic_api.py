"""The ``anthropic`` provider: Anthropic's Messages API through the official SDK.

``anthropic/claude-sonnet-4-5`` reads its key from ``ANTHROPIC_API_KEY``; ``base_url``
(or ``ANTHROPIC_BASE_URL``) points it at a proxy or a compatible server.

The system prompt is sent as one content block holding the prompt's stable prefix
(instructions, then persona history) marked ``cache_control: ephemeral``: Anthropic
caches everything up to that mark, so later calls of a session pay for the prefix once
and report it as ``cache_read_input_tokens``. The growing dialogue and the task follow in
the user message, after the mark.

The Messages API (SDK 2.x) takes no sampling temperature or seed, so
``GenerateConfig.temperature`` and ``seed`` are not sent.

Usage: ``input_tokens`` is the whole input (Anthropic's uncached ``input_tokens`` plus
cache reads and cache writes), and ``cached_input_tokens`` the part read from the cache,
the same meaning as for OpenAI.

The SDK's own retries are off (``max_retries=0``): :class:`sdtt.models.Model` applies
the one retry policy. Errors become the typed errors of :mod:`sdtt.errors`, with any key
scrubbed from their text.
"""

from __future__ import annotations

import os
from importlib import metadata, util
from typing import TYPE_CHECKING, Any

from sdtt.errors import (
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    ProviderUnavailableError,
)
from sdtt.models.base import GenerateConfig, ModelOutput, Prompt, Usage
from sdtt.models.retry import error_for_status, parse_retry_after, provider_message, scrub

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

KEY_ENV = "ANTHROPIC_API_KEY"
BASE_URL_ENV = "ANTHROPIC_BASE_URL"
NO_KEY = "not-needed"
"""Sent to a ``base_url`` server when no key is set."""
EMPTY_USER_TEXT = "(The conversation has not started yet.)"
"""The Messages API rejects an empty user message; this stands in for one."""


def _import_anthropic() -> Any:
    try:
        import anthropic
    except ImportError as error:
        raise ProviderUnavailableError(
            f"The anthropic provider needs the 'anthropic' package ({error.msg}). "
            "Install it with: pip install anthropic"
        ) from None
    return anthropic


class AnthropicAPI:
    """One Messages API call per ``generate``, through the official SDK."""

    def __init__(self, model: str, *, base_url: str | None = None) -> None:
        self.name = f"anthropic/{model}"
        self.model = model
        self.base_url = base_url or os.environ.get(BASE_URL_ENV) or None
        key = os.environ.get(KEY_ENV, "")
        if not key and self.base_url is None:
            raise ProviderUnavailableError(
                f"{self.name}: the {KEY_ENV} environment variable is not set. "
                "Export your Anthropic API key there."
            )
        self._key = key or NO_KEY
        self._client: AsyncAnthropic | None = None
        _import_anthropic()

    def __repr__(self) -> str:
        # Never show the key, even in a debugger or a log of locals.
        return f"AnthropicAPI({self.name!r}, base_url={self.base_url!r})"

    def _get_client(self) -> AsyncAnthropic:
        # Created on first use, inside the trio run that uses it. An explicit api_key
        # also stops the SDK from looking for profiles or other credentials on disk.
        if self._client is None:
            anthropic = _import_anthropic()
            self._client = anthropic.AsyncAnthropic(
                api_key=self._key, base_url=self.base_url, max_retries=0
            )
        return self._client

    def request(self, prompt: Prompt, config: GenerateConfig) -> dict[str, Any]:
        """The keyword arguments of the Messages API call for ``prompt``."""
        kwargs: dict[str, Any] = {
            "model": self.model,
            "max_tokens": config.max_tokens,
            "messages": [{"role": "user", "content": prompt.user_text() or EMPTY_USER_TEXT}],
        }
        system = prompt.system_text()
        if system:
            kwargs["system"] = [
                {"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}
            ]
        stops = [stop for stop in config.stop if stop.strip()]
        if stops:
            # The API refuses whitespace-only stop sequences.
            kwargs["stop_sequences"] = stops
        return kwargs

    async def generate(self, prompt: Prompt, config: GenerateConfig) -> ModelOutput:
        """One Messages API call; typed errors on failure."""
        anthropic = _import_anthropic()
        client = self._get_client()
        kwargs = self.request(prompt, config)
        failure: ProviderError | None = None
        try:
            message = await client.messages.create(**kwargs, timeout=config.timeout)
        except anthropic.APITimeoutError:
            failure = ProviderTimeoutError(f"{self.name}: no answer within {config.timeout:g} s.")
        except anthropic.APIConnectionError:
            failure = ProviderConnectionError(
                f"{self.name}: could not reach {self._where()}; check the network "
                "or that the server is running."
            )
        except anthropic.APIStatusError as error:
            failure = error_for_status(
                error.status_code,
                self.name,
                scrub(provider_message(error.body), [self._key]),
                key_env=KEY_ENV,
                retry_after=parse_retry_after(error.response.headers),
            )
        except (anthropic.APIResponseValidationError, ValueError):
            failure = self._malformed("the body is not valid JSON")
        # Raised here, outside the except blocks, so the SDK's exception (whose text may
        # quote a response body) is not chained to ours.
        if failure is not None:
            raise failure
        return self._output(message)

    def _output(self, message: Any) -> ModelOutput:
        content = getattr(message, "content", None)
        if not isinstance(content, list):
            raise self._malformed("it holds no content blocks")
        texts = [getattr(block, "text", None) for block in content]
        if any(text is not None and not isinstance(text, str) for text in texts):
            raise self._malformed("a text block holds no text")
        usage = getattr(message, "usage", None)
        uncached = _count(getattr(usage, "input_tokens", 0))
        read = _count(getattr(usage, "cache_read_input_tokens", 0))
        written = _count(getattr(usage, "cache_creation_input_tokens", 0))
        return ModelOutput(
            text="".join(text for text in texts if isinstance(text, str)),
            model=self.name,
            usage=Usage(
                input_tokens=uncached + read + written,
                cached_input_tokens=read,
                output_tokens=_count(getattr(usage, "output_tokens", 0)),
            ),
        )

    def _malformed(self, why: str) -> ProviderError:
        return ProviderError(
            f"{self.name}: the answer from {self._where()} is not a Messages API reply "
            f"({why}). If you passed --base-url, check that it points to an "
            "Anthropic-compatible server (without /v1)."
        )

    def _where(self) -> str:
        return self.base_url or "the Anthropic API"

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        if self._client is not None:
            await self._client.close()
            self._client = None


def _count(value: object) -> int:
    return value if isinstance(value, int) and value > 0 else 0


def create(model: str, *, base_url: str | None = None) -> AnthropicAPI:
    """An ``anthropic/<model>`` provider; ``base_url`` selects another endpoint."""
    return AnthropicAPI(model, base_url=base_url)


def availability() -> tuple[bool, str]:
    """Whether ``anthropic/...`` can be used here, and why (never shows the key)."""
    if util.find_spec("anthropic") is None:
        return False, "the anthropic package is not installed: pip install anthropic"
    sdk = f"anthropic {metadata.version('anthropic')} installed"
    if os.environ.get(KEY_ENV):
        return True, f"{sdk}; {KEY_ENV} is set"
    if os.environ.get(BASE_URL_ENV):
        return True, f"{sdk}; {BASE_URL_ENV} is set (no key needed there)"
    return False, f"{sdk}, but {KEY_ENV} is not set: export your Anthropic API key there"
