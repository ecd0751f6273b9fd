"""Peak memory of a call, for the tests that bound what an import or a table holds."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable


def peak_bytes(call: Callable[[], object]) -> int:
    """The most memory Python held (traced) while ``call`` ran."""
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def command_peak(argv: list[str]) -> int:
    """:func:`peak_bytes` of ``sdtt ARGV``, which must exit 0."""
    from sdtt.cli import main

    codes: list[int] = []
    peak = peak_bytes(lambda: codes.append(main(argv)))
    assert codes == [0], f"sdtt {' '.join(argv)} exited {codes}"
    return peak
