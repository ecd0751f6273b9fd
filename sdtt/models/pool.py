"""The models of a run, each made once by name: one cache for every command and runner.

A run names its models as strings (``provider/model`` in each chain spec, the bot and
the judge of a study); every name must give the same :class:`~sdtt.models.Model`, so
its concurrency limit, usage tally and connections are shared, and all of them are
closed together at the end.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from sdtt.closing import AsyncClosing
from sdtt.models.model import Model

T = TypeVar("T")


class NameCache(Generic[T]):
    """Builds the object of each name once (a run's models, or its personas)."""

    def __init__(self, build: Callable[[str], T]) -> None:
        self.build = build
        self.items: dict[str, T] = {}
        """What was built so far, by name, in the order of first use."""

    def __call__(self, name: str) -> T:
        if name not in self.items:
            self.items[name] = self.build(name)
        return self.items[name]


class ModelPool(NameCache[Model], AsyncClosing):
    """The models of one run by name; an async context manager that closes them all."""

    async def aclose(self) -> None:
        """Close every model made so far."""
        models, self.items = list(self.items.values()), {}
        for model in models:
            await model.aclose()
