"""LLM judges through the providers' batch APIs (``sdtt judge --batch``, ``align judge --batch``).

:class:`BatchedModel` stands in for a judge's :class:`~sdtt.models.model.Model`: every
``generate`` call waits while the judge's other tasks run on to their own next call, then
all the calls waiting are sent together as one batch job (split at
:data:`MAX_REQUESTS`). Which tasks those are is counted, not guessed: a judge runs its
items with :func:`judge_each`, which counts each item's task as a caller of the run's
:class:`Gathering` from its start to its end, and a round's job goes out when every
caller waits for an answer (or :data:`DEFAULT_GATHER` seconds after its first call, so a
slow caller delays a job, never holds it). The judges' records are exactly those of
direct calls: an unreadable answer is asked again in the next job, and a
reveal-mode judge, whose turn ``k + 1`` depends on turn ``k``, sends one job per turn
across all pairs. The batch APIs are the providers' own (:mod:`sdtt.models.batch`), the
same backends ``sdtt generate --batch`` uses.

A ledger beside the output (:func:`ledger_path`) makes a run resumable after a kill:

- each job's id and request ids are noted before anything waits on it, and a rerun that
  needs those requests waits for that job instead of submitting them again;
- each answer is noted as soon as its job ends, so a rerun gets every answer it already
  paid for from the ledger (a reveal judge killed at turn 5 does not ask turns 1-4 again).

A request's id is a digest of the model, prompt and settings, numbered by how often the
run asked the same thing, so the same question gets the same id in every run.

A request that a job returns without an answer (an error, or a job that expired or was
cancelled before it ran) goes into a new job, at most ``retries`` more times; then the
judge gets a :class:`~sdtt.errors.ProviderError` and records a ``model_error``, which a
rerun asks again. A batch API request that the model's retry policy gives up on stops
the run: what was written is kept, and the ledger lets a rerun pick the jobs up.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import KW_ONLY, asdict, dataclass, field
from pathlib import Path
from typing import TypeVar

import trio

from sdtt.errors import ProviderError
from sdtt.models.base import GenerateConfig, Generator, ModelOutput, Prompt
from sdtt.models.batch import BatchBackend, BatchRequest, BatchResult, batch_backend
from sdtt.models.batch_ledger import BatchLedger, job_results, submit_job
from sdtt.models.model import Model, as_prompt

DEFAULT_POLL = 60.0
"""Seconds between status checks of a running job."""
DEFAULT_RETRIES = 2
"""New jobs a request without an answer is sent in before the judge records an error."""
MAX_REQUESTS = 10_000
"""Requests per job at most: far below both providers' limits (50,000 and 100,000), and
it bounds the memory a job's upload takes."""
DEFAULT_GATHER = 30.0
"""Seconds a round's job waits, after its first call, for callers still busy: a caller
slower than that sends its call in the next job (a job takes minutes to hours)."""

Notify = Callable[[str], None]


LEDGER_SUFFIX = ".batches.jsonl"


def _quiet(text: str) -> None:
    """The notice of a run that says nothing."""


def ledger_path(out: Path) -> Path:
    """The batch ledger of an output file: ``judgements.jsonl`` -> ``judgements.batches.jsonl``."""
    return out.with_name(f"{out.stem}{LEDGER_SUFFIX}")


T = TypeVar("T")


class Gathering:
    """The callers of a run's batched models and how many of them wait for an answer.

    A caller is a task that may call a batched model (one item of a judge); it counts
    from when it is started, so a round does not go out before a caller that has not run
    yet has made its call. A round's job goes when every caller waits (on any model of
    the run: a cohort of one model waits while the other's cohort asks).
    """

    def __init__(self) -> None:
        self.callers = 0
        self.waiting = 0
        self._changed = trio.Event()

    def _change(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    def join(self) -> None:
        """A caller is started."""
        self.callers += 1

    def leave(self) -> None:
        """A caller has ended: a round no longer waits for it."""
        self.callers -= 1
        self._change()

    def wait_begins(self) -> None:
        """A call waits for its answer."""
        self.waiting += 1
        self._change()

    def wait_ends(self) -> None:
        """A call has its answer (or gave up): its caller is busy again."""
        self.waiting -= 1

    async def everyone_waits(self) -> None:
        """Return once every caller waits for an answer."""
        while self.waiting < self.callers:
            await self._changed.wait()


_GATHERING: ContextVar[Gathering | None] = ContextVar("sdtt_batch_gathering", default=None)
"""The gathering of the batched models open in this task (set by :func:`batched`, seen
by the tasks it starts): how :func:`judge_each` finds it through any wrapper of the model."""


async def judge_each(
    items: Iterable[T], one: Callable[[T], Awaitable[None]], *, concurrency: int
) -> None:
    """``one(item)`` for every item, at most ``concurrency`` at once, in order.

    Under :func:`batched` each item's task counts as a caller of its gathering from the
    moment it is started until it ends, so every round's job waits for it."""
    gathering = _GATHERING.get()
    todo = iter(items)
    async with trio.open_nursery() as nursery:

        def start_next() -> None:
            for item in todo:
                if gathering is not None:
                    gathering.join()
                nursery.start_soon(run, item)
                return

        async def run(item: T) -> None:
            try:
                await one(item)
            except BaseException:
                if gathering is not None:
                    gathering.leave()
                raise
            start_next()  # before leaving, so the count of callers never dips between two
            if gathering is not None:
                gathering.leave()

        for _ in range(max(1, concurrency)):
            start_next()


@dataclass(eq=False)
class _Waiting:
    """One ``generate`` call waiting for its answer."""

    request: BatchRequest
    done: trio.Event = field(default_factory=trio.Event)
    output: ModelOutput | None = None
    error: ProviderError | None = None
    failures: int = 0
    last_error: str = ""


@dataclass
class BatchStats:
    """What a batched run did, for its summary."""

    jobs: int = 0
    """Jobs submitted by this run."""
    resumed: int = 0
    """Jobs of an earlier run waited for instead of submitted again."""
    from_ledger: int = 0
    """Answers an earlier run had noted, used without any call."""
    resent: int = 0
    """Requests sent again after a job returned them without an answer."""
    gave_up: int = 0
    """Requests the judge recorded as errors after every try."""


@dataclass(eq=False)
class BatchedModel:
    """A judge's model whose calls go out together through its provider's batch API.

    Use it through :func:`batched`, which runs the part that gathers and sends the
    calls; hand it to a judge as its model, with a concurrency as large as the number of
    calls a round can hold (every pair at once), so every call of a round joins one job.
    """

    model: Model
    backend: BatchBackend
    ledger: BatchLedger
    _: KW_ONLY
    poll_interval: float = DEFAULT_POLL
    retries: int = DEFAULT_RETRIES
    max_requests: int = MAX_REQUESTS
    notify: Notify = _quiet
    stats: BatchStats = field(default_factory=BatchStats)
    gathering: Gathering = field(default_factory=Gathering)
    gather: float = DEFAULT_GATHER
    _asked: Counter[str] = field(default_factory=Counter, init=False)
    _pending: list[_Waiting] = field(default_factory=list, init=False)
    _wanted: trio.Event = field(default_factory=trio.Event, init=False)
    _watched: dict[str, list[_Waiting]] = field(default_factory=dict, init=False)
    """Jobs being waited for -> the calls waiting on each (a resumed job may be found
    again by a later round while it runs)."""

    def __post_init__(self) -> None:
        self.max_requests = max(1, self.max_requests)

    @property
    def name(self) -> str:
        """The ``provider/model`` name."""
        return self.model.name

    def request_id(self, prompt: Prompt, config: GenerateConfig) -> str:
        """The id of the next call of ``prompt`` with ``config``: a digest of the model,
        prompt and settings, and how often this run asked the same before (from 0)."""
        body = json.dumps(
            {"model": self.name, "prompt": asdict(prompt), "config": asdict(config)},
            sort_keys=True,
            ensure_ascii=False,
        )
        digest = hashlib.sha1(body.encode("utf-8")).hexdigest()[:24]
        number = self._asked[digest]
        self._asked[digest] += 1
        return f"j{digest}-{number}"

    async def generate(
        self, prompt: Prompt | str, config: GenerateConfig | None = None
    ) -> ModelOutput:
        """The answer to one call, from the ledger or from the job it joins."""
        prompt = as_prompt(prompt)
        config = config or self.model.config
        key = self.request_id(prompt, config)
        stored = self.ledger.take(key)
        if stored is not None:
            self.stats.from_ledger += 1
            return stored
        waiting = _Waiting(BatchRequest(key, prompt, config))
        self._queue(waiting)
        self.gathering.wait_begins()
        try:
            await waiting.done.wait()
        finally:
            if not waiting.done.is_set():  # cancelled while waiting
                self.gathering.wait_ends()
        if waiting.error is not None:
            raise waiting.error
        assert waiting.output is not None
        return waiting.output

    def _queue(self, waiting: _Waiting) -> None:
        self._pending.append(waiting)
        self._wanted.set()

    def _hand_out(self, waiting: _Waiting) -> None:
        # Counted at once: the caller is busy from now, so the next round waits for it.
        self.gathering.wait_ends()
        waiting.done.set()

    async def serve(self) -> None:
        """Gather the calls and send them, until cancelled (run by :func:`batched`)."""
        async with trio.open_nursery() as nursery:
            while True:
                await self._wanted.wait()
                # This round's calls are all in once every caller waits for an answer.
                with trio.move_on_after(self.gather):
                    await self.gathering.everyone_waits()
                taken, self._pending = self._pending, []
                self._wanted = trio.Event()
                nursery.start_soon(self._round, taken)

    async def _round(self, taken: list[_Waiting]) -> None:
        """Send one round's calls (waiting for jobs that already hold some) and answer them."""
        wanted = {waiting.request.custom_id: waiting for waiting in taken}
        found, missing = self.ledger.split(self.name, wanted)
        async with trio.open_nursery() as nursery:
            for job, ids in found:
                calls = [wanted[key] for key in ids]
                if job in self._watched:
                    self._watched[job].extend(calls)
                    continue
                self.stats.resumed += 1
                self.notify(f"batch {job}: waiting for the job an earlier run submitted")
                self._watched[job] = calls
                nursery.start_soon(self._watch, job)
            for start in range(0, len(missing), self.max_requests):
                chunk = [wanted[key] for key in missing[start : start + self.max_requests]]
                job = await submit_job(self.backend, self.ledger, [w.request for w in chunk])
                self.stats.jobs += 1
                self.notify(f"batch {job}: {len(chunk)} request(s) submitted")
                self._watched[job] = chunk
                nursery.start_soon(self._watch, job)

    async def _watch(self, job: str) -> None:
        """Wait for a job to end, note its answers, hand them out, resend what failed."""
        results = await job_results(self.backend, job, self.poll_interval)
        calls = {waiting.request.custom_id: waiting for waiting in self._watched.pop(job)}
        answered: set[str] = set()
        for result in results:
            if result.output is None:
                continue
            answered.add(result.custom_id)
            self.ledger.answered(result.custom_id, result.output)
            waiting = calls.get(result.custom_id)
            if waiting is None:
                # An earlier run's request not asked again yet: its answer waits in the
                # ledger for the round that asks it.
                self.ledger.keep(result.custom_id, result.output)
                continue
            waiting.output = result.output
            self._hand_out(waiting)
        self.ledger.used(job)
        failed = [waiting for key, waiting in calls.items() if key not in answered]
        if failed:
            self._failed(job, failed, {r.custom_id: r for r in results})

    def _failed(self, job: str, failed: list[_Waiting], results: dict[str, BatchResult]) -> None:
        """Resend the calls a job gave no answer, or give up on those tried too often."""
        reasons: Counter[str] = Counter()
        resent = given_up = 0
        for waiting in failed:
            result = results.get(waiting.request.custom_id)
            why = (result.error if result is not None else None) or "no answer in the batch"
            reasons[why] += 1
            waiting.failures += 1
            if waiting.failures > self.retries:
                waiting.error = ProviderError(
                    f"batch request failed {waiting.failures} times: {why}"
                )
                self._hand_out(waiting)
                given_up += 1
            else:
                self._queue(waiting)
                resent += 1
        self.stats.resent += resent
        self.stats.gave_up += given_up
        said = "; ".join(f"{count} {why}" for why, count in reasons.most_common(3))
        what = []
        if resent:
            what.append(f"{resent} sent again in a new job")
        if given_up:
            what.append(f"{given_up} recorded as errors after {self.retries + 1} tries")
        self.notify(
            f"batch {job}: {len(failed)} request(s) without an answer ({said}); " + ", ".join(what)
        )


@asynccontextmanager
async def batched(
    model: Model,
    ledger: Path,
    *,
    poll_interval: float = DEFAULT_POLL,
    retries: int = DEFAULT_RETRIES,
    max_requests: int = MAX_REQUESTS,
    notify: Notify | None = None,
    backend: BatchBackend | None = None,
    stats: BatchStats | None = None,
    gather: float = DEFAULT_GATHER,
) -> AsyncIterator[BatchedModel]:
    """``model`` with its calls sent through its provider's batch API while the block
    runs; ``ledger`` is the file of jobs and answers (:func:`ledger_path`).

    The tasks the block starts see its :class:`Gathering` (batched models opened inside
    the block share it), so judges run with :func:`judge_each` are waited for.
    ``backend`` replaces the provider's own batch API (tests); without it, a model whose
    provider has none is refused with a ConfigError naming those that have one.
    """
    backend = backend or batch_backend(model)
    gathering = _GATHERING.get()
    token = None
    if gathering is None:
        gathering = Gathering()
        token = _GATHERING.set(gathering)
    ledger.parent.mkdir(parents=True, exist_ok=True)
    book = BatchLedger(ledger)
    handle = BatchedModel(
        model,
        backend,
        book,
        poll_interval=poll_interval,
        retries=retries,
        max_requests=max_requests,
        notify=notify or _quiet,
        stats=stats or BatchStats(),
        gathering=gathering,
        gather=gather,
    )
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(handle.serve)
            yield handle
            nursery.cancel_scope.cancel()
    finally:
        if token is not None:
            _GATHERING.reset(token)
        book.close()
        # A run that had nothing to send leaves no empty ledger beside its output.
        if ledger.exists() and ledger.stat().st_size == 0:
            ledger.unlink()


EVERY_CALL = 50_000
"""The concurrency a judge gets in batch mode: every pair (or rating) at once, so every
call of a round joins its job (the batch API, not a limit of calls in flight, paces
them), up to this many: each waiting call holds its prompt and its task (about 12 KB in
benchmarks/judge_batch.py), so a larger study goes in waves of jobs instead of holding
all of it."""


@dataclass(frozen=True)
class BatchSettings:
    """How a command's judge uses the batch API (``--batch``, ``--poll``,
    ``--batch-retries``)."""

    ledger: Path
    """The ledger file (:func:`ledger_path` of the output)."""
    poll_interval: float = DEFAULT_POLL
    retries: int = DEFAULT_RETRIES
    notify: Notify | None = None
    """Receives one line per job submitted, picked up or ending without some answers."""
    stats: BatchStats = field(default_factory=BatchStats)
    """What the run did, filled in as it goes."""


@asynccontextmanager
async def judge_model(
    model: Model, settings: BatchSettings | None
) -> AsyncIterator[tuple[Generator, int | None]]:
    """The model a judge asks, and the concurrency it must use instead of its own
    (None: its own): ``model`` itself without ``settings``, else :func:`batched` of it."""
    if settings is None:
        yield model, None
        return
    async with batched(
        model,
        settings.ledger,
        poll_interval=settings.poll_interval,
        retries=settings.retries,
        notify=settings.notify,
        stats=settings.stats,
    ) as handle:
        yield handle, EVERY_CALL


def stats_text(stats: BatchStats) -> str:
    """One line on what a batched run did."""
    parts = [f"{stats.jobs} job(s) submitted"]
    if stats.resumed:
        parts.append(f"{stats.resumed} picked up from an earlier run")
    if stats.from_ledger:
        parts.append(f"{stats.from_ledger} answer(s) from an earlier run used, not asked again")
    if stats.resent:
        parts.append(f"{stats.resent} request(s) sent again")
    if stats.gave_up:
        parts.append(f"{stats.gave_up} recorded as model errors")
    return "batch: " + ", ".join(parts)
