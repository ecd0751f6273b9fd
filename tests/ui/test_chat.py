"""The chat app: bursts both ways, the typing indicator, no lost messages, clean exits."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio.testing
from textual.pilot import Pilot
from textual.widgets import Input

from sdtt.dialogue.store import read_transcripts
from sdtt.engine.events import read_event_log
from sdtt.ui.app import ChatApp
from sdtt.ui.chat import ChatScreen
from sdtt.ui.widgets import MessageList, StatusLine, TypingIndicator
from tests.ui.helpers import live_chat, stepped_clock, wait_for


async def run_until(pilot: Pilot[Any], condition: Callable[[], bool]) -> None:
    """Let the chat run (its virtual time moving deadline by deadline) until ``condition``."""
    screen = chat_screen(pilot.app)
    clock = screen.clock
    assert isinstance(clock, trio.testing.MockClock)
    await wait_for(pilot, condition, guest=screen.guest, clock=clock)


async def say(pilot: Pilot[Any], text: str) -> None:
    """Type ``text`` into the chat input and press Enter."""
    pilot.app.screen.query_one("#say", Input).value = text
    await pilot.press("enter")


def chat_screen(app: Any) -> ChatScreen:
    screen = app.screen
    assert isinstance(screen, ChatScreen)
    return screen


@pytest.mark.asyncio
async def test_burst_in_burst_out(tmp_path: Path) -> None:
    """Three messages in a row are one turn; the bot answers with several timed messages."""
    # Virtual time stands still while the test types: the burst is one turn, exactly.
    app = ChatApp(live_chat(tmp_path, turns=1, t1=20.0), clock=stepped_clock())
    async with app.run_test(size=(80, 24)) as pilot:
        screen = chat_screen(app)
        messages = screen.query_one(MessageList)
        for text in ("hey", "you there?", "got a minute"):
            await say(pilot, text)
        assert [(b.side, b.text) for b in messages.bubbles()] == [
            ("user", "hey"),
            ("user", "you there?"),
            ("user", "got a minute"),
        ]
        await run_until(pilot, lambda: screen.ended)
        bubbles = messages.bubbles()
        assert [b.side for b in bubbles[:3]] == ["user"] * 3
        assert len(bubbles) >= 5 and {b.side for b in bubbles[3:]} == {"response"}
        assert all(b.time is not None for b in bubbles)
        assert "turn 1/1" in str(screen.query_one(StatusLine).render())
    # The log shows one model call for the burst, and replies sent at different times.
    replay = read_event_log(tmp_path / "chat-test.events.jsonl")
    assert replay.complete
    calls = [e for e in replay.events if e.type == "model_call_started"]
    assert len(calls) == 1 and calls[0].unread == 3
    sent = [e.clock for e in replay.events if e.type == "message_sent"]
    assert len(sent) >= 2 and sent == sorted(sent) and sent[-1] - sent[0] > 1.0


@pytest.mark.asyncio
async def test_typing_indicator_and_message_typed_meanwhile(tmp_path: Path) -> None:
    """The indicator shows while the bot types and hides after; a message sent meanwhile
    reaches the transcript."""
    # Virtual time stands still while the test types: the second message goes in while
    # the bot types, however loaded the machine is.
    app = ChatApp(live_chat(tmp_path, turns=1, t1=4.0), clock=stepped_clock())
    seen: list[bool] = []
    async with app.run_test(size=(80, 24)) as pilot:
        screen = chat_screen(app)
        typing = screen.query_one(TypingIndicator)
        assert not typing.showing
        await say(pilot, "hi there")
        await run_until(pilot, lambda: typing.showing)
        seen.append(typing.showing)
        await say(pilot, "wait, one more thing")
        assert screen.query_one("#say", Input).has_focus
        await run_until(pilot, lambda: screen.ended)
        assert not typing.showing
        texts = [b.text for b in screen.query_one(MessageList).bubbles()]
        assert "wait, one more thing" in texts
    assert seen == [True]
    (transcript,) = read_transcripts(tmp_path / "chat-test.jsonl")
    user = [m.text for m in transcript.messages if m.side == "user"]
    assert user == ["hi there", "wait, one more thing"]
    events = read_event_log(tmp_path / "chat-test.events.jsonl").events
    kinds = [e.type for e in events]
    assert kinds.count("typing_started") == kinds.count("typing_stopped") > 0


@pytest.mark.asyncio
async def test_quit_mid_chat_keeps_everything(tmp_path: Path) -> None:
    """Ctrl+C while the bot is busy ends the chat cleanly; the files hold every message."""
    # Both messages go in at virtual time 0, before the bot answers.
    app = ChatApp(live_chat(tmp_path, turns=5, t1=20.0), clock=stepped_clock())
    async with app.run_test(size=(80, 24)) as pilot:
        screen = chat_screen(app)
        await say(pilot, "hello")
        await say(pilot, "anyone home")
        await run_until(pilot, lambda: screen.query_one(TypingIndicator).showing)
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: not app.is_running)
    outcome = app.return_value
    assert outcome is not None and not outcome.finished
    (transcript,) = read_transcripts(outcome.transcript_path)
    assert [m.text for m in transcript.messages][:2] == ["hello", "anyone home"]
    assert read_event_log(outcome.log_path).complete


@pytest.mark.asyncio
async def test_participant_mode_hides_the_setup(tmp_path: Path) -> None:
    """A participant sees the turn count but never the model, persona or mode."""
    live = live_chat(tmp_path, turns=1, t1=0.5, participant=True)
    app = ChatApp(live, clock=stepped_clock())
    async with app.run_test(size=(80, 24)) as pilot:
        screen = chat_screen(app)
        status = str(screen.query_one(StatusLine).render())
        assert "turn 0/1" in status and "mock" not in status and "burst" not in status
        await say(pilot, "hey")
        await run_until(pilot, lambda: screen.ended)
        summary = screen.summary()
    assert "Transcript saved to" in summary
    assert "mock" not in summary and live.persona.name not in summary
