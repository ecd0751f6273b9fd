"""``sdtt serve`` with a heartbeat in its own trio loop, for ``serve_load.py``.

A task beside the rooms sleeps until the next 10 ms tick and notes how late it woke:
what every timer of the server (an indicator due, a bot message due, a frame to send)
met at that moment. Each second the samples go to the file ``$SDTT_HEARTBEAT`` as one
line, ``wall_time lateness_ms lateness_ms ...`` (a line a second costs the loop nothing
it would notice). Run as ``python benchmarks/_heartbeat.py serve SPEC --port N``.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import trio

from sdtt.serve.server import StudyServer

TICK = 0.01
"""Seconds between two heartbeats."""

_run = StudyServer.run


async def _beat(path: Path) -> None:
    with path.open("a", encoding="utf-8") as out:
        due = trio.current_time()
        samples: list[float] = []
        flushed = time.time()
        while True:
            due += TICK
            await trio.sleep_until(due)
            now = trio.current_time()
            samples.append((now - due) * 1000)
            due = max(due, now - TICK)  # a long stall is one late beat, not many
            if time.time() - flushed >= 1.0:
                flushed = time.time()
                out.write(f"{flushed:.3f} " + " ".join(f"{s:.2f}" for s in samples) + "\n")
                out.flush()
                samples = []


async def _run_with_heartbeat(self: StudyServer, **kwargs: Any) -> None:
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_beat, Path(os.environ["SDTT_HEARTBEAT"]))
        await _run(self, **kwargs)
        nursery.cancel_scope.cancel()


StudyServer.run = _run_with_heartbeat  # type: ignore[method-assign]

if __name__ == "__main__":
    from sdtt.cli import main

    sys.exit(main(sys.argv[1:]))
