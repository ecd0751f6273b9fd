"""The batching core both ``--batch`` front ends share: its ledger survives a rerun, and
no front end keeps a ledger or sends a job of its own."""

from __future__ import annotations

import re
from pathlib import Path

import trio
import trio.testing

from sdtt.models.base import GenerateConfig, ModelOutput, Prompt, TokenLogprobs, Usage
from sdtt.models.batch import BatchRequest, BatchResult, BatchState
from sdtt.models.batch_ledger import BatchLedger, job_results, submit_job

SDTT = Path(__file__).resolve().parents[2] / "sdtt"


def answer(text: str) -> ModelOutput:
    return ModelOutput(
        text=text,
        model="mock/chatty",
        usage=Usage(input_tokens=3, output_tokens=2),
        logprobs=(TokenLogprobs("hi", -0.5, (("hi", -0.5), ("yo", -1.5))),),
    )


def test_a_rerun_finds_the_open_jobs_and_the_answers_an_earlier_run_noted(tmp_path: Path) -> None:
    path = tmp_path / "batches.jsonl"
    first = BatchLedger(path)
    first.submitted("job-1", "mock/chatty", ["a", "b"])
    first.submitted("job-2", "mock/chatty", ["c"])
    first.submitted("job-3", "other/model", ["d"])
    first.used("job-2")
    first.answered("a", answer("hello"))
    first.close()

    again = BatchLedger(path)
    found, missing = again.split("mock/chatty", ["d", "c", "b", "a", "e"])
    # job-2 was used, job-3 belongs to another model: only job-1 is waited for again.
    assert found == [("job-1", {"a", "b"})]
    assert missing == ["d", "c", "e"]
    assert again.take("a") == answer("hello")
    assert again.take("a") is None  # an answer is handed out once
    again.close()


class EndsOnThirdLook:
    """A batch backend whose one job ends the third time its state is asked."""

    model = "mock/chatty"

    def __init__(self) -> None:
        self.looks = 0
        self.sent: list[list[str]] = []

    async def submit(self, requests: list[BatchRequest]) -> str:
        self.sent.append([request.custom_id for request in requests])
        return f"job-{len(self.sent)}"

    async def state(self, batch_id: str) -> BatchState:
        self.looks += 1
        return "ended" if self.looks >= 3 else "running"

    async def results(self, batch_id: str) -> list[BatchResult]:
        return [BatchResult(key, answer(key)) for key in self.sent[-1]]


def test_a_job_is_noted_before_anyone_waits_and_its_results_come_when_it_ends(
    tmp_path: Path,
) -> None:
    path = tmp_path / "batches.jsonl"
    backend = EndsOnThirdLook()
    ledger = BatchLedger(path)
    seen_before_waiting: list[tuple[list[tuple[str, set[str]]], list[str]]] = []

    async def main() -> list[BatchResult]:
        requests = [
            BatchRequest(key, Prompt(instructions=key), GenerateConfig()) for key in ("x", "y")
        ]
        job = await submit_job(backend, ledger, requests)
        # A run killed now would find the job in the file.
        seen_before_waiting.append(BatchLedger(path).split("mock/chatty", ["x", "y"]))
        return await job_results(backend, job, poll_interval=60.0)

    clock = trio.testing.MockClock(autojump_threshold=0)
    results = trio.run(main, clock=clock)
    ledger.close()
    assert seen_before_waiting == [([("job-1", {"x", "y"})], [])]
    assert [result.custom_id for result in results] == ["x", "y"]
    assert backend.looks == 3
    assert clock.current_time() == 120.0  # two polls of 60 s before it ended


def test_no_front_end_keeps_a_ledger_or_sends_a_job_of_its_own() -> None:
    own = re.compile(r"backend\.(submit|state|results)\(|\"batch_used\"|\"type\": \"batch\"")
    offenders = [
        str(path.relative_to(SDTT))
        for path in SDTT.rglob("*.py")
        if path.parent.name != "models" and own.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == [], "batch jobs go through sdtt.models.batch_ledger"
