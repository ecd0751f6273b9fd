"""``sdtt judge``: let an LLM judge a built study, writing judgement records."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import trio
from rich.table import Table

from sdtt.commands.batch_settings import batch_settings
from sdtt.commands.common import check_base_url
from sdtt.commands.console import CliConsole
from sdtt.commands.failures_last import FailuresLast
from sdtt.commands.judge_parser import DEFAULT_OUT
from sdtt.commands.judge_reveal import run_reveal
from sdtt.errors import InputError
from sdtt.files import output_file
from sdtt.jsonl import JsonlWriter
from sdtt.judges.batched import BatchSettings, judge_model, stats_text
from sdtt.judges.llm import judge_id_for, run_llm_judge
from sdtt.judges.llm_options import DEFAULT_ATTEMPTS, DEFAULT_CONCURRENCY, JudgeKind, OrderPolicy
from sdtt.lock import output_lock
from sdtt.models.model import get_model
from sdtt.questionnaires.fielded import check_same_build, note_scored
from sdtt.redact import shown
from sdtt.tasks.judgements import (
    Judgement,
    JudgementKey,
    is_model_error,
    read_judgements,
    settled_keys,
)
from sdtt.tasks.questionnaire import load_key, load_questionnaire


def judge_study(
    study: Path,
    model_name: str,
    *,
    kind: JudgeKind = "paired",
    attempts: int = DEFAULT_ATTEMPTS,
    run_label: str | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    orders: OrderPolicy = "both",
    seed: int = 0,
    base_url: str | None = None,
    settled: Collection[JudgementKey] = (),
    on_judgement: Callable[[Judgement], None] | None = None,
    api_key_env: str | None = None,
    batch: BatchSettings | None = None,
) -> list[Judgement]:
    """Run one LLM judge over a study folder and return its new judgements.

    ``settled`` and ``on_judgement`` are passed to
    :func:`~sdtt.judges.llm.run_llm_judge` (resume, and write each answer as it comes);
    with ``batch`` the calls go through the provider's batch API.
    """
    questionnaire = load_questionnaire(study)
    key = load_key(study, questionnaire)

    async def main() -> list[Judgement]:
        async with (
            get_model(model_name, base_url=base_url, api_key_env=api_key_env) as model,
            judge_model(model, batch) as (judge, every),
        ):
            return await run_llm_judge(
                judge,
                questionnaire,
                key,
                kind=kind,
                run=run_label,
                attempts=attempts,
                concurrency=every or concurrency,
                orders=orders,
                seed=seed,
                settled=settled,
                on_judgement=on_judgement,
            )

    return trio.run(main)


def run_classifier(args: argparse.Namespace) -> int:
    """Cross-validate the classifier judge on a study and print a table."""
    # numpy, scikit-learn and pandas load only for this command.
    from sdtt.analysis.format import percent
    from sdtt.judges.classifier import cross_validate, study_examples

    questionnaire = load_questionnaire(args.study)
    key = load_key(args.study, questionnaire)
    examples = study_examples(questionnaire, key, args.level, group_by=args.group_by)
    table = Table(
        title=f"Classifier judge ({args.level}s, cross-validation grouped by {args.group_by})"
    )
    columns = ("features", "examples", "groups", "folds", "accuracy", "detectability", "bot")
    for name in (*columns, "human"):
        table.add_column(name, justify="left" if name == "features" else "right")
    console = CliConsole(highlight=False)
    for features in [f.strip() for f in args.features.split(",") if f.strip()]:
        with console.status(f"cross-validating {shown(features)}..."):
            result = cross_validate(examples, features, level=args.level, folds=args.folds)
        table.add_row(
            shown(features),
            str(result.examples),
            str(result.groups),
            str(result.folds),
            percent(result.accuracy),
            percent(result.detectability),
            percent(result.bot_recall),
            percent(result.human_recall),
        )
    console.print(table)
    console.print("[dim]detectability = mean of the bot and human recalls; 50% = chance[/]")
    return 0


@contextmanager
def _removed_if_empty(out: Path, *, keep: bool) -> Iterator[None]:
    # A run stopped before its first answer (a hung server, Ctrl-C) leaves no empty file.
    try:
        yield
    finally:
        if not keep:
            with suppress(OSError):
                if out.stat().st_size == 0:
                    out.unlink()


def _refuse_batch_options(args: argparse.Namespace) -> None:
    """The classifier calls no model: a batch option given with it would be silently
    ignored, so it is refused instead."""
    given = (
        ("--batch", args.batch),
        ("--poll", args.poll is not None),
        ("--batch-retries", args.batch_retries is not None),
    )
    for flag, is_given in given:
        if is_given:
            raise InputError(
                f"{flag} applies to LLM judges; --classifier calls no model.",
                hint=f"Leave out {flag}, or judge with --model instead of --classifier.",
            )


def run(args: argparse.Namespace) -> int:
    """Judge a study from parsed arguments; exit 1 when every call failed."""
    if args.classifier:
        _refuse_batch_options(args)
        return run_classifier(args)
    if args.model is None:
        raise InputError(
            "say which judge to use.", hint="Give --model provider/model or --classifier."
        )
    check_base_url(args.base_url, [args.model])
    if args.reveal:
        return run_reveal(args)
    console = CliConsole(highlight=False)
    out: Path = output_file(args.out or args.study / DEFAULT_OUT)
    batch = batch_settings(args, out, console)
    key = load_key(args.study, load_questionnaire(args.study))  # a bad study fails first
    existed = out.exists()
    with output_lock(out):
        earlier = read_judgements(out) if existed else []
        check_same_build(earlier, key, out)
        # Before the first answer, so the study is never rebuilt under a judged file.
        note_scored(args.study, out, command="sdtt judge")
        with (
            _removed_if_empty(out, keep=existed),
            JsonlWriter(out) as writer,
            console.status(f"{shown(args.model)} is judging..."),
        ):
            answers = FailuresLast[Judgement](writer, is_model_error)
            judgements = judge_study(
                args.study,
                args.model,
                kind=args.judge,
                attempts=args.attempts,
                run_label=args.run,
                concurrency=args.concurrency,
                orders=args.orders,
                seed=args.seed,
                base_url=args.base_url,
                api_key_env=args.api_key_env,
                settled=settled_keys(earlier),
                on_judgement=answers.record,
                batch=batch,
            )
            if not answers.every_failed:
                answers.write_held()
        if answers.every_failed:
            return answers.nothing_written(out, existed=existed)
    judge_id = judge_id_for(args.model, args.judge, args.run, args.orders)
    kept = sum(1 for j in earlier if j.judge_id == judge_id and not is_model_error(j))
    excluded = [j for j in judgements if j.excluded]
    answered = [j for j in judgements if j.correct is not None and j.pair_kind == "test"]
    correct = sum(bool(j.correct) for j in answered)
    console.print(
        f"{len(judgements)} judgement(s) by {shown(args.model)} ({args.judge}) -> {shown(str(out))}"
    )
    if kept:
        console.print(f"  resumed: {kept} judgement(s) from an earlier run kept, not asked again")
    console.print(f"  test pairs answered: {len(answered)}, found the AI in {correct}")
    if excluded:
        console.print(f"  [yellow]excluded:[/] {len(excluded)} (non-compliant, errors or ties)")
    if batch is not None:
        console.print(f"  {stats_text(batch.stats)}")
    console.print(f"Score them with: sdtt score {shown(shlex.quote(str(out)))}")
    return 0
