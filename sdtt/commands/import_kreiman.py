"""``sdtt import-kreiman``: the Kreiman lab's released files as sdtt records."""

from __future__ import annotations

import argparse
from dataclasses import asdict
from pathlib import Path

from rich.console import Console
from rich.table import Table

from sdtt.beliefs.traces import BeliefTrace
from sdtt.commands.console import CliConsole
from sdtt.commands.single_common import check_out, rate_text, save_json_lines, save_responses
from sdtt.dialogue.record_files import write_records
from sdtt.dialogue.store import write_transcripts
from sdtt.single.response import Truth
from sdtt.single.theirdata.exchange_verdicts import read_verdicts
from sdtt.single.theirdata.pages import (
    CLASSES,
    read_class_labels,
    read_conversation_folder,
)
from sdtt.single.theirdata.psiturk import (
    KreimanJudges,
    is_participants_table,
    read_compiled,
    read_participants,
    read_psiturk,
)
from sdtt.single.theirdata.response_files import read_groundtruth, read_response_file
from sdtt.single.theirdata.trial_scores import TrialScores, judged_human, score_trials


def _console(console: Console | None) -> Console:
    return console or CliConsole(highlight=False)


def run_responses(args: argparse.Namespace, console: Console | None = None) -> int:
    """One agent's response file."""
    check_out(args.out, args.force)
    truth: Truth = "human" if args.human else "machine"
    records = read_response_file(args.file, args.task, agent=args.agent, truth=truth)
    save_responses(_console(console), args.out, records, f"responses of {args.agent}")
    return 0


def run_groundtruth(args: argparse.Namespace, console: Console | None = None) -> int:
    """A ground-truth dictionary."""
    check_out(args.out, args.force)
    records = read_groundtruth(args.file, args.task)
    save_responses(_console(console), args.out, records, "responses")
    return 0


def run_conversations(args: argparse.Namespace, console: Console | None = None) -> int:
    """A folder of conversation files."""
    check_out(args.out, args.force)
    labels = read_class_labels(args.labels) if args.labels else None
    transcripts = read_conversation_folder(args.folder, labels)
    write_transcripts(args.out, transcripts)
    unlabelled = sum("class" not in t.meta for t in transcripts)
    note = f" ({unlabelled} without a class label)" if unlabelled else ""
    _console(console).print(f"Wrote {len(transcripts)} transcripts to {args.out}{note}.")
    return 0


def read_judges(path: Path, questions: Path | None = None) -> tuple[KreimanJudges, int]:
    """Their judges from any of their releases, by its shape: the compiled ``.json``,
    psiTurk's participants table (``.db``, or a CSV with a ``datastring`` column) or
    ``trialdata.csv``; with the number of participants left out for having no data."""
    if path.suffix.lower() == ".json":
        return read_compiled(path), 0
    if is_participants_table(path):
        return read_participants(path)
    return read_psiturk(path, questions), 0


def run_psiturk(args: argparse.Namespace, console: Console | None = None) -> int:
    """Judges' trials and demographics."""
    check_out(args.out, args.force)
    judges, empty = read_judges(args.file, args.questions)
    rows: list[object] = [{"record": "trial", **asdict(t)} for t in judges.trials]
    rows += [
        {"record": "demographics", "worker": worker, **answers}
        for worker, answers in judges.demographics.items()
    ]
    save_json_lines(args.out, rows)
    shown = _console(console)
    skipped = f" ({empty} participants with no data left out)" if empty else ""
    if judges.restarted:
        dropped = sum(judges.restarted.values())
        names = ", ".join(sorted(judges.restarted)[:3])
        skipped += (
            f" ({len(judges.restarted)} restarted sessions, {names}: the {dropped} trials "
            "of their earlier runs left out, as their questiondata scores the last run)"
        )
    shown.print(
        f"Wrote {len(judges.trials)} trials of {len({t.worker for t in judges.trials})} judges "
        f"and {len(judges.demographics)} judges' demographics to {args.out}{skipped}."
    )
    labels = read_class_labels(args.labels) if args.labels else None
    if labels is not None or any(t.true_label for t in judges.trials):
        scores = score_trials(judges.trials, labels)
        shown.print(scores_table(scores))
        mean, spread, judged = scores.judge_mean()
        if judged:
            plural = "s" if judged != 1 else ""
            shown.print(
                f"Mean detectability of the {judged} judge{plural}: {mean:.3f} (sd {spread:.3f})."
            )
        if scores.catch_trials:
            shown.print(
                f"Catch trials (left out above): {scores.catch_trials}; machine speakers "
                f"judged machine p(M|M) {rate_text(scores.catch.rate('M', 'M'))}."
            )
    return 0


def scores_table(scores: TrialScores) -> Table:
    """Per class: speakers judged, judged human, p(H|H), p(M|M), detectability."""
    note = f" ({scores.unlabelled} unlabelled trials left out)" if scores.unlabelled else ""
    table = Table(title=f"Judges' verdicts per speaker{note}")
    for column in ("class", "speakers", "judged human", "p(H|H)", "p(M|M)", "detectability"):
        table.add_column(column, justify="right")
    for name in (*CLASSES, "all"):
        tally = scores.by_class.get(name)
        if tally is None:
            continue
        table.add_row(
            name,
            str(tally.hh + tally.mh + tally.hm + tally.mm),
            rate_text(judged_human(tally)),
            rate_text(tally.rate("H", "H")),
            rate_text(tally.rate("M", "M")),
            rate_text(tally.detectability),
        )
    return table


def run_compiled(args: argparse.Namespace, console: Console | None = None) -> int:
    """Their compiled single-item results as a study folder ``sdtt single score`` reads."""
    from sdtt.commands.single_parser import ANSWERS_FILE
    from sdtt.dialogue.record_files import write_records
    from sdtt.errors import InputError
    from sdtt.files import write_text_atomic
    from sdtt.single.build import KEY_FILE
    from sdtt.single.theirdata.compiled import group_sizes, read_judgements
    from sdtt.single.theirdata.compiled_study import as_single_study

    folder: Path = args.out
    if (folder / KEY_FILE).exists() and not args.force:
        raise InputError(
            f"already holds a study ({KEY_FILE}).",
            path=folder,
            hint="Pass --force to replace it, or give another --out.",
        )
    every = group_sizes(read_judgements(args.file, task=args.task))
    if not args.group and len(every) > 1:
        sizes = ", ".join(f"{name} ({count})" for name, count in every.items())
        raise InputError(
            f"the file has {len(every)} groups of trials: {sizes}; their groups can hold "
            "the same trials again (their word-association 'combined' is 'inlab' and "
            "'mturk'), so name those to import.",
            path=args.file,
            field="--group",
            hint="Give --group NAME (repeat it for more).",
        )
    judgements = read_judgements(args.file, args.group or None, task=args.task)
    if not judgements:
        raise InputError(
            "no TEST trials in the groups read.", path=args.file, hint="Name other --group."
        )
    key, answers = as_single_study(judgements, args.task, source=Path(args.file).name)
    folder.mkdir(parents=True, exist_ok=True)
    write_text_atomic(folder / KEY_FILE, key.model_dump_json(indent=2) + "\n")
    write_records(folder / ANSWERS_FILE, answers)
    judges = len({a.judge_id for a in answers})
    groups = ", ".join(dict.fromkeys(j.group for j in judgements))
    _console(console).print(
        f"Wrote {len(answers)} answers of {judges} judges on {len(key.items)} responses "
        f"({groups}) to {folder}. Score them: sdtt single score {folder}"
    )
    return 0


def run_verdicts(args: argparse.Namespace, console: Console | None = None) -> int:
    """Per-exchange verdicts as belief traces."""
    check_out(args.out, args.force)
    labels = read_class_labels(args.labels) if args.labels else None
    traces: list[BeliefTrace] = read_verdicts(args.file, study=args.study, labels=labels)
    write_records(args.out, traces)
    _console(console).print(f"Wrote {len(traces)} belief traces to {args.out}.")
    return 0
