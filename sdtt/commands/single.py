"""``sdtt single``: single-item Turing-like tests (Zhang, Kreiman et al.).

``build`` a study from conversations (or items), ``export`` it for survey tools,
``import`` judges' answers, let an LLM ``judge`` it, ``score`` it per class and cut, and
make ``machine-chats`` the papers' way. The library does the work (:mod:`sdtt.single`,
:mod:`sdtt.judges.single_item`); this module reads flags, runs trio and prints.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import TYPE_CHECKING

from sdtt.commands.common import EXIT_NOTHING_USABLE
from sdtt.commands.console import CliConsole
from sdtt.commands.single_parser import ANSWERS_FILE
from sdtt.errors import ConfigError, InputError

if TYPE_CHECKING:
    from rich.console import Console

    from sdtt.single.build import SingleKey
    from sdtt.single.items import SingleItem
    from sdtt.tasks.single_task import ItemView, SingleAnswer, Verdict

EXPORT_FOLDER = "export"
ITEMS_FILE = "items.jsonl"
CSV_HEADER = (
    "judges", "class", "cut", "trials", "judge_count", "p_hh", "p_hh_low", "p_hh_high",
    "p_mm", "p_mm_low", "p_mm_high", "detectability", "detectability_low", "detectability_high",
)  # fmt: skip
"""Columns of ``sdtt single score --csv``: numbers as numbers (NaN where none)."""


def _console() -> Console:

    return CliConsole(highlight=False)


def _cuts(text: str) -> list[int]:
    try:
        cuts = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise InputError(
            f"--cuts {text!r} is not a comma-separated list of whole numbers.",
            field="--cuts",
            hint="Write it as 3,6,9,12.",
        ) from None
    if not cuts or min(cuts) < 1:
        raise InputError("--cuts must list positive numbers of exchanges.", field="--cuts")
    return cuts


def _is_items_file(path: Path) -> bool:
    """Whether a file holds items (records with a truth) rather than transcripts."""
    from sdtt.jsonl import read_jsonl

    for _, record in read_jsonl(path):
        return "truth" in record and "type" not in record
    return False


def _items(sources: list[Path], cuts: list[int]) -> tuple[list[SingleItem], list[tuple[str, int]]]:
    from sdtt.dialogue.store import read_transcripts
    from sdtt.single.items import cut_items, read_items

    items: list[SingleItem] = []
    skipped: list[tuple[str, int]] = []
    for path in sources:
        if _is_items_file(path):
            items += read_items(path)
        else:
            found, left = cut_items(read_transcripts(path), cuts)
            items += found
            skipped += left
    return items, skipped


def _check_rebuild(out: Path, force: bool) -> None:
    """Refuse to build over a study unless ``--force``, and over one with answers at all:
    its item ids and forms would change under the answers already collected."""
    from sdtt.single.build import TASK_FILE

    if (out / ANSWERS_FILE).exists():
        raise ConfigError(
            f"{out} holds answers to the study built there ({ANSWERS_FILE}); "
            "rebuilding would change the items they answer. Build into another --out."
        )
    if (out / TASK_FILE).exists() and not force:
        raise ConfigError(
            f"{out} holds a study; pass --force to replace it, or choose another --out."
        )


def run_build(args: argparse.Namespace) -> int:
    """``sdtt single build``."""
    from collections import Counter

    from sdtt.files import output_folder
    from sdtt.redact import shown
    from sdtt.single.build import (
        KEY_FILE,
        TASK_FILE,
        StudySettings,
        build_study,
        chat_leaks,
        save_study,
    )
    from sdtt.single.catch import catch_items
    from sdtt.single.items import write_items

    _check_rebuild(args.out, args.force)
    found, skipped = _items(args.sources, _cuts(args.cuts))
    items = [item for item in found if item.catch is None]
    # Catch items given in an items file (the tasks' catch responses) are used as they
    # are; otherwise as many are made from the chats as forms times catch items per form.
    catch = [item for item in found if item.catch is not None]
    if not catch:
        catch = catch_items(items, args.forms * args.catch_per_judge, args.seed)
    settings = StudySettings(
        forms=args.forms,
        per_form=args.per_judge,
        catch_per_form=args.catch_per_judge,
        confidence=args.confidence,
        reason=args.reason,
        topic_check=args.topic_check,
        seed=args.seed,
    )
    task, key = build_study(items, settings, catch=catch)
    folder = output_folder(args.out)
    save_study(folder, task, key)
    write_items(folder / ITEMS_FILE, [*items, *catch])
    console = _console()
    classes = Counter(item.klass for item in items)
    console.print(
        f"{len(items)} items from {len({i.source for i in items})} sources ("
        + ", ".join(f"{count} {klass}" for klass, count in sorted(classes.items()))
        + f"), {len(catch)} catch items, {len(task.forms)} form(s) of "
        f"{args.per_judge + args.catch_per_judge}"
    )
    if skipped:
        console.print(
            f"[yellow]note:[/] {len(skipped)} cut(s) longer than their conversation left out "
            f"(e.g. {shown(skipped[0][0])} at {skipped[0][1]})"
        )
    for warning in chat_leaks(items):
        console.print(f"[yellow]warning:[/] {shown(warning)}")
    for name in (TASK_FILE, KEY_FILE, ITEMS_FILE):
        console.print(f"  {shown(str(folder / name))}")
    return 0


def run_export(args: argparse.Namespace) -> int:
    """``sdtt single export``."""
    from sdtt.files import output_folder, write_text_atomic
    from sdtt.redact import shown
    from sdtt.single.build import load_task
    from sdtt.surveys.tool import ExportOptions
    from sdtt.surveys.tools import TOOLS, either, single_tools

    task = load_task(args.study)
    out = output_folder(args.out or args.study / EXPORT_FOLDER)
    console = _console()
    for name in args.format or single_tools():
        fielded = TOOLS[name].single
        if fielded is None:
            raise InputError(
                f"{name} cannot field a single-item study.",
                field="--format",
                hint=f"Export to {either(single_tools())}.",
            )
        for filename, text in fielded.write(task, ExportOptions(data_url=args.data_url)).items():
            write_text_atomic(out / filename, text)
            console.print(f"  {shown(str(out / filename))}")
    return 0


def _answers_path(args: argparse.Namespace) -> Path:
    from sdtt.files import output_file

    return output_file(args.out or args.study / ANSWERS_FILE)


def run_import(args: argparse.Namespace) -> int:
    """``sdtt single import``."""
    from sdtt.dialogue.record_files import append_records
    from sdtt.lock import output_lock
    from sdtt.redact import shown
    from sdtt.single.build import load_task
    from sdtt.surveys.tools import TOOLS, either, single_tools
    from sdtt.tasks.single_task import read_single_answers

    fielded = TOOLS[args.format].single
    if fielded is None:
        raise InputError(
            f"{args.format} cannot field a single-item study.",
            field="--format",
            hint=f"Import answers from {either(single_tools())}.",
        )
    task = load_task(args.study)
    found = [answer for path in args.files for answer in fielded.read(path, task)]
    out = _answers_path(args)
    with output_lock(out):
        held = {(a.judge_id, a.item) for a in read_single_answers(out)} if out.exists() else set()
        fresh = [a for a in found if (a.judge_id, a.item) not in held]
        append_records(out, fresh)
    console = _console()
    console.print(
        f"{len(fresh)} answer(s) from {len({a.judge_id for a in fresh})} judge(s) -> "
        f"{shown(str(out))}"
        + (f"; {len(found) - len(fresh)} already there, skipped" if len(found) > len(fresh) else "")
    )
    return 0


def pick_example(
    key: SingleKey, task_items: list[ItemView], wanted: str | None
) -> tuple[ItemView, dict[str, Verdict], str]:
    """The one-shot example: the item named ``wanted`` (its readable id), or the longest
    cut of an HM conversation; with its truth and its source."""
    entries = [entry for entry in key.items if entry.catch is None]
    if wanted is not None:
        chosen = next((entry for entry in entries if entry.item == wanted), None)
        if chosen is None:
            raise InputError(
                f"item {wanted!r} is not in this study.",
                field="--example",
                hint="Name an item as items.jsonl names it, e.g. chat7@24.",
            )
    else:
        labelled = [entry for entry in entries if entry.klass == "HM"]
        if not labelled:
            raise InputError(
                "a one-shot judge needs an example, and no conversation has A human and B "
                "a machine.",
                field="--example",
                hint="Name the example item with --example.",
            )
        chosen = max(labelled, key=lambda entry: (entry.cut or 0, entry.item))
    view = next(item for item in task_items if item.id == chosen.id)
    return view, dict(chosen.truth), chosen.source


def run_judge(args: argparse.Namespace) -> int:
    """``sdtt single judge``."""
    import trio

    from sdtt.commands.common import check_base_url
    from sdtt.jsonl import JsonlWriter
    from sdtt.judges.single_item import judge_id_for, judge_task
    from sdtt.lock import output_lock
    from sdtt.models.model import get_model
    from sdtt.redact import shown
    from sdtt.single.build import load_key, load_task
    from sdtt.tasks.single_task import read_single_answers

    check_base_url(args.base_url, [args.model])
    task = load_task(args.study)
    key = load_key(args.study)
    example = None
    items = task.items
    if args.kind == "one-shot":
        view, truth, source = pick_example(key, task.items, args.example)
        example = (view, truth)
        # No cut of the example's conversation is asked about.
        same = {entry.id for entry in key.items if entry.source == source}
        items = [item for item in items if item.id not in same]
    out = _answers_path(args)
    judge_id = judge_id_for(args.model, args.kind)
    existed = out.exists()
    made: list[SingleAnswer] = []
    with output_lock(out):
        # A provider failure is asked again on a rerun; an unreadable answer is not.
        settled = (
            {
                a.item
                for a in read_single_answers(out)
                if a.judge_id == judge_id
                and not (a.exclusion_reason or "").startswith("model_error")
            }
            if existed
            else set()
        )
        items = [item for item in items if item.id not in settled]
        with JsonlWriter(out) as writer:

            def keep(answer: SingleAnswer) -> None:
                writer.write(answer)
                made.append(answer)

            async def main() -> None:
                async with get_model(
                    args.model, base_url=args.base_url, api_key_env=args.api_key_env
                ) as model:
                    await judge_task(
                        model,
                        task,
                        kind=args.kind,
                        example=example,
                        items=items,
                        attempts=args.attempts,
                        concurrency=args.concurrency,
                        on_answer=keep,
                    )

            trio.run(main)
    excluded = sum(a.exclusion_reason is not None for a in made)
    console = _console()
    console.print(
        f"{len(made)} answer(s) by {shown(args.model)} ({args.kind}) -> {shown(str(out))}"
        + (f"; {excluded} without a readable verdict, kept as excluded" if excluded else "")
        + (f"; {len(settled)} from an earlier run kept" if settled else "")
    )
    return EXIT_NOTHING_USABLE if made and excluded == len(made) else 0


def _number(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.2f}"


def _cell(value: float, interval: tuple[float, float]) -> str:
    if math.isnan(value):
        return "-"
    low, high = interval
    return f"{value:.2f}" if math.isnan(low) else f"{value:.2f} [{low:.2f}-{high:.2f}]"


def run_score(args: argparse.Namespace) -> int:
    """``sdtt single score``."""
    import csv
    import io

    from sdtt.commands.score_common import print_escaped_table
    from sdtt.files import write_text_atomic
    from sdtt.redact import shown
    from sdtt.single.build import load_key
    from sdtt.single.scoring import score_single
    from sdtt.tasks.single_task import read_single_answers

    key = load_key(args.study)
    files = args.answers or [args.study / ANSWERS_FILE]
    answers = [answer for path in files for answer in read_single_answers(path)]
    foreign = {a.task for a in answers} - {key.task}
    if foreign:
        raise InputError(
            f"answers to another task ({', '.join(sorted(foreign))}) are in the answer files.",
            hint="Score answers with the study they were given for.",
        )
    scores = score_single(
        answers, key, min_topic_share=args.min_topic_share, reps=args.bootstrap, seed=args.seed
    )
    console = _console()
    header = ["class", "cut", "trials", "p(H|H) [95% CI]", "p(M|M) [95% CI]", "detect. [95% CI]"]
    for group in dict.fromkeys(row.group for row in scores.rows):
        mine = [
            [
                row.klass,
                row.cut,
                str(row.trials),
                _cell(row.p_hh, row.p_hh_interval),
                _cell(row.p_mm, row.p_mm_interval),
                _cell(row.detectability, row.detectability_interval),
            ]
            for row in scores.rows
            if row.group == group
        ]
        print_escaped_table(console, f"Verdicts of {group} judges", header, mine)
    console.print(
        "[dim]detectability = (p(H|H) + p(M|M)) / 2: 0.5 a perfect imitator, 1.0 always "
        "caught; p intervals are Wilson, detectability intervals resample judges (items for "
        "a single LLM judge).[/]"
    )
    test_rows = [
        [
            group,
            name,
            _number(result.statistic),
            _number(result.z),
            f"{result.p:.3g}" if not math.isnan(result.p) else "-",
            "" if corrected is None else f"{corrected:.3g}",
            "/".join(str(n) for n in result.n),
        ]
        for group, name, result, corrected in scores.tests
    ]
    print_escaped_table(
        console,
        "Tests",
        ["judges", "test", "stat.", "z", "p", "Bonf. p", "n"],
        test_rows,
        "Wilcoxon and Mann-Whitney over judges (over items for a single LLM judge); "
        "permutation tests compare trial accuracy between cuts.",
    )
    attention = scores.attention
    caught = "; ".join(
        f"{group}: {hits} of {total}" for group, (hits, total) in attention.catch.items()
    )
    console.print(
        f"attention: {len(attention.judges_out)} judge(s) below the topic threshold left out, "
        f"{attention.wrong_topic_trials} answer(s) with a wrong topic left out, "
        f"{attention.unanswered} verdict(s) unanswered, {attention.excluded_answers} excluded; "
        f"catch items' machines called machines: {caught or 'none shown'}"
    )
    if args.csv is not None:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(CSV_HEADER)
        for row in scores.rows:
            writer.writerow(
                [
                    row.group,
                    row.klass,
                    row.cut,
                    row.trials,
                    row.judges,
                    row.p_hh,
                    *row.p_hh_interval,
                    row.p_mm,
                    *row.p_mm_interval,
                    row.detectability,
                    *row.detectability_interval,
                ]
            )
        write_text_atomic(args.csv, buffer.getvalue())
        console.print(f"  {shown(str(args.csv))}")
    return 0


def run_machine_chats(args: argparse.Namespace) -> int:
    """``sdtt single machine-chats``."""
    import trio

    from sdtt.commands.common import check_base_url
    from sdtt.dialogue.message import Transcript
    from sdtt.dialogue.store import read_transcripts, write_transcripts
    from sdtt.files import output_file
    from sdtt.models.model import get_model
    from sdtt.redact import shown
    from sdtt.single.build import DOMAINS
    from sdtt.single.machine_chats import MachineChatSettings, human_word_counts, machine_chat

    if len(args.model) > 2:
        raise InputError("a chat has two speakers: give --model once or twice.", field="--model")
    if args.out.exists() and not args.force:
        raise ConfigError(
            f"{args.out} exists; pass --force to replace it, or choose another --out."
        )
    check_base_url(args.base_url, args.model)
    counts = tuple(
        count for path in args.lengths_from for count in human_word_counts(read_transcripts(path))
    )
    settings = MachineChatSettings(
        word_counts=counts,
        exchanges=args.exchanges,
        temperature=args.temperature,
        temperature_step=args.temperature_step,
        temperature_max=args.temperature_max,
        min_words=args.min_words,
        seed=args.seed,
    )
    topics = args.topic or list(DOMAINS)
    out = output_file(args.out)
    made: list[Transcript] = []

    async def main() -> None:
        names = [args.model[0], args.model[-1]]
        async with (
            get_model(names[0], base_url=args.base_url, api_key_env=args.api_key_env) as first,
            get_model(names[1], base_url=args.base_url, api_key_env=args.api_key_env) as second,
        ):
            for index in range(args.count):
                made.append(
                    await machine_chat(
                        first,
                        second,
                        settings,
                        chat_id=f"mm-{args.seed}-{index + 1}",
                        topic=topics[index % len(topics)],
                    )
                )

    trio.run(main)
    write_transcripts(out, made)
    cut = sum(r["cut"] for t in made for r in t.meta["generation"]["replies"])
    again = sum(r["attempts"] - 1 for t in made for r in t.meta["generation"]["replies"])
    _console().print(
        f"{len(made)} chat(s) of {args.exchanges} messages -> {shown(str(out))}; "
        f"{cut} repl(ies) cut to length, {again} asked again"
    )
    return 0
