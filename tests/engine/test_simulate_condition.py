"""``sdtt simulate``, ``sdtt demo`` and ``sdtt study run`` run their simulated chats through
one engine function, ``simulate_condition``: the same condition gives the same bot and
the same simulated interrogator's session, whichever command runs it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sdtt.cli import main
from sdtt.dialogue.condition import Condition
from sdtt.engine import opening
from sdtt.engine.interrogator import INTERROGATOR_MAX_MESSAGES
from sdtt.engine.opening import Options, interrogator_session, role_seed
from sdtt.engine.simulate import INTERROGATOR
from tests.study.helpers import write_spec


@pytest.fixture
def chats(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[dict[str, Any]]:
    """Every simulated chat started through ``simulate_condition``: what it was given."""
    seen: list[dict[str, Any]] = []
    run = opening.run_simulated_chat

    async def recording(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs)
        return await run(*args, **kwargs)

    monkeypatch.setattr(opening, "run_simulated_chat", recording)
    monkeypatch.chdir(tmp_path)
    return seen


def test_the_interrogators_session_is_the_condition_s_own() -> None:
    condition = Condition(persona="p", model="mock/chatty", mode="pingpong", seed=11)
    settings = interrogator_session(condition, Options(t1=1.5))
    assert settings.mode == "pingpong"
    assert settings.max_messages == INTERROGATOR_MAX_MESSAGES
    assert settings.seed == role_seed(condition, INTERROGATOR)
    assert settings.t1 == 1.5


def check(chat: dict[str, Any]) -> None:
    """A chat started with the bot's settings and condition from ``open_bot`` and the
    interrogator's session of that condition."""
    condition = chat["condition"]
    assert chat["bot_settings"].seed == condition.seed
    expected = interrogator_session(condition, Options(t1=chat["bot_settings"].t1))
    assert chat["interrogator_settings"] == expected


def test_simulate_runs_its_chat_through_the_one_function(chats: list[dict[str, Any]]) -> None:
    args = ["simulate", "--model", "mock/chatty", "--interrogator", "mock/chatty"]
    assert main([*args, "--turns", "2", "--virtual-clock", "--quiet", "--seed", "5"]) == 0
    (chat,) = chats
    assert chat["condition"].seed == 5
    check(chat)


def test_demo_runs_its_chat_through_the_one_function(chats: list[dict[str, Any]]) -> None:
    assert main(["demo", "--model", "mock/chatty", "--out", "out"]) == 0
    (chat,) = chats
    check(chat)


def test_a_study_runs_its_chats_through_the_one_function(
    chats: list[dict[str, Any]], tmp_path: Path
) -> None:
    spec = write_spec(tmp_path / "study")
    assert main(["study", "run", str(spec)]) == 0
    assert len(chats) == 2  # the spec's two cells
    for chat in chats:
        check(chat)
