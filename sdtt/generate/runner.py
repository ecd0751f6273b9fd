"""Running chains: each chain's calls in sequence, independent chains concurrently.

Every chain writes its own append-only file ``<out>/<chain id>.jsonl``, one flushed
record per line, the record written right after the model call it describes. Killed at
any moment and started again with the same specs, a chain rereads its file (ignoring a
cut-off last line), replays it into the same state and goes on from the next step: no
turn is lost and none is written twice. Chains run in one trio nursery; the per-provider
concurrency limit of :class:`sdtt.models.Model` bounds the calls in flight. A chain whose
step fails is stopped and reported, while the others finish.

Retrying is the model's business alone (one policy, :mod:`sdtt.models.retry`): a long
run gives its models :func:`sdtt.models.retry.long_run_policy`, whose attempts and waits
ride out a server restart within ``SDTT_STEP_DEADLINE`` per call. The call record and
the error say how many attempts a step made.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, Self

import trio
from pydantic import BaseModel

from sdtt.dialogue.condition import ChatMode
from sdtt.errors import InputError, SdttError
from sdtt.generate.chain import (
    ChainHeader,
    ChainSettings,
    ChainSpec,
    PersonaHistory,
    chain_header,
    header_difference,
    persona_history,
    resolve_style,
    topic_targets,
)
from sdtt.generate.chainfile import read_chain
from sdtt.generate.pseudo import ChainState, Step
from sdtt.jsonl import JsonlWriter, read_jsonl
from sdtt.models.base import Generator, ModelOutput, Usage
from sdtt.models.pool import NameCache
from sdtt.personas.persona import Persona
from sdtt.personas.privacy import warn_if_sent_remotely
from sdtt.personas.prompt import DEFAULT_HISTORY_TURNS
from sdtt.redact import redact_text

log = logging.getLogger("sdtt.generate")

Status = Literal["waiting", "running", "done", "failed"]


class RecordWriter(Protocol):
    """Where a chain's records go (a :class:`JsonlWriter` unless a test swaps it)."""

    def write(self, record: Mapping[str, Any] | BaseModel) -> None:
        """Append one record."""
        ...

    def close(self) -> None:
        """Release the file."""
        ...


WriterFactory = Callable[[Path], RecordWriter]


@dataclass
class ChainProgress:
    """How far one chain has got; what displays show."""

    chain: str
    model: str
    path: Path
    turns_total: int
    turns_done: int = 0
    calls: int = 0
    usage: Usage = field(default_factory=Usage)
    status: Status = "waiting"
    error: str | None = None
    spec: ChainSpec | None = None

    @property
    def label(self) -> str:
        """A short name for displays: persona, model, mode, seed and turns."""
        if self.spec is None:
            return self.chain
        spec = self.spec
        persona = spec.persona.removesuffix(".jsonl").rsplit("/", 1)[-1]
        return f"{persona} {spec.model} {spec.mode} s{spec.seed} t{spec.total_turns}"


class Display(Protocol):
    """What the runner reports to (a rich progress display, a test recorder, nothing)."""

    def chain_update(self, progress: ChainProgress) -> None:
        """A chain started, advanced, finished or failed."""
        ...


class NullDisplay:
    """A display that shows nothing."""

    def chain_update(self, progress: ChainProgress) -> None:
        """Ignore the update."""


@dataclass(frozen=True)
class RunOptions:
    """How chains are run."""

    step_retries: int = 2
    """Batch runs only: later rounds a request is sent again in when its batch came back
    without an answer to it, before its chain fails. (A failed API request is retried by
    the model's policy instead.)"""
    fsync: bool = False


@dataclass
class RunReport:
    """The outcome of every chain of a run."""

    chains: list[ChainProgress]

    @property
    def failed(self) -> list[ChainProgress]:
        """Chains that stopped with an error."""
        return [chain for chain in self.chains if chain.status == "failed"]

    @property
    def usage(self) -> Usage:
        """Tokens of every chain's calls (earlier runs of resumed chains included)."""
        return sum((chain.usage for chain in self.chains), Usage())


def chain_path(out: Path, spec: ChainSpec) -> Path:
    """The file of ``spec``'s chain in folder ``out``."""
    return out / f"{spec.chain_id}.jsonl"


def _has_records(path: Path) -> bool:
    if not path.exists() or path.stat().st_size == 0:
        return False
    return any(True for _ in read_jsonl(path))


def open_state(path: Path, header: ChainHeader) -> tuple[ChainState, bool]:
    """The state of the chain in ``path`` (replayed), and whether the file is new.

    Raises :class:`InputError` when the file belongs to another chain or was written
    with other settings, persona history or prompts.
    """
    if not _has_records(path):
        return ChainState(header), True
    existing = read_chain(path)
    different = header_difference(existing.header, header)
    if different is not None:
        raise InputError(
            f"was started with a different {different!r} than this run would use "
            "(the persona, prompts or settings changed).",
            path=path,
            hint="Write to another --out folder, or delete the file to start over.",
        )
    return existing.state(), False


class ChainRunner:
    """Runs one chain to its end, writing each record as soon as it exists.

    ``history`` is the persona's :func:`~sdtt.generate.chain.persona_history` for this
    chain, when the caller has it already (worked out here otherwise).
    """

    def __init__(
        self,
        spec: ChainSpec,
        persona: Persona,
        model: Generator,
        path: Path,
        *,
        display: Display | None = None,
        options: RunOptions | None = None,
        writer_factory: WriterFactory | None = None,
        history: PersonaHistory | None = None,
    ) -> None:
        self.spec = spec
        self.model = model
        self.path = path
        self.display = display or NullDisplay()
        self.options = options or RunOptions()
        self._writer_factory = writer_factory or (
            lambda target: JsonlWriter(target, fsync=self.options.fsync)
        )
        warn_if_sent_remotely(persona, spec.model)
        self.header = chain_header(spec, persona, history)
        self.progress = ChainProgress(
            chain=spec.chain_id,
            model=spec.model,
            path=path,
            turns_total=spec.total_turns,
            spec=spec,
        )
        self.state: ChainState | None = None
        self._writer: RecordWriter | None = None

    async def __aenter__(self) -> Self:
        self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    def open(self) -> ChainState:
        """Replay the chain's file (if any), write what is missing; return the state."""
        state, is_new = open_state(self.path, self.header)
        self.state = state
        self._writer = self._writer_factory(self.path)
        if is_new:
            self._writer.write(self.header)
        self._write_pending()
        self._update("running" if not state.done else "done")
        return state

    def close(self) -> None:
        """Close the chain's file."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def _write_pending(self) -> None:
        assert self.state is not None and self._writer is not None
        for turn in self.state.pending_turns():
            self._writer.write(turn)
            self.state.mark_written(turn, check=False)

    def _update(self, status: Status, error: str | None = None) -> None:
        assert self.state is not None
        self.progress.turns_done = self.state.turns_written
        self.progress.calls = self.state.calls
        self.progress.usage = self.state.total_usage
        self.progress.status = status
        self.progress.error = error
        self.display.chain_update(self.progress)

    def next_step(self) -> Step | None:
        """The chain's next call, or ``None`` when it is done."""
        assert self.state is not None
        return None if self.state.done else self.state.next_step()

    def record(self, step: Step, output: ModelOutput) -> None:
        """Store the answer to ``step`` and the turns it finished."""
        assert self.state is not None and self._writer is not None
        record = self.state.call_record(step, output)
        self._writer.write(record)
        self.state.apply(record, live=True)
        self._write_pending()
        self._update("done" if self.state.done else "running")

    def fail(self, error: BaseException) -> None:
        """Record that the chain stopped with ``error`` (kept in the file for diagnosis)."""
        # Kept in a file that may be shared: no credentials from a --base-url.
        text = redact_text(str(error)) or type(error).__name__
        if self._writer is not None and self.state is not None:
            self._writer.write(
                {
                    "type": "pseudo_error",
                    "chain": self.header.chain,
                    "call": self.state.calls,
                    "error": type(error).__name__,
                    "message": text,
                }
            )
        self._update("failed", f"{type(error).__name__}: {text}")

    async def run(self) -> ChainProgress:
        """Make the chain's calls one after another until it is done or a step fails."""
        while (step := self.next_step()) is not None:
            output = await self._call(step)
            self.record(step, output)
        return self.progress

    async def _call(self, step: Step) -> ModelOutput:
        # No retries here: the model's policy has made every attempt worth making.
        return await self.model.generate(step.prompt, step.config)


PersonaLoader = Callable[[str], Persona]
ModelFactory = Callable[[str], Generator]


def chain_runners(
    specs: Sequence[ChainSpec],
    out: Path,
    *,
    personas: PersonaLoader,
    models: ModelFactory,
    display: Display | None = None,
    options: RunOptions | None = None,
    writer_factory: WriterFactory | None = None,
) -> list[ChainRunner]:
    """A runner per distinct spec, each persona and model made once by name."""
    persona_cache = NameCache(personas)
    model_cache = NameCache(models)
    # Chains of one persona share its history: rendering it once for all of them keeps
    # the time before the first call short.
    histories: dict[tuple[str, int, ChatMode], PersonaHistory] = {}

    def history(spec: ChainSpec) -> PersonaHistory:
        key = (spec.persona, spec.settings.history_turns, spec.mode)
        if key not in histories:
            persona = persona_cache(spec.persona)
            histories[key] = persona_history(persona, spec.settings.history_turns, spec.mode)
        return histories[key]

    return [
        ChainRunner(
            spec,
            persona_cache(spec.persona),
            model_cache(spec.model),
            chain_path(out, spec),
            display=display,
            options=options,
            writer_factory=writer_factory,
            history=history(spec),
        )
        for spec in _unique(specs)
    ]


async def run_chains(
    specs: Sequence[ChainSpec],
    out: Path,
    *,
    personas: PersonaLoader,
    models: ModelFactory,
    display: Display | None = None,
    options: RunOptions | None = None,
    writer_factory: WriterFactory | None = None,
) -> RunReport:
    """Run every chain to its end, concurrently; a failing chain does not stop the others.

    Errors that concern the whole run (a persona that can't be read, a model that can't
    be created, a chain file from other settings) are raised before any call is made.
    """
    runners = chain_runners(
        specs,
        out,
        personas=personas,
        models=models,
        display=display or NullDisplay(),
        options=options,
        writer_factory=writer_factory,
    )
    try:
        for runner in runners:
            runner.open()
        async with trio.open_nursery() as nursery:
            for runner in runners:
                nursery.start_soon(_guarded, runner)
    finally:
        for runner in runners:
            runner.close()
    return RunReport([runner.progress for runner in runners])


def _unique(specs: Iterable[ChainSpec]) -> list[ChainSpec]:
    seen: dict[str, ChainSpec] = {}
    for spec in specs:
        seen.setdefault(spec.chain_id, spec)
    return list(seen.values())


async def _guarded(runner: ChainRunner) -> None:
    try:
        await runner.run()
    except SdttError as error:
        runner.fail(error)
    except Exception as error:  # a bug met by one chain must not end the others' work
        log.exception("chain %s stopped by an unexpected error", runner.header.chain)
        runner.fail(error)


async def generate_pseudo_dialogue(
    persona: Persona,
    model: Generator,
    topics: Sequence[str],
    turns_per_topic: int,
    *,
    mode: ChatMode = "burst",
    seed: int = 0,
    out: Path,
    history_turns: int = DEFAULT_HISTORY_TURNS,
    settings: ChainSettings | None = None,
    display: Display | None = None,
) -> Path:
    """Write one pseudo-dialogue (every topic, ``turns_per_topic`` turns each) into ``out``.

    ``settings`` default to the style that suits the model (``lines`` for local models)
    with ``history_turns`` of the persona's history. Resumes the chain if its file is
    already there. Returns the chain file's path; read the dialogue back with
    :func:`sdtt.generate.chainfile.load_pseudo_messages`. Raises the chain's error if it
    could not finish.
    """
    if settings is None:
        style = resolve_style("auto", model.name)
        settings = ChainSettings(style=style, history_turns=history_turns)
    spec = ChainSpec(
        persona=persona.name,
        model=model.name,
        mode=mode,
        seed=seed,
        topics=topic_targets(topics, turns_per_topic * len(topics), turns_per_topic),
        settings=settings,
    )
    runner = ChainRunner(spec, persona, model, chain_path(out, spec), display=display)
    async with runner:
        await runner.run()
    return runner.path
