"""One cache of a run's models by name."""

from __future__ import annotations

import pytest

from sdtt.models import Model, ModelPool, get_model


@pytest.mark.trio
async def test_each_model_name_is_made_once_and_all_are_closed_together() -> None:
    made: list[str] = []
    closed: list[str] = []

    def make(name: str) -> Model:
        made.append(name)
        model = get_model(name)

        async def aclose() -> None:
            closed.append(name)

        model.aclose = aclose  # type: ignore[method-assign]
        return model

    async with ModelPool(make) as pool:
        first = pool("mock/echo")
        assert pool("mock/echo") is first
        pool("mock/chatty")
    assert made == ["mock/echo", "mock/chatty"]
    assert closed == ["mock/echo", "mock/chatty"]
