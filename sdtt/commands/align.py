"""``sdtt align``: judge alignment by pairwise similarity ratings and RSA.

``build`` a rating task from a study spec's ``[rating]`` section, ``export`` it for human
judges and ``import`` their answers, let LLM cohorts ``judge`` it, then ``score`` and
``report`` how well each cohort's similarity structure matches the humans'. Heavy
libraries (numpy, scipy, matplotlib) load only inside the subcommands that use them.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sdtt.commands.align_parser import RATINGS_FILE
from sdtt.commands.console import CliConsole
from sdtt.errors import InputError

if TYPE_CHECKING:
    import pandas as pd
    from rich.console import Console

    from sdtt.align.analysis import AlignmentResult
    from sdtt.align.verdicts import VerdictAgreement

EXPORT_FOLDER = "export"


def _console() -> Console:

    return CliConsole(highlight=False)


def run_build(args: argparse.Namespace) -> int:
    """``sdtt align build``."""
    from collections import Counter

    from sdtt.align.task import build_rating_task, save_rating_task
    from sdtt.files import output_folder
    from sdtt.redact import shown
    from sdtt.tasks.study import load_study_spec

    spec = load_study_spec(args.spec)
    built = build_rating_task(spec, args.spec.parent)
    folder = output_folder(args.out)
    files = save_rating_task(folder, built.task, built.key)
    console = _console()
    sides = Counter(entry.side for entry in built.key.items.values())
    forms = len(built.task.forms)
    console.print(
        f"{len(built.task.items)} items ({sides['bot']} bot, {sides['human']} human), "
        f"{len(built.task.pairs)} pairs"
        + (f", {forms} forms" if forms else ", every judge rates every pair")
    )
    for warning in built.warnings:
        console.print(f"[yellow]warning:[/] {shown(warning)}")
    for path in files:
        console.print(f"  {shown(str(path))}")
    return 0


def run_export(args: argparse.Namespace) -> int:
    """``sdtt align export``."""
    from sdtt.align.export import export_task
    from sdtt.align.task import load_rating_task
    from sdtt.redact import shown
    from sdtt.surveys.tools import rating_tools

    task = load_rating_task(args.task)
    out: Path = args.out or args.task / EXPORT_FOLDER
    console = _console()
    for fmt in args.format or rating_tools():
        for path in export_task(task, fmt, out):
            console.print(f"  {shown(str(path))}")
    return 0


def _ratings_path(args: argparse.Namespace) -> Path:
    from sdtt.files import output_file

    return output_file(args.out or args.task / RATINGS_FILE)


def run_import(args: argparse.Namespace) -> int:
    """``sdtt align import``."""
    from sdtt.align.rating_import import import_ratings
    from sdtt.align.ratings import append_ratings, rating_key, read_ratings
    from sdtt.align.task import load_rating_key, load_rating_task
    from sdtt.lock import output_lock
    from sdtt.redact import shown

    task = load_rating_task(args.task)
    key = load_rating_key(args.task, task)
    out = _ratings_path(args)
    found = [r for path in args.files for r in import_ratings(path, task, key, args.format)]
    with output_lock(out):
        held = {rating_key(r) for r in read_ratings(out)} if out.exists() else set()
        fresh = [r for r in found if rating_key(r) not in held]
        append_ratings(out, fresh)
    judges = len({r.judge_id for r in fresh})
    missing = sum(r.rating is None for r in fresh)
    console = _console()
    console.print(
        f"{len(fresh)} rating(s) from {judges} judge(s) -> {shown(str(out))}"
        + (f"; {missing} off the scale, kept as missing" if missing else "")
        + (f"; {len(found) - len(fresh)} already there, skipped" if len(found) > len(fresh) else "")
    )
    return 0


def run_judge(args: argparse.Namespace) -> int:
    """``sdtt align judge``: run the LLM cohorts with a progress bar."""
    from collections.abc import Awaitable, Callable
    from contextlib import AsyncExitStack

    import trio
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from sdtt.align.llm import Cohort, run_cohort
    from sdtt.align.ratings import Rating, is_model_error, read_ratings, settled_rating_keys
    from sdtt.align.task import load_rating_key, load_rating_task
    from sdtt.commands.batch_settings import batch_settings
    from sdtt.commands.common import check_base_url
    from sdtt.commands.failures_last import FailuresLast
    from sdtt.jsonl import JsonlWriter
    from sdtt.judges.batched import EVERY_CALL, BatchSettings, judge_model, stats_text
    from sdtt.lock import output_lock
    from sdtt.models.base import Generator
    from sdtt.models.model import get_model
    from sdtt.redact import shown

    check_base_url(args.base_url, args.model)
    task = load_rating_task(args.task)
    key = load_rating_key(args.task, task)
    cohorts = [
        Cohort(
            model,
            args.participants,
            temperature,
            prompt,
            args.seed,
            identities=args.identities,
            orders=args.orders,
        )
        for model in args.model
        for temperature in args.temperature or [1.0]
        for prompt in args.prompt or ["plain"]
    ]
    out = _ratings_path(args)
    console = _console()
    batch = batch_settings(args, out, console)
    existed = out.exists()
    with output_lock(out):
        settled = settled_rating_keys(read_ratings(out)) if existed else set()
        with (
            JsonlWriter(out) as writer,
            Progress(
                TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), console=console
            ) as progress,
        ):
            answers = FailuresLast[Rating](writer, is_model_error)
            bars = {cohort: progress.add_task(shown(cohort.name), total=None) for cohort in cohorts}

            def done_of(cohort: Cohort) -> Callable[[int, int], None]:
                def done(count: int, total: int) -> None:
                    progress.update(bars[cohort], completed=count, total=total)

                return done

            def judge(cohort: Cohort, model: Generator, concurrency: int) -> Awaitable[Any]:
                return run_cohort(
                    model,
                    task,
                    key,
                    cohort,
                    attempts=args.attempts,
                    concurrency=concurrency,
                    settled=settled,
                    on_rating=answers.record,
                    on_done=done_of(cohort),
                )

            if batch is None:
                for cohort in cohorts:

                    async def main(cohort: Cohort = cohort) -> None:
                        async with get_model(
                            cohort.model, base_url=args.base_url, api_key_env=args.api_key_env
                        ) as model:
                            await judge(cohort, model, args.concurrency)

                    trio.run(main)
                    shown_bar = next(t for t in progress.tasks if t.id == bars[cohort])
                    progress.update(bars[cohort], completed=shown_bar.total or 0)
            else:

                async def batched_main(batch: BatchSettings = batch) -> None:
                    # Every cohort at once, one batched model per model name: a round's
                    # calls of all cohorts and participants of a model go in one job.
                    async with AsyncExitStack() as stack:
                        handles: dict[str, Generator] = {}
                        for name in dict.fromkeys(cohort.model for cohort in cohorts):
                            model = await stack.enter_async_context(
                                get_model(
                                    name, base_url=args.base_url, api_key_env=args.api_key_env
                                )
                            )
                            handles[name], _ = await stack.enter_async_context(
                                judge_model(model, batch)
                            )
                        async with trio.open_nursery() as nursery:
                            for cohort in cohorts:
                                nursery.start_soon(judge, cohort, handles[cohort.model], EVERY_CALL)

                trio.run(batched_main)
            if not answers.every_failed:
                answers.write_held()
    made = answers.made
    if answers.every_failed:
        return answers.nothing_written(out, existed=existed)
    missing = sum(r.rating is None for r in made)
    console.print(
        f"{len(made)} rating(s) by {len(cohorts)} cohort(s) -> {shown(str(out))}"
        + (f"; {missing} without a readable rating, kept as missing" if missing else "")
        + (f"; {len(settled)} from an earlier run kept" if settled else "")
    )
    if batch is not None:
        console.print(stats_text(batch.stats))
    return 0


def _analyse(args: argparse.Namespace) -> tuple[AlignmentResult, VerdictAgreement | None]:
    from sdtt.align.analysis import analyse
    from sdtt.align.ratings import load_ratings
    from sdtt.align.task import load_rating_key, load_rating_task

    task = load_rating_task(args.task)
    key = load_rating_key(args.task, task)
    paths = args.ratings or [args.task / RATINGS_FILE]
    for path in paths:
        if not Path(path).exists():
            raise InputError(
                "rating file not found.",
                path=path,
                hint="Import human ratings ('sdtt align import') or run 'sdtt align judge'.",
            )
    ratings = load_ratings(paths)
    if not ratings:
        raise InputError("no usable ratings to analyse.", path=paths[0])
    if args.permutations < 0:
        raise InputError("must be 0 or more.", field="--permutations")
    sides = {item: entry.side for item, entry in key.items.items()}
    result = analyse(
        task, ratings, item_sides=sides, permutations=args.permutations, seed=args.seed
    )
    verdicts = None
    if args.judgements:
        from sdtt.align.verdicts import verdict_agreement
        from sdtt.commands.score_common import read_table

        verdicts = verdict_agreement(read_table(args.judgements, allow_empty=True), seed=args.seed)
    return result, verdicts


def run_score(args: argparse.Namespace) -> int:
    """``sdtt align score``: the tables in the terminal."""
    from sdtt.align.alignment_report import (
        category_table,
        cohort_table,
        comparison_table,
        individual_table,
        verdict_table,
    )

    console = _console()
    with console.status("comparing matrices..."):
        result, verdicts = _analyse(args)
    tables = [cohort_table(result)]
    if result.comparisons:
        tables += [comparison_table(result), category_table(result), individual_table(result)]
    elif result.cohort("human") is None:
        console.print("[yellow]no human ratings: nothing to align the LLM cohorts with.[/]")
    if verdicts is not None:
        tables.append(verdict_table(verdicts))
    for table in tables:
        print_table(console, table)
    return 0


def print_table(console: Console, table: Any) -> None:
    """A :class:`sdtt.align.alignment_report.Table` as a rich table with its note under it."""
    from sdtt.commands.score_common import print_escaped_table

    print_escaped_table(console, table.title, table.header, table.rows, table.note)


def print_verdict_agreement(console: Console, frame: pd.DataFrame, reps: int) -> None:
    """For ``sdtt score``: LLM judges against human judges, when both judged (``frame``:
    the judgement table)."""
    from sdtt.commands.report import verdict_section

    section = verdict_section(frame, reps=reps)
    if section is not None:
        print_table(console, section)


def run_report(args: argparse.Namespace) -> int:
    """``sdtt align report``: alignment.html and its figures."""
    from sdtt.align.alignment_report import build_alignment_report, write_alignment_report
    from sdtt.files import output_folder
    from sdtt.redact import shown

    console = _console()
    folder = output_folder(args.out)
    with console.status("comparing matrices and drawing..."):
        result, verdicts = _analyse(args)
        report = build_alignment_report(result, folder, verdicts=verdicts, title=args.title)
        files = write_alignment_report(report, folder)
    for path in files:
        console.print(f"  {shown(str(path))}")
    return 0
