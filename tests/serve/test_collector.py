"""The garbage collector of a serving process (sdtt/serve/collector.py): no middle or
full collection of its own accord, the young generation kept small, and the cycles an
ended room leaves freed by the periodic full collection."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest
import trio

from sdtt.serve.collector import collect_periodically, serving_collector


class _Node:
    """A stand-in for a room: it refers to itself, as a room and its chats do."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def settled() -> Iterator[None]:
    """The collector as ``sdtt serve`` sets it, restored afterwards."""
    with serving_collector():
        yield
    gc.collect()


def _old_cycle() -> weakref.ref[_Node]:
    """An unreachable cycle already past the young generation (a room that ran a while
    and then ended)."""
    node = _Node()
    gc.collect(0)  # (node is reachable here: it moves on to the middle generation)
    gc.collect(1)  # (and then to the oldest)
    ref = weakref.ref(node)
    del node
    return ref


def test_an_ended_rooms_cycle_is_not_collected_while_rooms_run(settled: None) -> None:
    ended = _old_cycle()
    # Enough allocation for dozens of middle and a full collection under the defaults.
    kept = [[n] for n in range(200_000)]
    assert ended() is not None
    del kept


@pytest.mark.trio
async def test_the_periodic_full_collection_frees_an_ended_rooms_cycle(
    settled: None, autojump_clock: object
) -> None:
    ended = _old_cycle()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(collect_periodically, 0.1, 60.0)
        await trio.sleep(59.0)
        assert ended() is not None
        await trio.sleep(1.5)
        assert ended() is None
        nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_the_young_generation_stays_small_while_old_objects_die(
    settled: None, autojump_clock: object
) -> None:
    # Each object freed counts against the young generation's allocations, so while old
    # objects die (ended rooms) new ones (live rooms) pile up in it unseen by the
    # threshold, and the young collection that finally comes walks them all at once.
    old = [[n] for n in range(20_000)]
    gc.collect()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(collect_periodically, 0.1, 600.0)
        new = []
        for _ in range(100):
            for _ in range(200):
                old.pop()
                new.append([0])
            await trio.sleep(0.01)
            assert len(gc.get_objects(0)) < 5_000
        nursery.cancel_scope.cancel()
    assert len(new) == 20_000
