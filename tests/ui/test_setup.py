"""The setup screen: choices become a checked live chat; bad choices are explained."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, Static

from sdtt.ui.app import ChatApp
from sdtt.ui.chat import ChatScreen
from sdtt.ui.setup import SetupScreen
from tests.ui.helpers import PERSONA, wait_for


@pytest.mark.asyncio
async def test_setup_starts_the_chat_with_the_choices(tmp_path: Path) -> None:
    app = ChatApp(out_dir=tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        assert isinstance(screen, SetupScreen)
        screen.query_one("#model", Input).value = "mock/chatty"
        screen.query_one("#turns", Input).value = "3"
        await pilot.click("#start")
        await wait_for(pilot, lambda: isinstance(app.screen, ChatScreen))
        chat = app.screen
        assert isinstance(chat, ChatScreen)
        assert chat.live.persona.name == PERSONA
        assert (chat.live.model_name, chat.live.turns, chat.live.mode) == (
            "mock/chatty",
            3,
            "burst",
        )
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: not app.is_running)


@pytest.mark.asyncio
async def test_setup_explains_a_missing_pseudo_file(tmp_path: Path) -> None:
    app = ChatApp(out_dir=tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        assert isinstance(screen, SetupScreen)
        screen.query_one("#model", Input).value = "mock/chatty"
        screen.query_one("#pseudo", Input).value = str(tmp_path / "nope.jsonl")
        await pilot.click("#start")
        await pilot.pause()
        assert isinstance(app.screen, SetupScreen)
        error = str(screen.query_one("#setup-error", Static).render())
        assert "nope.jsonl" in error


@pytest.mark.asyncio
async def test_setup_passes_the_base_url_on_to_the_chat(tmp_path: Path) -> None:
    app = ChatApp(out_dir=tmp_path, base_url="http://127.0.0.1:9/v1")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        assert isinstance(screen, SetupScreen)
        screen.query_one("#model", Input).value = "mock/chatty"
        await pilot.click("#start")
        await wait_for(pilot, lambda: isinstance(app.screen, ChatScreen))
        chat = app.screen
        assert isinstance(chat, ChatScreen)
        assert chat.live.base_url == "http://127.0.0.1:9/v1"
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: not app.is_running)


@pytest.mark.asyncio
async def test_setup_does_not_offer_the_local_model_without_the_local_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sdtt.models.gguf

    real = sdtt.models.gguf.is_installed
    monkeypatch.setattr(
        sdtt.models.gguf, "is_installed", lambda module: module != "llama_cpp" and real(module)
    )
    app = ChatApp(out_dir=tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        assert isinstance(screen, SetupScreen)
        assert screen.query_one("#model", Input).value == "mock/chatty"
        await pilot.click("#start")
        await wait_for(pilot, lambda: isinstance(app.screen, ChatScreen))
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: not app.is_running)
