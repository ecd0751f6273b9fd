"""The provider interface: one small ``generate`` per provider.

A :class:`Prompt` is laid out so that everything stable comes first and the growing
dialogue is appended at the end. Chat providers send ``instructions + history`` as the
system prompt (the cacheable prefix) and ``dialogue + task`` as the user message;
completion providers (the embedded GGUF model) concatenate ``instructions``, ``history``,
``dialogue`` and ``continue_with`` into one text and continue it. Either way a growing
conversation only ever appends, so prefix caches keep hitting. Where a caller knows that
the start of the dialogue will not change either, ``stable_dialogue_chars`` says so, and a
provider that caches only at explicit marks (Anthropic) can put a second mark there.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class Image:
    """An image a prompt shows the model (image captioning): its bytes and media type.

    Only providers whose registry entry says ``image_input`` accept a prompt with images;
    :class:`sdtt.models.Model` refuses the others before any call.
    """

    data: bytes = field(repr=False)
    media_type: str
    """``image/jpeg``, ``image/png``, ``image/gif`` or ``image/webp``."""
    name: str = ""
    """Where it came from (a file name), for messages; never sent to the model."""

    def base64(self) -> str:
        """The bytes as base64 text, as both providers' JSON bodies carry them."""
        return base64.b64encode(self.data).decode("ascii")

    def data_uri(self) -> str:
        """A ``data:`` URI holding the image (OpenAI's ``image_url``, HTML ``<img src>``)."""
        return f"data:{self.media_type};base64,{self.base64()}"


@dataclass(frozen=True)
class Prompt:
    """What a model is asked, split into its stable prefix and its growing tail."""

    instructions: str
    """Who the model plays and how to write. Stable for a whole session."""
    history: str = ""
    """The persona's rendered chat history. Stable: the cache breakpoint goes after it."""
    dialogue: str = ""
    """The conversation so far in the prompt line format. Grows by appending."""
    task: str = ""
    """What to write now (chat providers get it after the dialogue)."""
    continue_with: str = ""
    """For completion providers: the text the continuation starts from, e.g. 'Response: ['."""
    images: tuple[Image, ...] = ()
    """Images shown with the user message (sent before its text). Empty for text prompts."""
    stable_dialogue_chars: int = 0
    """How many leading characters of ``dialogue`` stay the same in the later prompts of
    this conversation (e.g. the chats on topics already finished). Providers may cache the
    prompt up to there; 0 means no such promise. It never changes the text a model sees."""

    def completion_text(self) -> str:
        """The single text a completion model continues (stable parts first)."""
        parts = [self.instructions, self.history, self.dialogue]
        body = "\n\n".join(p.rstrip("\n") for p in parts if p)
        return f"{body}\n{self.continue_with}" if body else self.continue_with

    def system_text(self) -> str:
        """The system prompt a chat model receives: instructions, then the history."""
        return "\n\n".join(p for p in (self.instructions, self.history) if p)

    def user_text(self) -> str:
        """The user message a chat model receives: the dialogue, then the task."""
        return "\n\n".join(p for p in (self.dialogue, self.task) if p)


@dataclass(frozen=True)
class GenerateConfig:
    """Sampling settings for one call."""

    max_tokens: int = 256
    temperature: float = 0.8
    stop: tuple[str, ...] = ()
    seed: int | None = None
    timeout: float = 60.0
    """Seconds before a call counts as timed out."""
    top_logprobs: int = 0
    """Ask for the log-probabilities of this many likeliest tokens at every output
    position (0: none). Providers that cannot give them ignore it."""


@dataclass(frozen=True)
class TokenLogprobs:
    """One output token, its log-probability and the likeliest tokens at its place."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()
    """``(token, logprob)`` of the likeliest tokens at this position, best first."""


@dataclass(frozen=True)
class Usage:
    """Tokens of one call. ``cached_input_tokens`` is the part served from a prefix cache.

    ``cached_input_tokens`` is ``None`` when the provider did not say (llama.cpp's server
    reuses its prefix cache but reports nothing): unknown, which is not the same as 0.
    """

    input_tokens: int = 0
    cached_input_tokens: int | None = 0
    output_tokens: int = 0

    @property
    def empty(self) -> bool:
        """True for the usage of no call at all (the start of a sum)."""
        return self.input_tokens == 0 and self.output_tokens == 0 and not self.cached_input_tokens

    def __add__(self, other: Usage) -> Usage:
        if self.empty:
            cached = other.cached_input_tokens
        elif other.empty:
            cached = self.cached_input_tokens
        elif self.cached_input_tokens is None or other.cached_input_tokens is None:
            # Part of the total is unknown, so the total is too.
            cached = None
        else:
            cached = self.cached_input_tokens + other.cached_input_tokens
        return Usage(
            self.input_tokens + other.input_tokens,
            cached,
            self.output_tokens + other.output_tokens,
        )

    def cached_text(self) -> str:
        """ "N cached", or "cache use not reported" when the provider gave no count."""
        if self.cached_input_tokens is None:
            return "cache use not reported"
        return f"{self.cached_input_tokens} cached"

    def cached_share(self) -> str:
        """The cached share of the input as "N%"; "?" when unknown, "" without input."""
        if not self.input_tokens:
            return ""
        if self.cached_input_tokens is None:
            return "?"
        return f"{100 * self.cached_input_tokens / self.input_tokens:.0f}%"


@dataclass(frozen=True)
class ModelOutput:
    """The raw text a model produced, with its usage and timing."""

    text: str
    model: str
    """The full ``provider/model`` name that answered."""
    usage: Usage = field(default_factory=Usage)
    latency: float = 0.0
    """Seconds from request to answer (trio clock), retries included."""
    attempts: int = 1
    continued_from: str = ""
    """The prompt text the output continues (``Prompt.continue_with``) when the provider
    is a completion model; empty for chat models, whose output stands alone."""
    logprobs: tuple[TokenLogprobs, ...] | None = None
    """Per output token, when the call asked for ``top_logprobs`` and the provider gives
    them (OpenAI and compatible servers, scripted mock replies); None otherwise."""


class Generator(Protocol):
    """Anything that answers a prompt: a :class:`sdtt.models.Model` (what callers are
    normally given), a bare provider, or a wrapper such as a simulation's real-time one.
    Bots, chains and interrogators take one of these."""

    @property
    def name(self) -> str:
        """The ``provider/model`` name."""
        ...

    async def generate(self, prompt: Prompt, config: GenerateConfig) -> ModelOutput:
        """Answer one prompt."""
        ...


@runtime_checkable
class ModelAPI(Protocol):
    """What a provider implements. Retries, limits and logging live in ``Model``."""

    name: str
    """The ``provider/model`` name."""

    async def generate(self, prompt: Prompt, config: GenerateConfig) -> ModelOutput:
        """Make one call. Raise a :class:`sdtt.errors.ProviderError` subclass on failure."""
        ...

    async def aclose(self) -> None:
        """Release connections or loaded weights."""
        ...
