"""The cyclic garbage collector in a process that serves a study.

CPython's defaults collect the youngest objects every 700 allocations, the middle
generation every tenth time, and everything whenever the long-lived objects have grown
by a quarter. Serving 300 rooms, the middle and full collections paused every room's loop
for 10-90 ms each (30 and 3 of them in the 80 s of ``benchmarks/serve_load.py``), which
made the slowest human messages, and found almost nothing while the rooms ran (about 8
objects a participant). What rooms do leave in reference cycles they leave when they end:
the room, its bot session, its messages and its participants' connections, about 25 KB a
room, which only a full collection frees. The young collections took 10-16 ms as well:
each object freed counts against the young generation's allocations, so while ended
rooms' objects die, live ones pile up in it unseen, ten thousand at a time.

So a serving process keeps what exists at start out of every scan, asks for a young
collection every :data:`YOUNG_COLLECTION_EVERY` seconds (besides those the threshold
starts), and instead of the middle and full collections the defaults start, collects
everything once every :data:`FULL_COLLECTION_EVERY` seconds: the memory of ended rooms
waits at most that long, and the pause a full collection costs (128 ms at 300 rooms)
comes every ten minutes instead of whenever the heap grows.
"""

from __future__ import annotations

import gc
from contextlib import AbstractContextManager

import trio

from sdtt.engine.latency import low_latency_gc

NEVER = 1_000_000_000
"""A threshold the middle and full collections never reach by themselves."""
SERVING_THRESHOLDS = (700, NEVER, NEVER)
"""Young collections every 700 allocations (CPython's default), no others by themselves."""
YOUNG_COLLECTION_EVERY = 0.1
"""Seconds (of trio's clock) between two young collections the process asks for."""
FULL_COLLECTION_EVERY = 600.0
"""Seconds (of trio's clock) between two full collections."""


def serving_collector() -> AbstractContextManager[None]:
    """For the ``with`` block: what exists on entry is collected and kept out of later
    scans, and only young collections run by themselves (the settings before are back on
    exit). Process-wide: for ``sdtt serve`` processes, which run
    :func:`collect_periodically` in the block."""
    return low_latency_gc(SERVING_THRESHOLDS)


async def collect_periodically(
    young: float = YOUNG_COLLECTION_EVERY, full: float = FULL_COLLECTION_EVERY
) -> None:
    """Collect the young generation every ``young`` seconds and everything every
    ``full`` seconds, forever (until cancelled)."""
    next_full = trio.current_time() + full
    while True:
        await trio.sleep(young)
        if trio.current_time() >= next_full:
            gc.collect()
            next_full = trio.current_time() + full
        else:
            gc.collect(0)
