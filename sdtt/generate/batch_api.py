"""``sdtt generate --batch``: every chain's next call in one batch, at half price.

The batch APIs themselves live beside their providers (:mod:`sdtt.models.batch`: a
provider's registry entry names its backend), and so do the ledger and the job handling
it shares with the judges' ``--batch`` (:mod:`sdtt.models.batch_ledger`); this module runs
chains through any of them alike.

A batched run goes in rounds: all unfinished chains' next steps are grouped by model and
sent as one batch per model; when the batches end, each answer is stored by its chain
exactly as a direct call's would be, and the next round starts. Submitted batches are
noted in ``<out>/batches.jsonl`` before anything waits on them, so a run killed while a
batch is in flight picks the same batch up again instead of paying for it twice. A batch
API request that the model's retry policy gives up on ends the chains of that batch with
the provider's message; running the command again resumes them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import trio

from sdtt.errors import ProviderError, SdttError
from sdtt.generate.chain import ChainSpec
from sdtt.generate.pseudo import Step
from sdtt.generate.runner import (
    ChainRunner,
    Display,
    ModelFactory,
    NullDisplay,
    PersonaLoader,
    RunOptions,
    RunReport,
    WriterFactory,
    chain_runners,
)
from sdtt.models.base import ModelOutput
from sdtt.models.batch import BatchBackend, BatchRequest, batch_backend
from sdtt.models.batch_ledger import BatchLedger, job_results, submit_job

LEDGER_NAME = "batches.jsonl"


def custom_id(chain: str, call: int) -> str:
    """A request id that batch APIs accept (letters, digits, '-', at most 64)."""
    digest = hashlib.sha1(chain.encode("utf-8")).hexdigest()[:20]
    return f"c{digest}-{call}"


async def _round(
    backend: BatchBackend,
    group: list[tuple[ChainRunner, Step]],
    ledger: BatchLedger,
    poll_interval: float,
    failures: dict[str, int],
    options: RunOptions,
) -> None:
    """One batch round for one model: submit (or find), wait, store every answer.

    A batch API that fails after the model's retries stops the group's chains with the
    provider's message (a job already submitted stays in the ledger, so a rerun picks it
    up)."""
    try:
        wanted = {
            custom_id(runner.header.chain, step.call): (runner, step) for runner, step in group
        }
        batches, missing = ledger.split(backend.model, wanted)
        if missing:
            requests = [
                BatchRequest(key, wanted[key][1].prompt, wanted[key][1].config) for key in missing
            ]
            batches.append((await submit_job(backend, ledger, requests), set(missing)))
        order = {key: index for index, key in enumerate(wanted)}
        for batch_id, ids in batches:
            results = await job_results(backend, batch_id, poll_interval)
            answers = {result.custom_id: result for result in results}
            for key in sorted(ids, key=order.__getitem__):
                runner, step = wanted[key]
                result = answers.get(key)
                if result is not None and result.output is not None:
                    output = ModelOutput(
                        text=result.output.text,
                        model=result.output.model,
                        usage=result.output.usage,
                        continued_from=result.output.continued_from,
                    )
                    runner.record(step, output)
                    failures.pop(runner.header.chain, None)
                    continue
                chain = runner.header.chain
                failures[chain] = failures.get(chain, 0) + 1
                if failures[chain] > options.step_retries:
                    why = result.error if result is not None else "no answer in the batch"
                    runner.fail(
                        ProviderError(f"batch request failed {failures[chain]} times: {why}")
                    )
            ledger.used(batch_id)
    except SdttError as error:
        for runner, _ in group:
            runner.fail(error)


async def run_chains_batched(
    specs: Sequence[ChainSpec],
    out: Path,
    *,
    personas: PersonaLoader,
    models: ModelFactory,
    display: Display | None = None,
    options: RunOptions | None = None,
    poll_interval: float = 60.0,
    writer_factory: WriterFactory | None = None,
    backends: dict[str, BatchBackend] | None = None,
) -> RunReport:
    """Run chains through the providers' batch APIs, one batch per model and round.

    ``backends`` maps model names to batch backends (tests); by default each model's
    provider gives its own (:func:`sdtt.models.batch.batch_backend`).
    """
    options = options or RunOptions()
    runners = chain_runners(
        specs,
        out,
        personas=personas,
        models=models,
        display=display or NullDisplay(),
        options=options,
        writer_factory=writer_factory,
    )
    backend_cache: dict[str, BatchBackend] = dict(backends or {})
    for runner in runners:
        if runner.spec.model not in backend_cache:
            backend_cache[runner.spec.model] = batch_backend(runner.model)
    out.mkdir(parents=True, exist_ok=True)
    ledger = BatchLedger(out / LEDGER_NAME)
    failures: dict[str, int] = {}
    try:
        for runner in runners:
            runner.open()
        while True:
            groups: dict[str, list[tuple[ChainRunner, Step]]] = {}
            for runner in runners:
                if runner.progress.status == "failed":
                    continue
                try:
                    step = runner.next_step()
                except SdttError as error:
                    runner.fail(error)
                    continue
                if step is not None:
                    groups.setdefault(runner.spec.model, []).append((runner, step))
            if not groups:
                break
            async with trio.open_nursery() as nursery:
                for model, group in groups.items():
                    nursery.start_soon(
                        _round,
                        backend_cache[model],
                        group,
                        ledger,
                        poll_interval,
                        failures,
                        options,
                    )
    finally:
        for runner in runners:
            runner.close()
        ledger.close()
    return RunReport([runner.progress for runner in runners])
