"""Asking a model again until its answer can be read: the one loop the persona bot and
every LLM judge share.

A model may answer with something that cannot be used (an empty reply, no option, no
number). Such an answer is asked again, at most ``attempts`` times in all; the caller
decides what the prompt and settings of each attempt are (a retry hint, a new seed) and
what reading an answer means. A provider failure is not asked again here (``Model``
already retried it): it ends the asking and comes back with the outputs before it, so a
caller can record both.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from sdtt.errors import ModelOutputError, ProviderError
from sdtt.models.base import GenerateConfig, Generator, ModelOutput, Prompt

T = TypeVar("T")

Per = Callable[[int], T]
"""A value that depends on the attempt (from 1)."""


@dataclass(frozen=True)
class Asked(Generic[T]):
    """What asking gave: the answer read (None when none was), every output in order, and
    why asking stopped without an answer."""

    answer: T | None
    outputs: tuple[ModelOutput, ...]
    failure: ProviderError | None = None
    """The provider failure that ended the asking, if one did."""
    unreadable: ModelOutputError | None = None
    """Why the last output could not be read, when no attempt could be."""

    @property
    def raw(self) -> tuple[str, ...]:
        """The text of every output, in order."""
        return tuple(output.text for output in self.outputs)

    @property
    def error(self) -> str | None:
        """The provider failure as records show it (``"RateLimitError: ..."``: the
        provider's own words, already scrubbed of keys, say what to fix), else None."""
        if self.failure is None:
            return None
        return f"{type(self.failure).__name__}: {self.failure}"


async def ask(
    model: Generator,
    prompt: Prompt | Per[Prompt],
    read: Callable[[ModelOutput], T],
    *,
    attempts: int,
    config: GenerateConfig | Per[GenerateConfig],
) -> Asked[T]:
    """Ask ``model`` until ``read`` takes an output without raising
    :class:`~sdtt.errors.ModelOutputError`, at most ``attempts`` times.

    ``prompt`` and ``config`` are fixed, or functions of the attempt number (from 1).
    """
    outputs: list[ModelOutput] = []
    unreadable: ModelOutputError | None = None
    for attempt in range(1, attempts + 1):
        shown = prompt if isinstance(prompt, Prompt) else prompt(attempt)
        settings = config if isinstance(config, GenerateConfig) else config(attempt)
        try:
            output = await model.generate(shown, settings)
        except ProviderError as failure:
            return Asked(None, tuple(outputs), failure=failure)
        outputs.append(output)
        try:
            return Asked(read(output), tuple(outputs))
        except ModelOutputError as error:
            unreadable = error
    return Asked(None, tuple(outputs), unreadable=unreadable)


async def all_at_once(calls: Sequence[Callable[[], Awaitable[T]]]) -> list[T]:
    """The results of ``calls``, made at once (each model's own limit still applies),
    in their order."""
    # Imported here: command parsers load this module (through the persona bot) and
    # must not load trio just to print --help.
    import trio

    results: dict[int, T] = {}

    async def one(index: int) -> None:
        results[index] = await calls[index]()

    async with trio.open_nursery() as nursery:
        for index in range(len(calls)):
            nursery.start_soon(one, index)
    return [results[index] for index in range(len(calls))]
