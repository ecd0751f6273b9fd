"""The ``anthropic`` provider: Anthropic's Messages API through the official SDK.

``anthropic/claude-sonnet-4-5`` reads its key from ``ANTHROPIC_API_KEY``; ``base_url``
(or ``ANTHROPIC_BASE_URL``) points it at a proxy or a compatible server.

The system prompt is sent as one content block holding the prompt's stable prefix
(instructions, then persona history) marked ``cache_control: ephemeral``: Anthropic
caches everything up to that mark, so later calls of a session pay for the prefix once
and report it as ``cache_read_input_tokens``. The growing dialogue and the task follow in
the user message, after the mark.

Anthropic finds an earlier cache entry only at a content-block boundary, so a dialogue
that grows inside one block is never read from the cache. When the prompt says that the
first ``stable_dialogue_chars`` characters of its dialogue will not change (in a
pseudo-dialogue chain: the chats on finished topics), the user message is sent as two
text blocks, that stable part marked ``cache_control: ephemeral`` and then the rest. The
two blocks concatenate to exactly the text of the one-block message. A request thus
carries at most two marks, within the API's limit of four.

Cache marks are sent only to Anthropic itself (no ``base_url``, or a host under
anthropic.com). Other servers speaking the Messages API (LiteLLM's proxy in front of a
local model, for one) cannot use them, and some refuse a list of system blocks: they get
the system prompt and the user message as plain strings. ``cache_marks=True`` (or the
environment variable ``SDTT_ANTHROPIC_CACHE_MARKS=1``) sends the marks anyway, for a proxy
that forwards to Anthropic; ``0`` never sends them.

``GenerateConfig.temperature`` (capped at 1.0) is sent to every server but Anthropic's
own API, whose current Messages API (SDK 2.x) has no such parameter: a proxy in front of
another model does use it, so a judge's temperature 0 reaches that model. The Messages
API takes no seed, so ``seed`` is never sent.

Usage: ``input_tokens`` is the whole input (Anthropic's uncached ``input_tokens`` plus
cache reads and cache writes), and ``cached_input_tokens`` the part read from the cache,
the same meaning as for OpenAI.

The SDK's own retries are off (``max_retries=0``): :class:`sdtt.models.Model` applies
the one retry policy. Errors become the typed errors of :mod:`sdtt.errors`, with any key
scrubbed from their text.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from sdtt.models import sdk
from sdtt.models.base import GenerateConfig, ModelOutput, Prompt, Usage
from sdtt.models.registry import PROVIDERS
from sdtt.models.sdk import SdkAPI, count, is_own_host, reported_count

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

PROVIDER = PROVIDERS["anthropic"]
"""This provider's registry entry, which holds the facts below."""
KEY_ENV = PROVIDER.key_env
BASE_URL_ENV = PROVIDER.base_url_env
OWN_HOSTS = PROVIDER.own_hosts
"""The only hosts the key in ``KEY_ENV`` is sent to."""
EMPTY_USER_TEXT = "(The conversation has not started yet.)"
"""The Messages API rejects an empty user message; this stands in for one."""
MAX_CACHE_MARKS = 4
"""The Messages API refuses a request with more ``cache_control`` marks than this; ours
carry at most two (the system prompt and the stable part of the dialogue)."""
CACHE_MARK = {"type": "ephemeral"}
CACHE_MARKS_ENV = "SDTT_ANTHROPIC_CACHE_MARKS"
"""``1`` sends cache marks to any ``base_url``, ``0`` to none; unset: to Anthropic only."""
MAX_TEMPERATURE = 1.0
"""The Messages API refuses a temperature above this."""


def is_anthropic_host(base_url: str | None) -> bool:
    """True when calls go to Anthropic's own API (no ``base_url``, or its own host)."""
    return base_url is None or is_own_host(base_url, OWN_HOSTS)


def wants_cache_marks(base_url: str | None, setting: bool | None = None) -> bool:
    """Whether requests carry ``cache_control`` marks: ``setting``, the env, or the host."""
    if setting is not None:
        return setting
    env = os.environ.get(CACHE_MARKS_ENV, "").strip()
    if env in ("0", "1"):
        return env == "1"
    return is_anthropic_host(base_url)


def user_content(prompt: Prompt) -> str | list[dict[str, Any]]:
    """The user message's content: one string, or two text blocks split after the stable part.

    The split is made only when ``stable_dialogue_chars`` lies within the dialogue and both
    parts hold more than whitespace (the API refuses whitespace-only text blocks).
    """
    text = prompt.user_text() or EMPTY_USER_TEXT
    cut = prompt.stable_dialogue_chars
    if not 0 < cut <= len(prompt.dialogue):
        return text
    # user_text() starts with the dialogue, so text[cut:] is the dialogue's unstable
    # tail followed by the task, joined exactly as before.
    stable, rest = text[:cut], text[cut:]
    if not stable.strip() or not rest.strip():
        return text
    return [
        {"type": "text", "text": stable, "cache_control": dict(CACHE_MARK)},
        {"type": "text", "text": rest},
    ]


def image_blocks(prompt: Prompt) -> list[dict[str, Any]]:
    """The prompt's images as Messages API ``image`` blocks with base64 sources."""
    return [
        {
            "type": "image",
            "source": {"type": "base64", "media_type": image.media_type, "data": image.base64()},
        }
        for image in prompt.images
    ]


def text_blocks(content: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A user message's content as a list of blocks (images go before them)."""
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


class AnthropicAPI(SdkAPI["AsyncAnthropic"]):
    """One Messages API call per ``generate``, through the official SDK."""

    package = "anthropic"
    client_class = "AsyncAnthropic"
    key_env = KEY_ENV
    base_url_env = BASE_URL_ENV
    own_hosts = OWN_HOSTS
    no_key_hint = "Export your Anthropic API key there."
    service = "the Anthropic API"
    reply_kind = "a Messages API reply"
    base_url_hint = "it points to an Anthropic-compatible server (without /v1)"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str | None = None,
        cache_marks: bool | None = None,
    ) -> None:
        super().__init__(model, base_url=base_url, api_key_env=api_key_env)
        self.cache_marks = wants_cache_marks(self.base_url, cache_marks)
        """Whether requests carry ``cache_control`` marks (see the module's docstring)."""
        self.sends_temperature = not is_anthropic_host(self.base_url)

    def request(self, prompt: Prompt, config: GenerateConfig) -> dict[str, Any]:
        """The keyword arguments of the Messages API call for ``prompt``."""
        content = (
            user_content(prompt) if self.cache_marks else (prompt.user_text() or EMPTY_USER_TEXT)
        )
        if prompt.images:
            content = image_blocks(prompt) + text_blocks(content)
        kwargs: dict[str, Any] = {
            "model": self.model,
            "max_tokens": config.max_tokens,
            "messages": [{"role": "user", "content": content}],
        }
        if self.sends_temperature:
            kwargs["temperature"] = min(max(config.temperature, 0.0), MAX_TEMPERATURE)
        system = prompt.system_text()
        if system and self.cache_marks:
            kwargs["system"] = [{"type": "text", "text": system, "cache_control": dict(CACHE_MARK)}]
        elif system:
            kwargs["system"] = system
        stops = [stop for stop in config.stop if stop.strip()]
        if stops:
            # The API refuses whitespace-only stop sequences.
            kwargs["stop_sequences"] = stops
        return kwargs

    async def _call(self, client: AsyncAnthropic, kwargs: dict[str, Any], timeout: float) -> Any:
        kwargs = dict(kwargs)
        extra: dict[str, Any] = {}
        if "temperature" in kwargs:
            # The SDK's create() has no temperature argument; the JSON body can carry it.
            extra["temperature"] = kwargs.pop("temperature")
        return await client.messages.create(**kwargs, extra_body=extra or None, timeout=timeout)

    def output_of(self, message: Any) -> ModelOutput:
        content = getattr(message, "content", None)
        if not isinstance(content, list):
            raise self._malformed("it holds no content blocks")
        texts = [getattr(block, "text", None) for block in content]
        if any(text is not None and not isinstance(text, str) for text in texts):
            raise self._malformed("a text block holds no text")
        usage = getattr(message, "usage", None)
        uncached = count(getattr(usage, "input_tokens", 0))
        # A proxy in front of another server may leave the cache fields out: unknown.
        read = reported_count(getattr(usage, "cache_read_input_tokens", None))
        written = count(getattr(usage, "cache_creation_input_tokens", 0))
        return ModelOutput(
            text="".join(text for text in texts if isinstance(text, str)),
            model=self.name,
            usage=Usage(
                input_tokens=uncached + (read or 0) + written,
                cached_input_tokens=read,
                output_tokens=count(getattr(usage, "output_tokens", 0)),
            ),
        )


def create(
    model: str,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    cache_marks: bool | None = None,
) -> AnthropicAPI:
    """An ``anthropic/<model>`` provider; ``base_url`` selects another endpoint.

    ``cache_marks`` forces ``cache_control`` marks on or off (default: on for Anthropic's
    own API only).
    """
    return AnthropicAPI(model, base_url=base_url, api_key_env=api_key_env, cache_marks=cache_marks)


def availability() -> tuple[bool, str]:
    """Whether ``anthropic/...`` can be used here, and why (never shows the key)."""
    return sdk.availability(
        "anthropic",
        KEY_ENV,
        BASE_URL_ENV,
        OWN_HOSTS,
        base_url_note="no key needed there",
        no_key_hint="export your Anthropic API key there",
    )
