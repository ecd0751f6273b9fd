"""Batch APIs: every chain's next call in one batch, at half price.

OpenAI Batch (upload a JSONL file of ``/v1/chat/completions`` requests, create a batch,
poll it, download the output file) and Anthropic Message Batches (create with the
requests, poll, stream the results). Each request body is exactly the one the normal
provider would send (``OpenAIAPI.request`` / ``AnthropicAPI.request``), so prompts,
cache marks and settings are the same with and without ``--batch``.

Every request to a batch API (upload, create, poll, download) goes through the provider's
SDK layer (``SdkAPI.call``: the same error mapping as a chat call, the provider's own
message kept) and the model's retry policy (``Model.call``: 429 and 5xx retried,
``retry-after`` honoured, the same deadline). A request the policy gives up on ends the
chains of that batch with the provider's message; running the command again resumes them.

A batched run goes in rounds: all unfinished chains' next steps are grouped by model and
sent as one batch per model; when the batches end, each answer is stored by its chain
exactly as a direct call's would be, and the next round starts. Submitted batches are
noted in ``<out>/batches.jsonl`` before anything waits on them, so a run killed while a
batch is in flight picks the same batch up again instead of paying for it twice.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

import trio

from sdtt.dialogue.jsonl import JsonlWriter, read_jsonl
from sdtt.errors import ConfigError, ModelError, ProviderError, SdttError
from sdtt.generate.pseudo import Step
from sdtt.generate.records import ChainSpec
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
from sdtt.models.base import GenerateConfig, ModelOutput, Prompt
from sdtt.models.model import Model
from sdtt.models.registry import PROVIDERS, provider_of

BatchState = Literal["running", "ended"]
LEDGER_NAME = "batches.jsonl"
OPENAI_ENDPOINT = "/v1/chat/completions"
REQUEST_TIMEOUT = 300.0
"""Seconds one batch API request may take (an upload can hold thousands of prompts)."""
T = TypeVar("T")


@dataclass(frozen=True)
class BatchRequest:
    """One call of a batch; ``custom_id`` ties the answer back to its chain and step."""

    custom_id: str
    prompt: Prompt
    config: GenerateConfig


@dataclass(frozen=True)
class BatchResult:
    """The answer to one request, or why there is none."""

    custom_id: str
    output: ModelOutput | None = None
    error: str | None = None


class BatchBackend(Protocol):
    """One provider's batch API for one model."""

    model: str
    """The ``provider/model`` name."""

    async def submit(self, requests: Sequence[BatchRequest]) -> str:
        """Send the requests as one batch; return the batch id."""
        ...

    async def state(self, batch_id: str) -> BatchState:
        """Whether the batch is still running or has ended (completed, failed, expired)."""
        ...

    async def results(self, batch_id: str) -> list[BatchResult]:
        """The answers of an ended batch (requests without one come back with an error)."""
        ...


class SdkBatch:
    """What both batch backends share: requests through the model's API layer."""

    def __init__(self, model: Model) -> None:
        self.handle = model
        """The model whose retry policy, limit and SDK client the requests use."""
        self.api: Any = model.api
        self.model: str = model.name

    async def _request(self, what: str, operation: Callable[[Any], Awaitable[T]]) -> T:
        """One batch API request (``operation`` gets the SDK client), retried by policy."""
        return await self.handle.call(
            lambda: self.api.call(operation, REQUEST_TIMEOUT),
            timeout=REQUEST_TIMEOUT,
            what=what,
        )


class OpenAIBatch(SdkBatch):
    """The OpenAI Batch API for one ``openai/...`` model (``sdtt.models.openai_api``)."""

    async def submit(self, requests: Sequence[BatchRequest]) -> str:
        """Upload the requests as a JSONL file and create a 24-hour batch over it."""
        lines = [
            json.dumps(
                {
                    "custom_id": request.custom_id,
                    "method": "POST",
                    "url": OPENAI_ENDPOINT,
                    "body": self.api.request(request.prompt, request.config),
                }
            )
            for request in requests
        ]
        content = ("\n".join(lines) + "\n").encode("utf-8")
        upload = await self._request(
            "batch upload",
            lambda client: client.files.create(file=("sdtt-batch.jsonl", content), purpose="batch"),
        )
        batch = await self._request(
            "batch create",
            lambda client: client.batches.create(
                input_file_id=upload.id,
                endpoint=OPENAI_ENDPOINT,
                completion_window="24h",
                metadata={"source": "sdtt generate"},
            ),
        )
        return str(batch.id)

    async def state(self, batch_id: str) -> BatchState:
        """'ended' once the batch completed, failed, expired or was cancelled."""
        batch = await self._request(
            "batch status", lambda client: client.batches.retrieve(batch_id)
        )
        ended = batch.status in ("completed", "failed", "expired", "cancelled")
        return "ended" if ended else "running"

    async def results(self, batch_id: str) -> list[BatchResult]:
        """Read the output and error files of an ended batch."""
        import openai

        batch = await self._request(
            "batch status", lambda client: client.batches.retrieve(batch_id)
        )
        texts = []
        for file_id in (batch.output_file_id, batch.error_file_id):
            if file_id:
                texts.append(await self._file_text(file_id))
        results = []
        for text in texts:
            for line in text.splitlines():
                if not line.strip():
                    continue
                entry = json.loads(line)
                custom_id = str(entry.get("custom_id"))
                response = entry.get("response") or {}
                body = response.get("body")
                if response.get("status_code") == 200 and isinstance(body, dict):
                    try:
                        completion = openai.types.chat.ChatCompletion.model_validate(body)
                        output = self.api._output(completion)
                    except (ValueError, ModelError) as error:
                        results.append(BatchResult(custom_id, error=f"unusable answer: {error}"))
                        continue
                    results.append(BatchResult(custom_id, output=output))
                else:
                    results.append(BatchResult(custom_id, error=_openai_error(entry)))
        return results

    async def _file_text(self, file_id: str) -> str:
        content = await self._request("batch results", lambda client: client.files.content(file_id))
        return str(content.text)


def _openai_error(entry: dict[str, Any]) -> str:
    error = entry.get("error") or (entry.get("response") or {}).get("body", {}).get("error")
    if isinstance(error, dict):
        return str(error.get("message") or error.get("code") or "failed")
    status = (entry.get("response") or {}).get("status_code")
    return f"HTTP {status}" if status else "failed"


class AnthropicBatch(SdkBatch):
    """Anthropic Message Batches for one ``anthropic/...`` model."""

    async def submit(self, requests: Sequence[BatchRequest]) -> str:
        """Create a message batch holding the requests."""
        bodies = [
            {
                "custom_id": request.custom_id,
                "params": self.api.request(request.prompt, request.config),
            }
            for request in requests
        ]
        batch = await self._request(
            "batch create", lambda client: client.messages.batches.create(requests=bodies)
        )
        return str(batch.id)

    async def state(self, batch_id: str) -> BatchState:
        """'ended' once the batch's processing has ended."""
        batch = await self._request(
            "batch status", lambda client: client.messages.batches.retrieve(batch_id)
        )
        return "ended" if batch.processing_status == "ended" else "running"

    async def results(self, batch_id: str) -> list[BatchResult]:
        """Stream the results of an ended batch."""

        async def download(client: Any) -> list[Any]:
            # Read whole inside one request, so a retry starts the stream over.
            return [entry async for entry in await client.messages.batches.results(batch_id)]

        results = []
        for entry in await self._request("batch results", download):
            result = entry.result
            if result.type == "succeeded":
                try:
                    output = self.api._output(result.message)
                except ModelError as error:
                    results.append(BatchResult(entry.custom_id, error=f"unusable answer: {error}"))
                    continue
                results.append(BatchResult(entry.custom_id, output=output))
            else:
                results.append(BatchResult(entry.custom_id, error=result.type))
        return results


BACKENDS: dict[str, type[OpenAIBatch] | type[AnthropicBatch]] = {
    "openai": OpenAIBatch,
    "anthropic": AnthropicBatch,
}
"""The backend of each provider whose registry entry says it has a batch API."""


def batch_backend(model: Any) -> BatchBackend:
    """The batch API for ``model`` (a :class:`sdtt.models.Model`, or a bare provider,
    which gets the default policy); ConfigError if its provider has none."""
    name = str(getattr(model, "name", "?"))
    provider = provider_of(name)
    if provider is None or not provider.batch:
        able = " and ".join(f"{p.name}/" for p in PROVIDERS.values() if p.batch)
        raise ConfigError(
            f"--batch works with {able} models only, not {name}. "
            "Run without --batch for this model."
        )
    return BACKENDS[provider.name](model if isinstance(model, Model) else Model(model))


def custom_id(chain: str, call: int) -> str:
    """A request id that both providers accept (letters, digits, '-', at most 64)."""
    digest = hashlib.sha1(chain.encode("utf-8")).hexdigest()[:20]
    return f"c{digest}-{call}"


class BatchLedger:
    """``batches.jsonl``: which batches were submitted for which requests, and which are used."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.open: dict[str, tuple[str, set[str]]] = {}
        """Batch id -> (model, custom ids) of batches whose results are not used yet."""
        if path.exists():
            for _, record in read_jsonl(path):
                if record.get("type") == "batch":
                    ids = {str(item) for item in record.get("requests", [])}
                    self.open[str(record["id"])] = (str(record.get("model")), ids)
                elif record.get("type") == "batch_used":
                    self.open.pop(str(record.get("id")), None)
        self._writer = JsonlWriter(path)

    def find(self, model: str, wanted: set[str]) -> list[tuple[str, set[str]]]:
        """Open batches of ``model`` holding some of ``wanted``, with the ids each covers."""
        found = []
        remaining = set(wanted)
        for batch_id, (batch_model, ids) in self.open.items():
            covered = ids & remaining
            if batch_model == model and covered:
                found.append((batch_id, covered))
                remaining -= covered
        return found

    def submitted(self, batch_id: str, model: str, ids: Sequence[str]) -> None:
        """Note a new batch (before waiting on it)."""
        self._writer.write({"type": "batch", "id": batch_id, "model": model, "requests": ids})
        self.open[batch_id] = (model, set(ids))

    def used(self, batch_id: str) -> None:
        """Note that a batch's results were stored by their chains."""
        self._writer.write({"type": "batch_used", "id": batch_id})
        self.open.pop(batch_id, None)

    def close(self) -> None:
        """Close the ledger file."""
        self._writer.close()


async def _wait(backend: BatchBackend, batch_id: str, poll_interval: float) -> None:
    while await backend.state(batch_id) != "ended":
        await trio.sleep(poll_interval)


async def _round(
    backend: BatchBackend,
    group: list[tuple[ChainRunner, Step]],
    ledger: BatchLedger,
    poll_interval: float,
    failures: dict[str, int],
    options: RunOptions,
) -> None:
    """One batch round for one model: submit (or find), wait, store every answer."""
    wanted = {custom_id(runner.header.chain, step.call): (runner, step) for runner, step in group}
    batches = ledger.find(backend.model, set(wanted))
    covered: set[str] = set()
    for _, ids in batches:
        covered |= ids
    missing = [key for key in wanted if key not in covered]
    if missing:
        requests = [
            BatchRequest(key, wanted[key][1].prompt, wanted[key][1].config) for key in missing
        ]
        batch_id = await backend.submit(requests)
        ledger.submitted(batch_id, backend.model, missing)
        batches.append((batch_id, set(missing)))
    started = trio.current_time()
    order = {key: index for index, key in enumerate(wanted)}
    for batch_id, ids in batches:
        await _wait(backend, batch_id, poll_interval)
        answers = {result.custom_id: result for result in await backend.results(batch_id)}
        for key in sorted(ids, key=order.__getitem__):
            runner, step = wanted[key]
            result = answers.get(key)
            if result is not None and result.output is not None:
                latency = trio.current_time() - started
                output = ModelOutput(
                    text=result.output.text,
                    model=result.output.model,
                    usage=result.output.usage,
                    latency=latency,
                    continued_from=result.output.continued_from,
                )
                runner.record(step, output)
                failures.pop(runner.header.chain, None)
                continue
            chain = runner.header.chain
            failures[chain] = failures.get(chain, 0) + 1
            if failures[chain] > options.step_retries:
                why = result.error if result is not None else "no answer in the batch"
                runner.fail(ProviderError(f"batch request failed {failures[chain]} times: {why}"))
        ledger.used(batch_id)


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
    provider gives its own (OpenAI and Anthropic only).
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
                        _guarded_round,
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


async def _guarded_round(
    backend: BatchBackend,
    group: list[tuple[ChainRunner, Step]],
    ledger: BatchLedger,
    poll_interval: float,
    failures: dict[str, int],
    options: RunOptions,
) -> None:
    try:
        await _round(backend, group, ledger, poll_interval, failures, options)
    except SdttError as error:
        # The batch API failed after the model's retries: the group's chains stop with
        # the provider's message (a batch already submitted stays in the ledger, so a
        # rerun picks it up).
        for runner, _ in group:
            runner.fail(error)
