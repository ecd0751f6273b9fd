"""``sdtt score``: pass rates, intervals and tests from judgement files, as tables."""

from __future__ import annotations

import argparse
import sys

import pandas as pd
from rich.console import Console

from sdtt.analysis.beliefs import belief_tables
from sdtt.analysis.format import percent
from sdtt.analysis.metrics import BREAKDOWNS, condition_tables, expand_by, summarise
from sdtt.analysis.table import exclusion_tally
from sdtt.analysis.within import breakdown_tables
from sdtt.beliefs.traces import BeliefTrace
from sdtt.commands.console import CliConsole
from sdtt.commands.score_common import (
    check_margin,
    print_escaped_table,
    print_summary,
    read_table,
    trace_inputs,
)
from sdtt.errors import InputError
from sdtt.files import write_text_atomic
from sdtt.redact import shown


def _write_tidy(args: argparse.Namespace, frame: pd.DataFrame, columns: list[str]) -> int:
    """``--format json|csv``: the tables as tidy rows, to ``--out`` or standard output."""
    from sdtt.analysis.tidy import tidy_results, write_tidy

    rows = tidy_results(frame, by=columns, reps=args.bootstrap, margin=args.margin, pool=args.pool)
    text = write_tidy(rows, args.format)
    if args.out is None:
        sys.stdout.write(text)
    else:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(args.out, text)
        CliConsole(stderr=True, highlight=False).print(
            f"wrote {len(rows)} rows to {shown(str(args.out))}"
        )
    return 0


def run(args: argparse.Namespace) -> int:
    """Score judgement files from parsed arguments."""
    check_margin(args.margin)
    console = CliConsole(highlight=False)
    errors = CliConsole(stderr=True)
    traces = trace_inputs(args.judgements, errors)
    frame = read_table(args.judgements, allow_empty=bool(traces), console=errors, traces=traces)
    if frame.empty:
        # Only beliefs that end in no verdict (a market's prices, live sliders, beside an
        # empty judgement file as `sdtt serve export` writes for a market study).
        _print_belief_tables(console, traces)
        return 0
    names = [name.strip() for name in args.by.split(",") if name.strip()]
    try:
        columns = expand_by(frame, names)
    except KeyError as error:
        raise InputError(
            f"cannot break down by {error.args[0]!r}.",
            field="--by",
            hint="Use " + ", ".join(BREAKDOWNS) + ", demographics or a demographic question.",
        ) from None
    if args.format != "table":
        return _write_tidy(args, frame, columns)
    if args.out is not None:
        raise InputError("--out applies with --format json or csv.", field="--out")
    tables = condition_tables(frame, reps=args.bootstrap, margin=args.margin)
    for title, rows in tables:
        print_summary(console, title, rows, "condition")
    if not tables:
        console.print("[yellow]no test-pair judgements to score.[/]")
    for column in columns:
        tables = breakdown_tables(
            frame, column, reps=args.bootstrap, margin=args.margin, pool=args.pool
        )
        for title, rows in tables:
            print_summary(console, title, rows, column)
        if not tables:
            console.print(
                f"[yellow]--by {shown(column)}: it is one value within each judge group "
                "and bot model; --pool breaks everything down by it, pooled.[/]"
            )
    if args.pool:
        overall = summarise(frame, reps=args.bootstrap, margin=args.margin)
        print_summary(console, "All test judgements, pooled", pd.DataFrame([overall.row()]), None)
        counts = overall.confusion
        console.print(
            f"pooled: p(H|H) {percent(counts.rate('H', 'H'))}  "
            f"p(M|H) {percent(counts.rate('M', 'H'))}  p(H|M) {percent(counts.rate('H', 'M'))}  "
            f"p(M|M) {percent(counts.rate('M', 'M'))}  "
            f"detectability {percent(counts.detectability)}; TOST margin +-{args.margin:g}: "
            + ("equivalent to chance" if overall.equivalent else "equivalence not shown")
        )
    if args.sequential:
        _print_stopping(console, frame, args.margin)
    tally = exclusion_tally(frame)
    console.print(shown(tally.line()), soft_wrap=True)
    _print_belief_tables(console, traces)
    from sdtt.commands.align import print_verdict_agreement

    print_verdict_agreement(console, frame, reps=args.bootstrap)
    return 0


def _print_stopping(console: Console, frame: pd.DataFrame, margin: float) -> None:
    from sdtt.analysis.stopping import stopping_tables

    tables = stopping_tables(frame, margin=margin)
    for table in tables:
        print_escaped_table(
            console,
            table.title,
            table.header,
            table.rows,
            "Judgements in the order recorded (file order). The sequence stays valid "
            "however often it is looked at; stop recruiting once the rule is met.",
        )
    if not tables:
        console.print("[yellow]no usable test judgements for the stopping rule.[/]")


def _print_belief_tables(console: Console, traces: list[BeliefTrace]) -> None:
    tables = belief_tables(traces)
    if traces and not tables:
        # Said only when trace files were given: judgement files alone hold no beliefs.
        console.print("[yellow]no beliefs to analyse.[/]")
    for table in tables:
        print_escaped_table(console, table.title, table.header, table.rows, table.note)
