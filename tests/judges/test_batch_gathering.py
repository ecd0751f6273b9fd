"""When a batched judge's round goes out: once every caller waits, never held by one.

An in-memory batch backend records each job; the callers are run as a judge runs its
items (``judge_each``), on trio's virtual clock.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import trio

from sdtt.judges.batched import DEFAULT_GATHER, BatchedModel, batched, judge_each
from sdtt.models.base import ModelOutput, Usage
from sdtt.models.batch import BatchRequest, BatchResult, BatchState
from sdtt.models.model import get_model

pytestmark = pytest.mark.trio


@asynccontextmanager
async def open_batched(tmp_path: Path, backend: Backend) -> AsyncIterator[BatchedModel]:
    async with (
        get_model("mock/echo") as model,
        batched(model, tmp_path / "ledger.jsonl", backend=backend, poll_interval=0) as handle,
    ):
        yield handle


class Backend:
    """Answers every request with its prompt's text; notes each job and when it came."""

    model = "mock/echo"

    def __init__(self) -> None:
        self.jobs: list[list[str]] = []
        self.times: list[float] = []
        self._held: dict[str, list[BatchRequest]] = {}

    async def submit(self, requests: Sequence[BatchRequest]) -> str:
        job = f"job-{len(self.jobs) + 1}"
        self.jobs.append(sorted(request.prompt.dialogue for request in requests))
        self.times.append(trio.current_time())
        self._held[job] = list(requests)
        return job

    async def state(self, batch_id: str) -> BatchState:
        return "ended"

    async def results(self, batch_id: str) -> list[BatchResult]:
        return [
            BatchResult(r.custom_id, ModelOutput(r.prompt.dialogue, "judge", Usage()))
            for r in self._held.pop(batch_id)
        ]


async def test_each_round_is_one_job_of_every_caller_still_asking(
    tmp_path: Path, autojump_clock: object
) -> None:
    # Caller n asks n + 1 questions and dawdles between them (a few checkpoints, a
    # file write, a short sleep): round k holds the question k of every caller with one.
    backend = Backend()
    answers: dict[str, str] = {}

    async def caller(n: int) -> None:
        for turn in range(1, n + 2):
            for _ in range(n):
                await trio.sleep(0)
            await trio.sleep(0.1 * n)
            (tmp_path / f"note-{n}").write_text(str(turn))
            prompt = f"caller {n} turn {turn}"
            answers[prompt] = (await handle.generate(prompt)).text

    async with open_batched(tmp_path, backend) as handle:
        await judge_each(range(4), caller, concurrency=100)
    assert backend.jobs == [
        [f"caller {n} turn {turn}" for n in range(turn - 1, 4)] for turn in range(1, 5)
    ]
    assert all(prompt == text for prompt, text in answers.items()) and len(answers) == 10
    assert backend.times[0] < DEFAULT_GATHER  # never the window: everyone was waiting


async def test_a_slow_caller_delays_a_round_by_the_window_and_asks_in_the_next(
    tmp_path: Path, autojump_clock: object
) -> None:
    backend = Backend()

    async def caller(n: int) -> None:
        if n == 0:
            await trio.sleep(10 * DEFAULT_GATHER)  # busy far longer than a round waits
        await handle.generate(f"caller {n}")

    async with open_batched(tmp_path, backend) as handle:
        await judge_each(range(3), caller, concurrency=100)
    assert backend.jobs == [["caller 1", "caller 2"], ["caller 0"]]
    assert backend.times[0] == pytest.approx(DEFAULT_GATHER)


async def test_a_task_that_never_rests_does_not_hold_a_round(tmp_path: Path) -> None:
    # A progress display that checkpoints without pause is no caller: the old barrier
    # (every task blocked) waited until it stopped.
    backend = Backend()
    ticks = 0
    answered_at: list[int] = []
    limit = 20_000

    async def ticker() -> None:
        nonlocal ticks
        while ticks < limit:
            ticks += 1
            await trio.sleep(0)

    async def caller(n: int) -> None:
        await handle.generate(f"caller {n}")
        answered_at.append(ticks)

    async with open_batched(tmp_path, backend) as handle, trio.open_nursery() as nursery:
        nursery.start_soon(ticker)
        await judge_each(range(3), caller, concurrency=100)
    assert backend.jobs == [["caller 0", "caller 1", "caller 2"]]
    assert max(answered_at) < limit


async def test_a_limit_below_the_callers_runs_them_in_order_and_batches_each_wave(
    tmp_path: Path, autojump_clock: object
) -> None:
    backend = Backend()

    async def caller(n: int) -> None:
        await handle.generate(f"caller {n}")

    async with open_batched(tmp_path, backend) as handle:
        await judge_each(range(5), caller, concurrency=2)
    assert [len(job) for job in backend.jobs] == [2, 2, 1]
    assert backend.jobs[0] == ["caller 0", "caller 1"]
    assert backend.times[-1] < DEFAULT_GATHER
