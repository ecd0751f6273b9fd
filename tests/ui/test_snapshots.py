"""How the screens look at 80x24 (pytest-textual-snapshot; SVGs under __snapshots__)."""

from __future__ import annotations

from datetime import UTC
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Input

from sdtt.ui import setup
from sdtt.ui.app import ChatApp
from sdtt.ui.chat import ChatScreen
from tests.ui.helpers import live_chat, stepped_clock, wait_for

SIZE = (80, 24)


def test_chat_screen(snap_compare: Any, tmp_path: Path, monkeypatch: Any) -> None:
    """A finished two-turn chat: bursts on both sides, the summary, the footer."""
    monkeypatch.chdir(tmp_path)
    clock = stepped_clock()
    app = ChatApp(live_chat(Path("transcripts"), turns=2), clock=clock, tz=UTC)

    async def chat(pilot: Pilot[Any]) -> None:
        screen = pilot.app.screen
        assert isinstance(screen, ChatScreen)
        say = screen.query_one("#say", Input)
        for text in ("hey!", "how was your weekend"):
            say.value = text
            await pilot.press("enter")
        await wait_for(pilot, lambda: screen.turns >= 1, guest=screen.guest, clock=clock)
        say.value = "nice, sounds fun"
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.ended, guest=screen.guest, clock=clock)
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=chat)


def test_setup_screen(snap_compare: Any, monkeypatch: Any) -> None:
    """The setup form at 80x24 with the default choices."""
    personas = ["chitchat-20753511", "chitchat-32b20fa3", "chitchat-ad6493d1"]
    monkeypatch.setattr(setup, "known_personas", lambda: personas)
    assert snap_compare(ChatApp(), terminal_size=SIZE)


def test_judging_screen(snap_compare: Any, tmp_path: Path) -> None:
    """The first pair after the demographics: numbered lines, User B marked, the options."""
    from sdtt.ui.judge import JudgeApp
    from tests.questionnaires.helpers import fixture_study

    study = fixture_study()
    app = JudgeApp(study.questionnaire, study.key, judge_id="p01", out=tmp_path / "j.jsonl")

    async def answer_demographics(pilot: Pilot[Any]) -> None:
        assert isinstance(pilot.app, JudgeApp)
        while pilot.app.step is not None and pilot.app.step.item is None:
            if pilot.app.step.question.choices is not None:
                await pilot.press("1")
            else:
                pilot.app.query_one("#judge-text", Input).value = "x"
                await pilot.press("enter")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=answer_demographics)
