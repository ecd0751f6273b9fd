"""``sdtt report``: an HTML and a Markdown report with PNG figures."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.markup import escape

from sdtt.analysis.beliefs import add_to_report
from sdtt.analysis.report import build_report, write_report
from sdtt.analysis.tells import compare, study_sides, tell_warnings
from sdtt.commands.scoring import check_margin, load_table, trace_inputs
from sdtt.files import output_folder
from sdtt.questionnaires.questionnaire import load_key, load_questionnaire


def run(args: argparse.Namespace) -> int:
    """Write a report from parsed arguments."""
    check_margin(args.margin)
    console = Console(highlight=False)
    output_folder(args.out)
    frame = load_table(args.judgements)
    tells = None
    if args.study is not None:
        questionnaire = load_questionnaire(args.study)
        tells = compare(*study_sides(questionnaire, load_key(args.study, questionnaire)))
    with console.status("computing and drawing..."):
        report = build_report(
            frame,
            args.out,
            title=args.title,
            tells=tells,
            reps=args.bootstrap,
            margin=args.margin,
            pool=args.pool,
        )
        add_to_report(report, trace_inputs(args.judgements), args.out)
        files = write_report(report, args.out)
    for warning in tell_warnings(tells or []):
        console.print(f"[yellow]warning:[/] {escape(warning)}")
    for path in files:
        console.print(f"  {escape(str(path))}")
    return 0
