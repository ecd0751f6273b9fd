"""Helpers for the UI tests: fast chats and bounded waits."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from sdtt.engine.live_chat import ChatPlan
from sdtt.ui.chat_setup import build_plan

STARTED = datetime(2024, 5, 4, 12, 0, tzinfo=UTC)
PERSONA = "chitchat-32b20fa3"


def chat_plan(tmp_path: Path, **options: Any) -> ChatPlan:
    """A mock/chatty chat with a fixed id and start time, written under ``tmp_path``."""
    settings: dict[str, Any] = {"turns": 2, "t1": 1.0}
    settings.update(options)
    plan = build_plan(persona=PERSONA, model="mock/chatty", out_dir=tmp_path, **settings)
    return ChatPlan(**{**plan.__dict__, "session_id": "chat-test", "started": STARTED})


async def wait_for(pilot: Pilot[Any], condition: Callable[[], bool], timeout: float = 10.0) -> None:
    """Let the app run until ``condition`` holds; fail after ``timeout`` real seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {condition.__doc__ or condition}")
        await pilot.pause(0.01)
