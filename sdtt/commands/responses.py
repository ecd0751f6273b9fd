"""``sdtt responses import``: judges' answers from a survey tool into the judgement table."""

from __future__ import annotations

import argparse
import shlex

from rich.console import Console

from sdtt.beliefs.reveal_import import import_reveal
from sdtt.beliefs.traces import append_traces, read_traces, write_traces
from sdtt.commands.console import CliConsole
from sdtt.errors import InputError
from sdtt.files import output_file
from sdtt.lock import output_lock
from sdtt.questionnaires.answers import import_responses
from sdtt.questionnaires.fielded import check_same_build, note_scored
from sdtt.redact import shown
from sdtt.tasks.judgements import (
    append_judgements,
    read_judgements,
    tally_exclusions,
    write_judgements,
)
from sdtt.tasks.questionnaire import (
    AnswerKey,
    Questionnaire,
    load_key,
    load_questionnaire,
)


def run_import(args: argparse.Namespace) -> int:
    """Import answer files."""
    console = CliConsole(highlight=False)
    output_file(args.out)
    questionnaire = load_questionnaire(args.study)
    key = load_key(args.study, questionnaire)
    if args.out.exists() and not (args.append or args.force):
        raise InputError(
            "already exists.",
            path=args.out,
            hint="Pass --append to add these judgements to it, --force to replace it, or "
            "--out to write elsewhere.",
        )
    if args.reveal:
        return _import_reveal(args, questionnaire, key, console)
    with output_lock(args.out):
        known: set[str] = set()
        if args.append and args.out.exists():
            earlier = read_judgements(args.out)
            check_same_build(earlier, key, args.out)
            known = {j.judge_id for j in earlier if j.study == key.study}
        result = import_responses(
            args.files, args.format_name, questionnaire, key, known_judges=known
        )
        if args.append:
            count = append_judgements(args.out, result.judgements)
        else:
            count = write_judgements(args.out, result.judgements)
        note_scored(args.study, args.out, command="sdtt responses import")
    excluded_judges = len({j.judge_id for j in result.judgements if j.excluded})
    console.print(
        f"[bold]{result.judges} judge(s)[/], {count} judgement(s) written to "
        f"{shown(str(args.out))}; {result.excluded} excluded "
        f"({excluded_judges} judge(s) with exclusions)."
    )
    tally = tally_exclusions(
        (j.pair_kind, j.excluded, j.exclusion_reason) for j in result.judgements
    )
    console.print(f"  {shown(tally.line())}", soft_wrap=True)
    for reason, judges in sorted(result.excluded_judges.items()):
        console.print(f"  excluded judges, {shown(reason)}: {judges}")
    kept = [j for j in result.judgements if not j.excluded and j.pair_kind == "test"]
    if kept:
        correct = sum(1 for j in kept if j.correct)
        console.print(
            f"  included test judgements: {len(kept)}, found the AI in {correct} "
            f"({correct / len(kept):.0%})"
        )
    return 0


def _import_reveal(
    args: argparse.Namespace, questionnaire: Questionnaire, key: AnswerKey, console: Console
) -> int:
    """Import reveal-mode answers as belief traces."""
    with output_lock(args.out):
        known: set[str] = set()
        if args.append and args.out.exists():
            known = {t.judge_id for t in read_traces(args.out) if t.study == key.study}
        traces = import_reveal(args.files, args.format_name, questionnaire, key, known_judges=known)
        count = (append_traces if args.append else write_traces)(args.out, traces)
        note_scored(args.study, args.out, command="sdtt responses import --reveal")
    judges = len({t.judge_id for t in traces})
    excluded = sum(t.excluded for t in traces)
    console.print(
        f"[bold]{judges} judge(s)[/], {count} belief trace(s) written to "
        f"{shown(str(args.out))}; {excluded} excluded."
    )
    console.print(f"Score them with: sdtt score {shown(shlex.quote(str(args.out)))}")
    return 0
