"""A local (embedded-model) call is never timed out while it is making progress: its
timeout starts again at each step of work (a prompt batch evaluated, a token sampled),
on the trio clock, and the call's overall deadline does not cut it off.

The fake model runs in a worker thread like the real one and takes each step when the
test says so; the test moves trio's clock by hand, so nothing waits in real time.
"""

from __future__ import annotations

import queue
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import trio
import trio.testing

from sdtt.errors import ProviderTimeoutError
from sdtt.models.base import GenerateConfig, ModelOutput, Prompt, Usage
from sdtt.models.local import Completion, LoadedModel, LocalModel, count_prompt_batches
from sdtt.models.model import Model
from sdtt.models.retry import RetryPolicy

TIMEOUT = 60.0
DEADLINE = 300.0


class SteppedLocalModel(LocalModel):
    """A local model whose worker thread takes one step of work per ``"step"`` the test
    sends, and finishes on ``"done"`` (or when the call is abandoned)."""

    def __init__(self) -> None:
        super().__init__("gemma-3-270m", n_ctx=4096)
        self.orders: queue.Queue[str] = queue.Queue()
        self.stepped = threading.Semaphore(0)
        self.loaded = LoadedModel(
            llm=None, path=Path("fake.gguf"), n_ctx=4096, lock=threading.Lock()
        )

    def _call(
        self, text: str, config: GenerateConfig, cancel: threading.Event, using: list[LoadedModel]
    ) -> Completion:
        using.append(self.loaded)
        while not cancel.is_set():
            try:
                order = self.orders.get(timeout=0.01)
            except queue.Empty:
                continue
            if order == "done":
                return Completion(text="yes", usage=Usage(input_tokens=3), finish_reason="stop")
            self.loaded.step()
            self.stepped.release()
        raise ProviderTimeoutError("abandoned")


async def _step(fake: SteppedLocalModel, clock: trio.testing.MockClock) -> None:
    """One step of work, seen by the call's watcher before the clock moves on."""
    fake.orders.put("step")
    await trio.to_thread.run_sync(fake.stepped.acquire)
    clock.jump(LocalModel.POLL)
    await trio.testing.wait_all_tasks_blocked()


async def _call(model: Model, outcome: list[ModelOutput | BaseException]) -> None:
    try:
        outcome.append(
            await model.generate(Prompt(instructions="x"), GenerateConfig(timeout=TIMEOUT))
        )
    except ProviderTimeoutError as error:
        outcome.append(error)


@pytest.mark.trio
async def test_a_local_call_making_progress_outlives_its_timeout_and_deadline(
    mock_clock: trio.testing.MockClock,
) -> None:
    clock = mock_clock
    fake = SteppedLocalModel()
    model = Model(fake, retry=RetryPolicy(max_attempts=1, deadline=DEADLINE))
    outcome: list[ModelOutput | BaseException] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_call, model, outcome)
        await trio.testing.wait_all_tasks_blocked()
        # Ten steps 50 s apart: 500 s in all, past the 300 s deadline and eight times the
        # timeout, but never 60 s without progress.
        for _ in range(10):
            await _step(fake, clock)
            clock.jump(50)
            await trio.testing.wait_all_tasks_blocked()
            assert not outcome, outcome
        fake.orders.put("done")
        while not outcome:
            clock.jump(LocalModel.POLL)
            await trio.to_thread.run_sync(lambda: None)
            await trio.testing.wait_all_tasks_blocked()
    (output,) = outcome
    assert isinstance(output, ModelOutput), output
    assert output.text == "yes"
    assert output.latency > DEADLINE


@pytest.mark.trio
async def test_a_local_call_without_progress_times_out_after_its_timeout(
    mock_clock: trio.testing.MockClock,
) -> None:
    clock = mock_clock
    fake = SteppedLocalModel()
    model = Model(fake, retry=RetryPolicy(max_attempts=1, deadline=DEADLINE))
    outcome: list[ModelOutput | BaseException] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_call, model, outcome)
        await trio.testing.wait_all_tasks_blocked()
        await _step(fake, clock)
        clock.jump(TIMEOUT - 1)
        await trio.testing.wait_all_tasks_blocked()
        assert not outcome  # 59 s without progress: still running
        clock.jump(2)
        await trio.testing.wait_all_tasks_blocked()
        if not outcome:  # not timed out: end the call, or the test would never finish
            nursery.cancel_scope.cancel()
    (error,) = outcome
    assert isinstance(error, ProviderTimeoutError)
    assert f"made no progress for {TIMEOUT:g} s" in str(error)


def test_each_prompt_batch_the_model_decodes_is_a_step_of_work() -> None:
    # Evaluating a long prompt samples no token for minutes on a slow CPU: each batch
    # llama-cpp-python decodes counts as progress too.
    decoded: list[Any] = []
    context = SimpleNamespace(decode=lambda batch: decoded.append(batch) or 0)
    loaded = LoadedModel(
        llm=SimpleNamespace(_ctx=context), path=Path("fake.gguf"), n_ctx=4096, lock=threading.Lock()
    )
    count_prompt_batches(loaded)
    for batch in ("a", "b", "c"):
        assert context.decode(batch) == 0
    assert decoded == ["a", "b", "c"]
    assert loaded.steps[0] == 3
