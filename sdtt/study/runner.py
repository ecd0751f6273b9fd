"""``sdtt study run``: make every missing piece of a study, in dependency order.

Each step calls the library function its single command calls (``generate_topics``,
``run_chains``, ``simulate_condition``, ``build_study``, ``build_rating_task`` and
``run_cohort`` of ``sdtt align``, ``run_llm_judge``, the survey exporters and readers,
``build_report``). Steps already done are skipped; a step cut short by a kill is made
again, and every call it had already made is answered from the cost ledger
(:mod:`sdtt.study.ledger`): no paid call is made twice. A judge (or cohort) with ``batch
= true`` sends its calls through its provider's batch API (:mod:`sdtt.judges.batched`, as
``sdtt judge --batch``), whose job ledger lets a rerun wait for a job that a killed run
had submitted instead of sending it again. A step a person must do (hold the chats,
field the survey) stops the run with what to do next.

The runner never runs trio itself: ``drive(fn, virtual)`` (from the command line, or a
test) runs an async step, on the engine's virtual clock when ``virtual`` is true.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

import trio

from sdtt.align.llm import Cohort, run_cohort
from sdtt.align.ratings import Rating, is_model_error, read_ratings, settled_rating_keys
from sdtt.align.task import (
    build_rating_task,
    load_rating_key,
    load_rating_task,
    save_rating_task,
)
from sdtt.analysis.metrics import chain_name, condition_name
from sdtt.analysis.tells import condition_of
from sdtt.dialogue.condition import Condition
from sdtt.dialogue.message import Message
from sdtt.dialogue.pingpong import convert_to_pingpong, has_runs
from sdtt.engine.interrogator import interrogator_config, llm_interrogator
from sdtt.engine.opening import BOT_CONFIG, Options, role_seed, simulate_condition
from sdtt.engine.session import new_session_id
from sdtt.engine.simulate import INTERROGATOR, for_virtual_clock
from sdtt.errors import InputError, SdttError
from sdtt.files import sort_jsonl
from sdtt.generate.chainfile import count_pseudo_turns, load_pseudo_messages
from sdtt.generate.runner import NullDisplay, chain_path, run_chains
from sdtt.generate.topics import generate_topics, write_topics
from sdtt.jsonl import JsonlWriter
from sdtt.judges.batched import BatchSettings, judge_model, ledger_path
from sdtt.judges.llm import run_llm_judge
from sdtt.judges.llm_options import DEFAULT_CONCURRENCY
from sdtt.lock import output_lock
from sdtt.models.base import Generator, ModelAPI
from sdtt.models.model import Model
from sdtt.models.registry import create_api, provider_of
from sdtt.questionnaires.answers import import_responses
from sdtt.questionnaires.exports import export_files
from sdtt.questionnaires.pairing import PERSONA
from sdtt.questionnaires.pipeline import build_study
from sdtt.study.figures import write_study_report
from sdtt.study.ledger import LEDGER_FILE, BudgetExceeded, Ledger
from sdtt.study.personas import StudyPersonas
from sdtt.study.spec import Study
from sdtt.study.steps import (
    ALIGN_FOLDER,
    JUDGEMENTS_FOLDER,
    PSEUDO_FOLDER,
    QUESTIONNAIRE_FOLDER,
    STAGES,
    SURVEY_FOLDER,
    TOPICS_FILE,
    Cell,
    Step,
    cells,
    chain_key,
    chain_spec,
    chain_step_id,
    chain_topics,
    mark_done,
    ratings_path,
    state,
    steps,
)
from sdtt.surveys.tools import TOOLS
from sdtt.tasks.judgements import (
    read_judgements,
    settled_keys,
    write_judgements,
)
from sdtt.tasks.questionnaire import (
    AnswerKey,
    PairItem,
    SourceInfo,
    load_key,
    load_questionnaire,
    save_study,
)
from sdtt.tasks.rating_spec import RatingSource, RatingSpec
from sdtt.tasks.study import DesignSpec, PairSpec
from sdtt.tasks.study import StudySpec as QuestionnaireSpec

Drive = Callable[[Callable[[], Awaitable[Any]], bool], Any]
"""Runs an async function to its end (on the virtual clock when the flag is set)."""
SHOW_EVERY = 0.25
"""Seconds between progress updates while calls are made."""
ApiFactory = Callable[[str], ModelAPI]
"""Makes the provider of a ``provider/model`` name (tests give scripted mocks)."""


@dataclass
class StageCount:
    """Steps of one stage: done and in all."""

    done: int = 0
    total: int = 0


@dataclass
class Snapshot:
    """The whole study's progress, for a display."""

    stages: dict[str, StageCount]
    current: str
    calls: int
    replayed: int
    input_tokens: int
    output_tokens: int
    cost: float
    elapsed: float
    left: float | None
    """Seconds the remaining automatic steps should take, from this run's pace."""


class Progress(Protocol):
    """What the runner reports to (the command's live display, a test, nothing)."""

    def update(self, snapshot: Snapshot) -> None:
        """The study moved on (a step started or ended, a call was made)."""
        ...


class _Silent:
    def update(self, snapshot: Snapshot) -> None:
        """Show nothing."""


@dataclass
class RunResult:
    """How a run ended."""

    finished: bool
    waiting: Step | None = None
    """The step a person must do next."""
    next: list[str] = field(default_factory=list)
    """What to do next, line by line."""
    budget: BudgetExceeded | None = None
    undone: list[Step] = field(default_factory=list)
    """Steps left undone (after a budget stop, or at a human step)."""
    ledger: Ledger | None = None


class StudyRunner:
    """Runs one study's missing steps."""

    def __init__(
        self,
        study: Study,
        *,
        drive: Drive,
        api_factory: ApiFactory = create_api,
        progress: Progress | None = None,
        replay: bool = False,
    ) -> None:
        self.study = study
        self.personas = StudyPersonas(study)
        """The personas the bots play: with ``held_out``, their chats held out here."""
        self.replay = replay
        """The answers come from a recording (``sdtt study verify --rerun``): sections
        with ``batch = true`` call it directly, priced at the batch discount as before."""
        self.drive = drive
        self.api_factory = api_factory
        self.progress = progress or _Silent()
        spec = study.spec
        self.ledger = Ledger(
            study.out / LEDGER_FILE,
            prices={name: p.price() for name, p in spec.prices.items()},
            budget=spec.study.budget,
        )
        self.steps = steps(study)
        self._started = time.monotonic()
        self._done_here: list[float] = []
        self._current = ""
        self._shown = 0.0

    # ------------------------------------------------------------------ progress
    def snapshot(self) -> Snapshot:
        """Where the study stands now."""
        counts = {stage: StageCount() for stage in STAGES}
        remaining = 0
        for step in self.steps:
            count = counts[step.stage]
            count.total += 1
            if state(self.study, step) == "done":
                count.done += 1
            elif not step.human:
                remaining += 1
        total = self.ledger.total()
        elapsed = time.monotonic() - self._started
        pace = sum(self._done_here) / len(self._done_here) if self._done_here else None
        return Snapshot(
            stages={k: v for k, v in counts.items() if v.total},
            current=self._current,
            calls=total.calls,
            replayed=total.replayed,
            input_tokens=total.usage.input_tokens,
            output_tokens=total.usage.output_tokens,
            cost=total.cost,
            elapsed=elapsed,
            left=None if pace is None else pace * remaining,
        )

    def _show(self, *, every: float = 0.0) -> None:
        # After a model call at most a few times a second: a snapshot reads the ledger.
        now = time.monotonic()
        if every and now - self._shown < every:
            return
        self._shown = now
        self.progress.update(self.snapshot())

    # ------------------------------------------------------------------ models
    def model(
        self,
        name: str,
        *,
        stage: str,
        condition: str,
        cell: str = "",
        seed: int | None = None,
        batch: bool = False,
    ) -> Model:
        """A model whose calls go through the ledger under ``condition`` (its name for
        people) and ``cell`` (``batch``: priced as batched)."""
        api = self.ledger.api(
            self.api_factory(name), stage=stage, condition=condition, cell=cell, batch=batch
        )
        return Model(api, seed=seed, on_call=lambda record: self._show(every=SHOW_EVERY))

    # ------------------------------------------------------------------ the run
    def run(self) -> RunResult:
        """Make every missing step; stop at a human step or at the budget. A second run
        of the same study at the same time is refused (:class:`OutputInUseError`)."""
        self.study.out.mkdir(parents=True, exist_ok=True)
        with output_lock(self.study.out, folder=True):
            return self._run()

    def _run(self) -> RunResult:
        self._check_held_out()
        self._show()
        index = -1
        made = False
        while index + 1 < len(self.steps):
            index += 1
            step = self.steps[index]
            # The report is made again whenever this run made something it reads.
            again = made and step.stage == "report"
            if state(self.study, step) == "done" and not again:
                continue
            made = True
            self._current = f"{step.stage}: {step.label}"
            self._show()
            began = time.monotonic()
            try:
                ready = self._do(step)
            except BudgetExceeded as error:
                return self._budget_stop(error, index)
            except BaseExceptionGroup as group:
                budget = group.subgroup(BudgetExceeded)
                if budget is None:
                    raise
                return self._budget_stop(_first(budget), index)
            finally:
                self._settle(step)
            if self.ledger.stopped is not None:
                return self._budget_stop(self.ledger.stopped, index)
            if not ready:
                return RunResult(
                    finished=False,
                    waiting=step,
                    next=self._instructions(step),
                    undone=[s for s in self.steps[index:] if state(self.study, s) != "done"],
                    ledger=self.ledger,
                )
            mark_done(self.study, step)
            if step.stage == "topics":
                # The chains' files are named by their topics, known only now.
                self.steps = steps(self.study)
            if not step.human:
                self._done_here.append(time.monotonic() - began)
            self._show()
        self._current = ""
        self._show()
        return RunResult(finished=True, ledger=self.ledger)

    def _settle(self, step: Step) -> None:
        """Put what concurrent calls appended in a stable order (they end in any order):
        the ledger, and an LLM judge's judgements or a cohort's ratings."""
        self.ledger.settle()
        if step.stage in ("judges", "align") and step.output.suffix == ".jsonl":
            sort_jsonl(step.output, _record_order)

    def _budget_stop(self, error: BudgetExceeded, index: int) -> RunResult:
        return RunResult(
            finished=False,
            budget=error,
            undone=[s for s in self.steps[index:] if state(self.study, s) != "done"],
            ledger=self.ledger,
        )

    def _do(self, step: Step) -> bool:
        """Make ``step``; False when a person must act first."""
        if step.stage == "topics":
            self.drive(self._topics, False)
        elif step.stage == "chains":
            self._chain(step)
        elif step.stage == "chats":
            return self._chat(step)
        elif step.stage == "questionnaire":
            self._questionnaire()
        elif step.id == "rating task":
            self._rating_task()
        elif step.stage == "align":
            self._cohort(step.label)
        elif step.stage == "judges":
            self._judge(step.label)
        elif step.id == "survey export":
            self._survey_export()
        elif step.id == "survey answers":
            return self._survey_answers(step)
        elif step.stage == "report":
            write_study_report(self.study, self.ledger)
        return True

    # ------------------------------------------------------------------ steps
    async def _topics(self) -> None:
        pseudo = self.study.spec.pseudo
        async with self.model(pseudo.topics_model, stage="topics", condition="") as model:
            topics = await generate_topics(
                model, pseudo.topics_count, seed=self.study.spec.study.seed
            )
        write_topics(
            self.study.out / TOPICS_FILE,
            topics,
            source=f"{len(topics)} topics generated by {pseudo.topics_model}",
            dated=False,
        )

    def _chain(self, step: Step) -> None:
        topics = chain_topics(self.study)
        cell = next(
            c for c in cells(self.study) if chain_step_id(chain_key(self.study, c)) == step.id
        )
        spec = chain_spec(self.study, cell, topics)
        out = self.study.out / PSEUDO_FOLDER

        opened: list[Model] = []

        def model_for(name: str) -> Model:
            chain = chain_name(cell.persona, cell.model, cell.mode, cell.n)
            model = self.model(name, stage="chains", condition=chain, seed=spec.seed)
            opened.append(model)
            return model

        async def main() -> None:
            try:
                report = await run_chains(
                    [spec], out, personas=self.personas, models=model_for, display=NullDisplay()
                )
            finally:
                # run_chains leaves its models open (sdtt generate shares them): a
                # served model's connections are closed here.
                for model in opened:
                    await model.aclose()
            if self.ledger.stopped is not None:
                raise self.ledger.stopped
            if report.failed:
                error = f"chain {spec.chain_id} failed: {report.failed[0].error}"
                provider = provider_of(spec.model)
                if provider is not None and provider.scripted:
                    # The same spec fails the same way: say what in it to change.
                    where = "[pseudo] model" if self.study.spec.pseudo.model else "design.models"
                    error += (
                        f' In the spec: set [pseudo] model = "mock/chatty" (a model that '
                        f"writes chat lines; now {spec.model}, from {where}), or lower N in "
                        f"design.turns (now {cell.n}; N = 0 needs no pseudo-dialogue)."
                    )
                raise SdttError(error)

        self.drive(main, False)

    def chain_file(self, cell: Cell) -> Path | None:
        """The pseudo-dialogue file of ``cell`` (None when N = 0)."""
        if cell.n == 0:
            return None
        spec = chain_spec(self.study, cell, chain_topics(self.study))
        return chain_path(self.study.out / PSEUDO_FOLDER, spec)

    def _chat(self, step: Step) -> bool:
        cell = _cell_of(self.study, step)
        folder = step.output
        if step.human:
            return any(_transcripts(folder))
        partial = folder / ".partial"
        shutil.rmtree(partial, ignore_errors=True)  # a chat cut short is held again
        partial.mkdir(parents=True)
        pseudo_file = self.chain_file(cell)
        pseudo: list[Message] = []
        n = 0
        if pseudo_file is not None:
            pseudo = load_pseudo_messages(pseudo_file)
            n = count_pseudo_turns(pseudo_file)
            if cell.mode == "pingpong" and has_runs(pseudo):
                pseudo = convert_to_pingpong(pseudo).messages
        seed = self.study.spec.study.seed
        interrogator_name = self.study.spec.design.interrogator
        condition = Condition(
            persona=cell.persona,
            model=cell.model,
            mode=cell.mode,
            # Relative to the study, so a study run in another folder records the same.
            pseudo=study_path(pseudo_file, self.study.out) if pseudo_file else None,
            pseudo_turns=n,
            live_turns=cell.x,
            seed=seed,
            interrogator=interrogator_name,
        )
        started = _start(self.study.spec.study.start) + timedelta(hours=cell.number - 1)
        session_id = new_session_id(started, f"{self.study.spec.study.name}:{cell.label}")

        name = condition_name(condition, x=cell.x, n=cell.n, turns=cell.total)

        async def main() -> None:
            bot_model = self.model(
                cell.model, stage="chats", condition=name, cell=cell.id, seed=seed
            )
            asker = self.model(
                interrogator_name,
                stage="chats",
                condition=name,
                cell=cell.id,
                seed=role_seed(condition, INTERROGATOR),
            )
            async with bot_model, asker:
                interrogator = llm_interrogator(
                    for_virtual_clock(asker),
                    topic=cell.topic,
                    mode=cell.mode,
                    config=interrogator_config(BOT_CONFIG),
                    seed=role_seed(condition, INTERROGATOR),
                )
                result = await simulate_condition(
                    condition,
                    bot_model,
                    interrogator,
                    turns=cell.x,
                    options=Options(virtual_clock=True),
                    persona=self.personas(cell.persona),
                    pseudo=pseudo,
                    out_dir=partial,
                    session_id=session_id,
                    topic=cell.topic,
                    meta={"topic": cell.topic, "study": self.study.spec.study.name},
                    started=started,
                    max_duration=600.0 * cell.x,
                )
            if result.turns == 0:
                # As sdtt simulate: a chat whose every call failed is no chat to judge.
                raise SdttError(
                    f"no turn of the chat {cell.label} was answered: the model calls failed "
                    f"({result.bot_errors} bot, {result.interrogator_errors} interrogator "
                    "error(s)). Run again when the models answer: it resumes."
                )

        self.drive(main, True)
        for path in partial.iterdir():
            path.replace(folder / path.name)
        partial.rmdir()
        return True

    def _check_held_out(self) -> None:
        """With human = "persona", every persona must hold chats out of its prompt: said
        before any chat is run, not at the questionnaire after all of them."""
        if self.study.spec.questionnaire.human.strip().lower() != PERSONA:
            return
        for name in self.study.spec.design.personas:
            if not self.personas(name).info.held_out:
                raise InputError(
                    f"persona {name!r} holds out none of its conversations, so human = "
                    "'persona' would have no chat of the person that is not in the bot's "
                    "prompt.",
                    path=self.study.path,
                    field="design.personas",
                    hint="Say held_out = K under [questionnaire] (the run holds K chats "
                    f"out), or run 'sdtt persona hold-out {name} --count K' and list the "
                    "persona it writes in design.personas.",
                )

    def _questionnaire(self) -> None:
        spec = self.study.spec
        q = spec.questionnaire
        pairs = []
        for cell in cells(self.study):
            for transcript in _transcripts(self.study.out / "chats" / cell.id):
                pairs.append(PairSpec(bot=str(transcript), human=q.human))
        build = QuestionnaireSpec(
            name=spec.study.name,
            seed=q.seed,
            total_turns=sorted({n + x for n, x in spec.design.turns}),
            max_live_turns=max(x for _, x in spec.design.turns),
            pairs=pairs,
            catch_pairs=q.catch_pairs,
            topic_check=q.topic_check,
            timestamps=q.timestamps,
            design=DesignSpec(pairs_per_judge=q.pairs_per_judge),
        )
        build.check()
        result = build_study(build, base=self.study.folder, persona_loader=self.personas)
        folder = self.study.out / QUESTIONNAIRE_FOLDER
        partial = folder.with_name(folder.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        save_study(partial, result.questionnaire, relative_key(result.key, self.study.out))
        shutil.rmtree(folder, ignore_errors=True)
        partial.replace(folder)

    def _judge(self, name: str) -> None:
        judge = self.study.spec.judges[name]
        folder = self.study.out / QUESTIONNAIRE_FOLDER
        questionnaire = load_questionnaire(folder)
        key = load_key(folder, questionnaire)
        out = self.study.out / JUDGEMENTS_FOLDER / f"{name}.jsonl"
        earlier = read_judgements(out) if out.exists() else []

        # The calls are priced per condition and cell: each cell's pairs are judged apart
        # (the same records: a pair's orders depend on its id alone). A one-shot judge's
        # example is drawn from the whole questionnaire, so it judges all at once.
        groups: dict[tuple[str, str], list[PairItem]] = {}
        by_facts = {_cell_facts(cell): cell.id for cell in cells(self.study)}
        for item in questionnaire.items:
            truth = key.items.get(item.id)
            group = ("", "")
            if judge.kind != "one-shot":
                test = truth is not None and truth.kind == "test"
                group = ("catch pairs", "")
                if truth is not None and test:
                    bot = truth.bot.condition or Condition()
                    facts = (bot.persona, bot.model, bot.mode, bot.pseudo_turns)
                    cell = by_facts.get((*facts, bot.live_turns, truth.topic), "")
                    group = (condition_of(truth), cell)
            groups.setdefault(group if group[0] else (f"judge {name}", ""), []).append(item)

        async def one(
            model: Generator, items: list[PairItem], writer: JsonlWriter, every: int | None
        ) -> None:
            await run_llm_judge(
                model,
                questionnaire.model_copy(update={"items": items}),
                key,
                kind=judge.kind,
                run=name,
                attempts=judge.attempts,
                orders=judge.orders,
                seed=judge.seed,
                settled=settled_keys(earlier),
                on_judgement=writer.write,
                concurrency=every or DEFAULT_CONCURRENCY,
            )

        async def direct(
            group: tuple[str, str], items: list[PairItem], writer: JsonlWriter
        ) -> None:
            condition, cell = group
            async with self.model(
                judge.model, stage="judges", condition=condition, cell=cell, batch=judge.batch
            ) as model:
                await one(model, items, writer, None)

        async def main() -> None:
            with JsonlWriter(out) as writer:
                if not judge.batch or self.replay:
                    async with trio.open_nursery() as nursery:
                        for group, items in groups.items():
                            nursery.start_soon(direct, group, items, writer)
                    return
                # One batched model for every condition, so a round's calls of all of
                # them go in one job; the ledger sits above it, so an answer recorded
                # by an earlier run is never sent again, and each is priced per condition
                # at the batch discount.
                settings = BatchSettings(
                    ledger_path(out), poll_interval=judge.poll, retries=judge.batch_retries
                )
                async with (
                    Model(self.api_factory(judge.model)) as model,
                    judge_model(model, settings) as (handle, every),
                    trio.open_nursery() as nursery,
                ):
                    for (condition, cell), items in groups.items():
                        api = self.ledger.api(
                            handle, stage="judges", condition=condition, cell=cell, batch=True
                        )
                        nursery.start_soon(one, api, items, writer, every)

        self.drive(main, False)

    def _rating_task(self) -> None:
        align = self.study.spec.align
        rating = RatingSpec(
            unit=align.unit,
            excerpt_turns=align.excerpt_turns,
            items_per_source=align.items_per_source,
            sources=[RatingSource(study=QUESTIONNAIRE_FOLDER)],
        )
        spec = QuestionnaireSpec(name=self.study.spec.study.name, seed=align.seed, rating=rating)
        # The answer key's paths are relative to the study (relative_key).
        built = build_rating_task(spec, self.study.out)
        save_rating_task(self.study.out / ALIGN_FOLDER, built.task, built.key)

    def _cohort(self, name: str) -> None:
        section = self.study.spec.cohorts[name]
        folder = self.study.out / ALIGN_FOLDER
        task = load_rating_task(folder)
        key = load_rating_key(folder, task)
        out = ratings_path(self.study, name)
        settled = settled_rating_keys(read_ratings(out)) if out.exists() else set()
        made: list[bool] = []

        def record(writer: JsonlWriter) -> Callable[[Rating], None]:
            def write(rating: Rating) -> None:
                made.append(is_model_error(rating))
                writer.write(rating)

            return write

        async def one(cohort: Cohort, model: Generator, writer: JsonlWriter, every: int) -> None:
            await run_cohort(
                model,
                task,
                key,
                cohort,
                attempts=section.attempts,
                concurrency=every,
                settled=settled,
                on_rating=record(writer),
            )

        async def direct(cohort: Cohort, writer: JsonlWriter) -> None:
            async with self.model(
                cohort.model, stage="align", condition=cohort.name, batch=section.batch
            ) as model:
                await one(cohort, model, writer, DEFAULT_CONCURRENCY)

        async def main() -> None:
            out.parent.mkdir(parents=True, exist_ok=True)
            with JsonlWriter(out) as writer:
                if not section.batch or self.replay:
                    async with trio.open_nursery() as nursery:
                        for cohort in section.cohorts():
                            nursery.start_soon(direct, cohort, writer)
                    return
                # As a batched judge: one batched model per model name, the ledger above
                # it, so an answer an earlier run recorded is never sent again.
                settings = BatchSettings(
                    ledger_path(out), poll_interval=section.poll, retries=section.batch_retries
                )
                async with AsyncExitStack() as stack, trio.open_nursery() as nursery:
                    handles: dict[str, tuple[Generator, int | None]] = {}
                    for model_name in section.models:
                        model = await stack.enter_async_context(Model(self.api_factory(model_name)))
                        handles[model_name] = await stack.enter_async_context(
                            judge_model(model, settings)
                        )
                    for cohort in section.cohorts():
                        handle, every = handles[cohort.model]
                        api = self.ledger.api(
                            handle, stage="align", condition=cohort.name, batch=True
                        )
                        nursery.start_soon(one, cohort, api, writer, every or DEFAULT_CONCURRENCY)

        self.drive(main, False)
        if self.ledger.stopped is not None:
            # A rater records a call the budget refused as failed; a rerun asks it again.
            raise self.ledger.stopped
        if made and all(made):
            # As sdtt align judge: a cohort whose every call failed has rated nothing.
            raise SdttError(
                f"every call of [cohorts.{name}] failed; run again when the models answer: "
                "it resumes."
            )

    def _survey_export(self) -> None:
        survey = self.study.spec.survey
        assert survey is not None
        questionnaire = load_questionnaire(self.study.out / QUESTIONNAIRE_FOLDER)
        export_files(questionnaire, [survey.format], self.study.out / SURVEY_FOLDER)

    def answers_file(self) -> Path:
        """Where the survey's answer file is read from."""
        survey = self.study.spec.survey
        assert survey is not None
        if survey.answers:
            return self.study.folder / survey.answers
        return self.study.out / SURVEY_FOLDER / "answers"

    def _survey_answers(self, step: Step) -> bool:
        survey = self.study.spec.survey
        assert survey is not None
        answers = self.answers_file()
        if not answers.exists():
            return False
        folder = self.study.out / QUESTIONNAIRE_FOLDER
        questionnaire = load_questionnaire(folder)
        key = load_key(folder, questionnaire)
        files = sorted(answers.iterdir()) if answers.is_dir() else [answers]
        if not files:
            return False
        result = import_responses(files, survey.format, questionnaire, key)
        write_judgements(step.output, result.judgements)
        return True

    def _instructions(self, step: Step) -> list[str]:
        out = self.study.out
        if step.stage == "chats":
            lines = ["Hold the chats with people, one folder per cell, e.g.:"]
            for cell in cells(self.study):
                if any(_transcripts(out / "chats" / cell.id)):
                    continue
                pseudo = self.chain_file(cell)
                with_pseudo = f" --pseudo {shlex.quote(str(pseudo))}" if pseudo else ""
                persona = self.personas.file(cell.persona)
                lines.append(
                    f"  sdtt chat --persona {shlex.quote(persona)} --model "
                    f"{shlex.quote(cell.model)} --mode {cell.mode}{with_pseudo} --turns {cell.x} "
                    f"--out {shlex.quote(str(out / 'chats' / cell.id))}"
                )
            lines.append(f"then run again: sdtt study run {shlex.quote(str(self.study.path))}")
            return lines
        survey = self.study.spec.survey
        assert survey is not None
        export = out / SURVEY_FOLDER / TOOLS[survey.format].filename
        return [
            f"Field the survey: {export} ({survey.format}), to {survey.judges} judges.",
            f"Put its answer file(s) at {self.answers_file()} (a file, or a folder of them),",
            f"then run again: sdtt study run {shlex.quote(str(self.study.path))}",
        ]


def study_path(path: Path, out: Path) -> str:
    """``path`` as the study records it: relative to the study's folder ``out`` (with
    ``..`` for a file outside it), so the same study run anywhere writes the same bytes."""
    return Path(os.path.relpath(path, out)).as_posix()


def relative_key(key: AnswerKey, out: Path) -> AnswerKey:
    """``key`` with its transcript paths relative to the study (:func:`study_path`)."""

    def relative(info: SourceInfo) -> SourceInfo:
        if info.path is None:
            return info
        return info.model_copy(update={"path": study_path(Path(info.path), out)})

    items = {
        pair: item.model_copy(update={"bot": relative(item.bot), "human": relative(item.human)})
        for pair, item in key.items.items()
    }
    return key.model_copy(update={"items": items})


def _cell_facts(cell: Cell) -> tuple[object, ...]:
    """What tells a cell's bot chat from the others': its condition's persona, model,
    mode, N and X, and its topic (as an answer key records them)."""
    return (cell.persona, cell.model, cell.mode, cell.n, cell.x, cell.topic)


def _record_order(record: dict[str, Any]) -> tuple[str, str]:
    """Judgements by pair, ratings by participant; then by all they hold."""
    first = record.get("pair_id") or record.get("participant") or ""
    return (str(first), json.dumps(record, sort_keys=True, ensure_ascii=False))


def _cell_of(study: Study, step: Step) -> Cell:
    number = int(step.id.rsplit("-", 1)[1])
    return cells(study)[number - 1]


def _transcripts(folder: Path) -> list[Path]:
    """The chat transcripts in a cell's folder (event logs left out)."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*.jsonl") if not p.name.endswith(".events.jsonl"))


def _start(text: str) -> datetime:
    """The spec's start time (checked when the spec was read), in UTC unless it says."""
    start = datetime.fromisoformat(text)
    return (start if start.tzinfo else start.replace(tzinfo=UTC)).replace(microsecond=0)


def _first(group: BaseExceptionGroup[BudgetExceeded]) -> BudgetExceeded:
    first: BaseException = group
    while isinstance(first, BaseExceptionGroup):
        first = first.exceptions[0]
    assert isinstance(first, BudgetExceeded)
    return first
