"""Helpers for the UI tests: chats on a virtual clock the test moves, and waits bounded by
steps, never by the real clock."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import trio
import trio.testing
from textual.pilot import Pilot

from sdtt.engine.live_chat import LiveChat
from sdtt.ui.chat_setup import build_live_chat
from sdtt.ui.guest import TrioGuest

STARTED = datetime(2024, 5, 4, 12, 0, tzinfo=UTC)
PERSONA = "chitchat-32b20fa3"
MAX_STEPS = 20_000
"""Pauses a wait may take before it fails (a hang, not a slow machine, exhausts them)."""


def live_chat(tmp_path: Path, **options: Any) -> LiveChat:
    """A mock/chatty chat with a fixed id and start time, written under ``tmp_path``."""
    settings: dict[str, Any] = {"turns": 2, "t1": 1.0}
    settings.update(options)
    live = build_live_chat(persona=PERSONA, model="mock/chatty", out_dir=tmp_path, **settings)
    return replace(live, session_id="chat-test", started=STARTED)


def stepped_clock() -> trio.testing.MockClock:
    """Virtual time that stands still until :func:`wait_for` moves it: the test types at
    exact virtual times, and the engine's timers fire in the order they would on a real
    clock, however loaded the machine is."""
    return trio.testing.MockClock(rate=0)


async def _step_time(guest: TrioGuest, clock: trio.testing.MockClock) -> None:
    """Once every trio task waits, jump the clock to the next deadline (as autojump would)."""
    token = guest.token
    if token is None or not guest.running:
        return
    done = asyncio.get_running_loop().create_future()

    def step() -> None:
        stats = trio.lowlevel.current_statistics()
        if stats.tasks_runnable == 0 and math.isfinite(stats.seconds_to_next_deadline):
            clock.jump(max(0.0, stats.seconds_to_next_deadline))
        if not done.done():
            done.set_result(None)

    try:
        token.run_sync_soon(step)
    except trio.RunFinishedError:
        return
    await _until_done(done, guest)


async def _until_done(done: asyncio.Future[None], guest: TrioGuest) -> None:
    while not done.done() and guest.running:
        await asyncio.sleep(0)


async def wait_for(
    pilot: Pilot[Any],
    condition: Callable[[], bool],
    *,
    guest: TrioGuest | None = None,
    clock: trio.testing.MockClock | None = None,
) -> None:
    """Let the app run until ``condition`` holds; with the chat's ``guest`` run and its
    :func:`stepped_clock`, virtual time moves from one engine deadline to the next only
    while the engine waits. Fails after :data:`MAX_STEPS` pauses."""
    for _ in range(MAX_STEPS):
        if condition():
            return
        if guest is not None and clock is not None:
            await _step_time(guest, clock)
        await pilot.pause()
    raise AssertionError(f"never came true: {condition.__doc__ or condition}")
