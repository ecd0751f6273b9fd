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

from typing import TYPE_CHECKING, Any

from sdtt.models import sdk
from sdtt.models.base import GenerateConfig, ModelOutput, Prompt, TokenLogprobs, Usage
from sdtt.models.registry import PROVIDERS
from sdtt.models.sdk import SdkAPI, count, reported_count

if TYPE_CHECKING:
    from openai import AsyncOpenAI

PROVIDER = PROVIDERS["openai"]
"""This provider's registry entry, which holds the facts below."""
KEY_ENV = PROVIDER.key_env
BASE_URL_ENV = PROVIDER.base_url_env
OWN_HOSTS = PROVIDER.own_hosts
"""The only hosts the key in ``KEY_ENV`` is sent to."""


class OpenAIAPI(SdkAPI["AsyncOpenAI"]):
    """One chat completions call per ``generate``, through the official SDK."""

    package = "openai"
    client_class = "AsyncOpenAI"
    key_env = KEY_ENV
    base_url_env = BASE_URL_ENV
    own_hosts = OWN_HOSTS
    no_key_hint = (
        f"Export your key there, or pass --base-url (or set {BASE_URL_ENV}) to use a local "
        "OpenAI-compatible server such as vLLM, Ollama or llama.cpp."
    )
    service = "the OpenAI API"
    reply_kind = "a chat completion"
    base_url_hint = "it is the server's OpenAI-compatible endpoint, usually ending in /v1"

    def request(self, prompt: Prompt, config: GenerateConfig) -> dict[str, Any]:
        """The keyword arguments of the chat completions call for ``prompt``."""
        messages: list[dict[str, Any]] = []
        system = prompt.system_text()
        if system:
            messages.append({"role": "system", "content": system})
        messages.append({"role": "user", "content": user_content(prompt)})
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
        if config.top_logprobs > 0:
            kwargs["logprobs"] = True
            kwargs["top_logprobs"] = min(20, config.top_logprobs)
        return kwargs

    async def _call(self, client: AsyncOpenAI, kwargs: dict[str, Any], timeout: float) -> Any:
        # The SDK's generic post (documented for endpoints it has no method for) sends the
        # same JSON body as chat.completions.create, without re-walking every message
        # against the typed request schema first: that walk was a fifth of the client's
        # CPU per call (benchmarks/generation_throughput.py), and the body is plain JSON.
        # The answer comes back as plain JSON too (cast_to=object): building the SDK's
        # response objects was another tenth, and output_of reads either.
        return await client.post(
            "/chat/completions",
            body=kwargs,
            cast_to=object,
            options={"timeout": timeout},
        )

    def output_of(self, completion: Any) -> ModelOutput:
        """A chat completion (the decoded JSON, or the SDK's object) as a ``ModelOutput``."""
        choices = _field(completion, "choices")
        if not isinstance(choices, list) or not choices:
            raise self._malformed("it holds no choices")
        message = _field(choices[0], "message")
        text = _field(message, "content")
        if text is not None and not isinstance(text, str):
            raise self._malformed("the message content is not text")
        usage = _field(completion, "usage")
        details = _field(usage, "prompt_tokens_details")
        return ModelOutput(
            text=text or "",
            model=self.name,
            usage=Usage(
                input_tokens=count(_field(usage, "prompt_tokens")),
                # llama.cpp's server sends no prompt_tokens_details: unknown, not 0.
                cached_input_tokens=reported_count(_field(details, "cached_tokens")),
                output_tokens=count(_field(usage, "completion_tokens")),
            ),
            logprobs=_logprobs(_field(choices[0], "logprobs")),
        )


def _field(value: Any, name: str) -> Any:
    """``value``'s field ``name`` (a JSON object's key or an SDK object's attribute), or
    None when it has none."""
    if isinstance(value, dict):
        return value.get(name)
    return getattr(value, name, None)


def user_content(prompt: Prompt) -> str | list[dict[str, Any]]:
    """The user message's content: its text, or with images a list of content parts
    (each image as an ``image_url`` part holding a data URI, then the text)."""
    if not prompt.images:
        return prompt.user_text()
    parts: list[dict[str, Any]] = [
        {"type": "image_url", "image_url": {"url": image.data_uri()}} for image in prompt.images
    ]
    parts.append({"type": "text", "text": prompt.user_text()})
    return parts


def _logprobs(found: Any) -> tuple[TokenLogprobs, ...] | None:
    """The ``logprobs.content`` of a choice as :class:`TokenLogprobs`; None when absent."""
    content = _field(found, "content")
    if not isinstance(content, list):
        return None
    tokens = []
    for entry in content:
        token, logprob = _field(entry, "token"), _field(entry, "logprob")
        if not isinstance(token, str) or not isinstance(logprob, int | float):
            return None
        top = tuple(
            (_field(t, "token"), float(_field(t, "logprob")))
            for t in _field(entry, "top_logprobs") or ()
            if isinstance(_field(t, "token"), str) and isinstance(_field(t, "logprob"), int | float)
        )
        tokens.append(TokenLogprobs(token, float(logprob), top))
    return tuple(tokens)


def create(model: str, *, base_url: str | None = None, api_key_env: str | None = None) -> OpenAIAPI:
    """An ``openai/<model>`` provider; ``base_url`` selects an OpenAI-compatible server."""
    return OpenAIAPI(model, base_url=base_url, api_key_env=api_key_env)


def availability() -> tuple[bool, str]:
    """Whether ``openai/...`` can be used here, and why (never shows the key)."""
    return sdk.availability(
        "openai",
        KEY_ENV,
        BASE_URL_ENV,
        OWN_HOSTS,
        base_url_note="a compatible server, no key needed",
        no_key_hint=(
            f"export it, or pass --base-url / set {BASE_URL_ENV} for a local "
            "OpenAI-compatible server"
        ),
    )
