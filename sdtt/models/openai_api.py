"""The ``openai`` provider: OpenAI's chat completions API, or any compatible server.

``openai/gpt-4o`` calls api.openai.com with the key in ``OPENAI_API_KEY``. With
``base_url`` (``--base-url``, or the ``OPENAI_BASE_URL`` environment variable) it calls
any OpenAI-compatible server instead: vLLM, Ollama (``http://localhost:11434/v1``),
llama.cpp's server, LM Studio. Local servers ignore the key, so none is needed there.

The SDK's own retries are off (``max_retries=0``): :class:`sdtt.models.Model` applies
the one retry policy. The prompt's stable part (instructions, persona history) goes in
the system message, first, so the provider's automatic prefix cache can serve it; the
dialogue and the task go in the user message. Errors become the typed errors of
:mod:`sdtt.errors`, with any key scrubbed from their text.
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
    from openai import AsyncOpenAI

KEY_ENV = "OPENAI_API_KEY"
BASE_URL_ENV = "OPENAI_BASE_URL"
NO_KEY = "not-needed"
"""Sent to a ``base_url`` server when no key is set; local servers ignore the key."""


def _import_openai() -> Any:
    try:
        import openai
    except ImportError as error:
        raise ProviderUnavailableError(
            f"The openai provider needs the 'openai' package ({error.msg}). "
            "Install it with: pip install openai"
        ) from None
    return openai


class OpenAIAPI:
    """One chat completions call per ``generate``, through the official SDK."""

    def __init__(self, model: str, *, base_url: str | None = None) -> None:
        self.name = f"openai/{model}"
        self.model = model
        self.base_url = base_url or os.environ.get(BASE_URL_ENV) or None
        key = os.environ.get(KEY_ENV, "")
        if not key and self.base_url is None:
            raise ProviderUnavailableError(
                f"{self.name}: the {KEY_ENV} environment variable is not set. Export your "
                f"key there, or pass --base-url (or set {BASE_URL_ENV}) to use a local "
                "OpenAI-compatible server such as vLLM, Ollama or llama.cpp."
            )
        self._key = key or NO_KEY
        self._client: AsyncOpenAI | None = None
        _import_openai()

    def __repr__(self) -> str:
        # Never show the key, even in a debugger or a log of locals.
        return f"OpenAIAPI({self.name!r}, base_url={self.base_url!r})"

    def _get_client(self) -> AsyncOpenAI:
        # Created on first use, inside the trio run that uses it.
        if self._client is None:
            openai = _import_openai()
            self._client = openai.AsyncOpenAI(
                api_key=self._key, base_url=self.base_url, max_retries=0
            )
        return self._client

    def request(self, prompt: Prompt, config: GenerateConfig) -> dict[str, Any]:
        """The keyword arguments of the chat completions call for ``prompt``."""
        messages: list[dict[str, str]] = []
        system = prompt.system_text()
        if system:
            messages.append({"role": "system", "content": system})
        messages.append({"role": "user", "content": prompt.user_text()})
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": config.temperature,
        }
        # OpenAI's newer models only accept max_completion_tokens; compatible servers
        # (vLLM, Ollama, llama.cpp) have long understood max_tokens.
        token_field = "max_tokens" if self.base_url else "max_completion_tokens"
        kwargs[token_field] = config.max_tokens
        if config.stop:
            kwargs["stop"] = list(config.stop)
        if config.seed is not None:
            kwargs["seed"] = config.seed
        return kwargs

    async def generate(self, prompt: Prompt, config: GenerateConfig) -> ModelOutput:
        """One chat completion; typed errors on failure."""
        openai = _import_openai()
        client = self._get_client()
        kwargs = self.request(prompt, config)
        failure: ProviderError | None = None
        try:
            completion = await client.chat.completions.create(**kwargs, timeout=config.timeout)
        except openai.APITimeoutError:
            failure = ProviderTimeoutError(f"{self.name}: no answer within {config.timeout:g} s.")
        except openai.APIConnectionError:
            failure = ProviderConnectionError(
                f"{self.name}: could not reach {self._where()}; check the network "
                "or that the server is running."
            )
        except openai.APIStatusError as error:
            failure = error_for_status(
                error.status_code,
                self.name,
                scrub(provider_message(error.body), [self._key]),
                key_env=KEY_ENV,
                retry_after=parse_retry_after(error.response.headers),
            )
        except (openai.APIResponseValidationError, ValueError):
            failure = self._malformed("the body is not valid JSON")
        # Raised here, outside the except blocks, so the SDK's exception (whose text may
        # quote a response body) is not chained to ours.
        if failure is not None:
            raise failure
        return self._output(completion)

    def _output(self, completion: Any) -> ModelOutput:
        choices = getattr(completion, "choices", None)
        if not isinstance(choices, list) or not choices:
            raise self._malformed("it holds no choices")
        message = getattr(choices[0], "message", None)
        text = getattr(message, "content", None)
        if text is not None and not isinstance(text, str):
            raise self._malformed("the message content is not text")
        usage = getattr(completion, "usage", None)
        details = getattr(usage, "prompt_tokens_details", None)
        return ModelOutput(
            text=text or "",
            model=self.name,
            usage=Usage(
                input_tokens=_count(getattr(usage, "prompt_tokens", 0)),
                cached_input_tokens=_count(getattr(details, "cached_tokens", 0)),
                output_tokens=_count(getattr(usage, "completion_tokens", 0)),
            ),
        )

    def _malformed(self, why: str) -> ProviderError:
        return ProviderError(
            f"{self.name}: the answer from {self._where()} is not a chat completion ({why}). "
            "If you passed --base-url, check that it is the server's OpenAI-compatible "
            "endpoint, usually ending in /v1."
        )

    def _where(self) -> str:
        return self.base_url or "the OpenAI API"

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        if self._client is not None:
            await self._client.close()
            self._client = None


def _count(value: object) -> int:
    return value if isinstance(value, int) and value > 0 else 0


def create(model: str, *, base_url: str | None = None) -> OpenAIAPI:
    """An ``openai/<model>`` provider; ``base_url`` selects an OpenAI-compatible server."""
    return OpenAIAPI(model, base_url=base_url)


def availability() -> tuple[bool, str]:
    """Whether ``openai/...`` can be used here, and why (never shows the key)."""
    if util.find_spec("openai") is None:
        return False, "the openai package is not installed: pip install openai"
    sdk = f"openai {metadata.version('openai')} installed"
    if os.environ.get(KEY_ENV):
        return True, f"{sdk}; {KEY_ENV} is set"
    if os.environ.get(BASE_URL_ENV):
        return True, f"{sdk}; {BASE_URL_ENV} is set (a compatible server, no key needed)"
    return False, (
        f"{sdk}, but {KEY_ENV} is not set: export it, or pass --base-url / set "
        f"{BASE_URL_ENV} for a local OpenAI-compatible server"
    )
