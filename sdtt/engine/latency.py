"""Keeping sends punctual when one process hosts hundreds of sessions.

With 1,000 sessions in one process, the tail of send lateness comes from CPython's
cyclic garbage collector, not from the engine: a full collection walks every live object
(tens of milliseconds with 1,000 sessions, more on a slow build), and every timer due
meanwhile fires late. ``benchmarks/engine_timing.py`` measures both settings.

The engine creates no reference cycles while chatting (its objects die by reference
counting; ``tests/engine/test_latency.py`` checks this), so collecting rarely costs no
memory growth from the engine itself.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

LOW_LATENCY_THRESHOLDS = (50_000, 20, 100)
"""Young-generation collections after 50,000 net allocations instead of 700."""


@contextmanager
def low_latency_gc(thresholds: tuple[int, int, int] = LOW_LATENCY_THRESHOLDS) -> Iterator[None]:
    """Tune the garbage collector for many concurrent sessions, for the ``with`` block.

    Everything alive on entry (imported modules, loaded personas and models) is frozen
    out of the collector's sight, and collections run far less often. The previous
    settings are restored on exit. Process-wide: use it in the program that hosts the
    sessions, not in library code.
    """
    previous = gc.get_threshold()
    gc.collect()
    gc.freeze()
    gc.set_threshold(*thresholds)
    try:
        yield
    finally:
        gc.set_threshold(*previous)
        gc.unfreeze()
