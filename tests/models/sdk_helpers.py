"""What the tests of the SDK providers (``openai``, ``anthropic``) share."""

from __future__ import annotations

import traceback
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import trio

from sdtt.models import Model
from sdtt.models.base import ModelAPI


class SleepLog:
    """Records the waits ``Model`` asks for instead of waiting them out."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        await trio.sleep(0)


MakeModel = Callable[..., Model]
"""``make(sleep=None, **model_options)``: a ``Model`` on the fake server."""


@asynccontextmanager
async def model_maker(build_api: Callable[[], ModelAPI]) -> AsyncIterator[MakeModel]:
    """Builds models around ``build_api()`` (retry waits recorded, not slept); closes them."""
    made: list[Model] = []

    def factory(sleep: SleepLog | None = None, **kwargs: Any) -> Model:
        made.append(Model(build_api(), sleep=sleep or SleepLog(), **kwargs))
        return made[-1]

    try:
        yield factory
    finally:
        for model in made:
            await model.aclose()


def shown_text(error: BaseException, api: object) -> str:
    """All a user, a log or a debugger could see of a failed call: traceback and reprs."""
    return "".join(traceback.format_exception(error)) + repr(error) + repr(api)
