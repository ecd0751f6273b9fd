"""The engine leaves no cyclic garbage, so hosts may collect rarely (see latency.py)."""

from __future__ import annotations

import gc
from collections import Counter

from sdtt.engine.events import ListSink
from sdtt.engine.interrogator import ScriptInterrogator
from sdtt.engine.latency import LOW_LATENCY_THRESHOLDS, low_latency_gc
from sdtt.engine.session import SessionSettings
from sdtt.engine.simulate import run_on_virtual_clock, run_simulated_chat
from tests.engine.helpers import START
from tests.engine.test_simulate import SCRIPT, chatty_bot


def test_a_chat_creates_no_reference_cycles() -> None:
    async def chats(count: int) -> None:
        for seed in range(count):
            await run_simulated_chat(
                chatty_bot(),
                ScriptInterrogator(SCRIPT),
                turns=4,
                bot_settings=SessionSettings(seed=seed),
                sink=ListSink(),
                started=START,
            )

    async def measure() -> Counter[str]:
        await chats(1)  # warm up: imports and caches may allocate for good
        gc.collect()
        flags = gc.get_debug()
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            await chats(3)
            gc.collect()
            return Counter(type(item).__name__ for item in gc.garbage)
        finally:
            gc.set_debug(flags)
            gc.garbage.clear()

    # Inside one trio.run: the run loop's own objects are freed by the collector at its end.
    garbage = run_on_virtual_clock(measure)
    assert not garbage, f"objects only the cyclic collector could free: {garbage.most_common(8)}"


def test_low_latency_gc_restores_the_previous_settings() -> None:
    before = gc.get_threshold()
    with low_latency_gc():
        assert gc.get_threshold() == LOW_LATENCY_THRESHOLDS
        assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
