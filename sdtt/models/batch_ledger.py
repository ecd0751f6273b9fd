"""What every batched run shares: the ledger of its jobs and answers, sending a job and
waiting for its results.

``sdtt generate --batch`` (:mod:`sdtt.generate.batch_api`: rounds of chain steps) and
the LLM judges' ``--batch`` (:mod:`sdtt.judges.batched`: calls gathered from many tasks)
are two front ends on this core. Both keep a :class:`BatchLedger` beside their output,
send with :func:`submit_job` (the job is noted before anything waits on it, so a run
killed while a job is in flight picks the same job up instead of paying for it twice),
find an earlier run's jobs with :meth:`BatchLedger.split` and collect with
:func:`job_results`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import trio

from sdtt.jsonl import JsonlWriter, read_jsonl
from sdtt.models.base import ModelOutput, TokenLogprobs, Usage
from sdtt.models.batch import BatchBackend, BatchRequest, BatchResult


class BatchLedger:
    """A JSONL file of which jobs were submitted for which requests, which of them were
    used, and (for front ends that keep them) each answer, so a rerun never pays twice.

    Records: ``{"type": "batch", "id", "model", "requests"}`` when a job is submitted,
    ``{"type": "batch_used", "id"}`` once its results are stored, and
    ``{"type": "answer", "id", ...}`` for an answer noted as soon as its job ended.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.open: dict[str, tuple[str, set[str]]] = {}
        """Job id -> (model, request ids) of jobs whose results are not used yet."""
        self.answers: dict[str, dict[str, Any]] = {}
        """Request id -> answer record, for answers noted by an earlier run not used yet."""
        if path.exists():
            for _, record in read_jsonl(path):
                kind = record.get("type")
                if kind == "batch":
                    ids = {str(item) for item in record.get("requests", [])}
                    self.open[str(record["id"])] = (str(record.get("model")), ids)
                elif kind == "batch_used":
                    self.open.pop(str(record.get("id")), None)
                elif kind == "answer":
                    self.answers[str(record["id"])] = record
        self._writer = JsonlWriter(path)

    def split(
        self, model: str, wanted: Iterable[str]
    ) -> tuple[list[tuple[str, set[str]]], list[str]]:
        """The open jobs of ``model`` holding some of ``wanted``, with the ids each covers,
        and the wanted ids (in their order) that no open job holds."""
        remaining = dict.fromkeys(wanted)
        found = []
        for job, (job_model, ids) in self.open.items():
            covered = ids & remaining.keys()
            if job_model == model and covered:
                found.append((job, covered))
                for key in covered:
                    del remaining[key]
        return found, list(remaining)

    def submitted(self, job: str, model: str, ids: Sequence[str]) -> None:
        """Note a new job (before waiting on it)."""
        self._writer.write({"type": "batch", "id": job, "model": model, "requests": list(ids)})
        self.open[job] = (model, set(ids))

    def used(self, job: str) -> None:
        """Note that a job's results were stored by whoever asked."""
        self._writer.write({"type": "batch_used", "id": job})
        self.open.pop(job, None)

    def answered(self, request_id: str, output: ModelOutput) -> None:
        """Note an answer (as soon as its job ended)."""
        self._writer.write({"type": "answer", "id": request_id, **output_record(output)})

    def keep(self, request_id: str, output: ModelOutput) -> None:
        """Hold an answer nobody in this run asked for yet, for the call that will."""
        self.answers[request_id] = {"id": request_id, **output_record(output)}

    def take(self, request_id: str) -> ModelOutput | None:
        """An earlier run's answer to this request, once."""
        record = self.answers.pop(request_id, None)
        return None if record is None else output_of_record(record)

    def close(self) -> None:
        """Close the ledger file."""
        self._writer.close()


async def submit_job(
    backend: BatchBackend, ledger: BatchLedger, requests: Sequence[BatchRequest]
) -> str:
    """Send ``requests`` as one job and note it in the ledger before anything waits on it;
    returns the job id."""
    job = await backend.submit(requests)
    ledger.submitted(job, backend.model, [request.custom_id for request in requests])
    return job


async def job_results(backend: BatchBackend, job: str, poll_interval: float) -> list[BatchResult]:
    """The results of ``job`` once it has ended, asking its state every ``poll_interval``
    seconds."""
    while await backend.state(job) != "ended":
        await trio.sleep(poll_interval)
    return await backend.results(job)


def output_record(output: ModelOutput) -> dict[str, Any]:
    """A model's answer as the ledger keeps it."""
    logprobs = None
    if output.logprobs is not None:
        logprobs = [[t.token, t.logprob, [list(pair) for pair in t.top]] for t in output.logprobs]
    return {
        "text": output.text,
        "model": output.model,
        "usage": asdict(output.usage),
        "continued_from": output.continued_from,
        "logprobs": logprobs,
    }


def output_of_record(record: dict[str, Any]) -> ModelOutput:
    """The answer a ledger record holds (:func:`output_record` read back)."""
    logprobs = None
    if record.get("logprobs") is not None:
        logprobs = tuple(
            TokenLogprobs(token, logprob, tuple((str(t), float(p)) for t, p in top))
            for token, logprob, top in record["logprobs"]
        )
    return ModelOutput(
        text=str(record["text"]),
        model=str(record["model"]),
        usage=Usage(**record.get("usage", {})),
        continued_from=str(record.get("continued_from", "")),
        logprobs=logprobs,
    )
