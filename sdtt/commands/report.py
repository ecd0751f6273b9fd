"""``sdtt report``: an HTML and a Markdown report with PNG figures."""

from __future__ import annotations

import argparse

import pandas as pd

from sdtt.analysis.beliefs import add_to_report
from sdtt.analysis.report import Section, build_report, write_report
from sdtt.analysis.tells import condition_warnings, study_tells
from sdtt.commands.console import CliConsole
from sdtt.commands.score_common import check_margin, read_table, trace_inputs
from sdtt.files import output_folder
from sdtt.redact import shown
from sdtt.tasks.questionnaire import load_key, load_questionnaire


def run(args: argparse.Namespace) -> int:
    """Write a report from parsed arguments."""
    check_margin(args.margin)
    console = CliConsole(highlight=False)
    output_folder(args.out)
    errors = CliConsole(stderr=True)
    traces = trace_inputs(args.judgements, errors)
    # A market gives prices, no verdicts: its export's judgement file is empty.
    frame = read_table(args.judgements, allow_empty=bool(traces), console=errors, traces=traces)
    tells = None
    key = None
    if args.study is not None:
        questionnaire = load_questionnaire(args.study)
        key = load_key(args.study, questionnaire)
        tells = study_tells(questionnaire, key)
    with console.status("computing and drawing..."):
        # One line per step, so a report of many judgements shows where it is.
        console.print(f"[dim]report: pass rates, intervals and figures ({len(frame)} rows)[/]")
        report = build_report(
            frame,
            args.out,
            title=args.title,
            tells=tells,
            reps=args.bootstrap,
            margin=args.margin,
            pool=args.pool,
            key=key,
            step=lambda what: console.print(f"[dim]report: {shown(what)}[/]"),
        )
        if traces:
            console.print(f"[dim]report: belief traces of {len(traces)} file(s)[/]")
        add_to_report(report, traces, args.out)
        agreement = verdict_section(frame, reps=args.bootstrap)
        if agreement is not None:
            report.sections.append(agreement)
        console.print("[dim]report: writing report.html and report.md[/]")
        files = write_report(report, args.out)
    for warning in condition_warnings(tells or {}):
        console.print(f"[yellow]warning:[/] {shown(warning)}")
    for path in files:
        console.print(f"  {shown(str(path))}")
    return 0


def verdict_section(frame: pd.DataFrame, *, reps: int) -> Section | None:
    """How each LLM judge's verdicts agree with the human judges' (a report section),
    when both kinds judged (``frame``: a judgement table); ``None`` otherwise."""
    judged = frame.loc[(frame["pair_kind"] == "test") & ~frame["excluded"], "judge_type"]
    if set(judged.unique()) != {"human", "llm"}:
        return None
    from sdtt.align.alignment_report import verdict_table
    from sdtt.align.verdicts import verdict_agreement

    table = verdict_table(verdict_agreement(frame, reps=max(reps, 0)))
    return Section(table.title, table.header, table.rows, note=table.note)
