"""``sdtt score``: pass rates, intervals and tests from judgement files, as tables."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from sdtt.analysis.format import RATE_COLUMNS, TEST_COLUMNS, format_table, percent
from sdtt.analysis.metrics import (
    BREAKDOWNS,
    breakdown,
    condition_tables,
    expand_by,
    summarise,
)
from sdtt.analysis.table import judgement_table
from sdtt.errors import InputError
from sdtt.questionnaires.judgements import load_judgements, tally_exclusions


def load_table(paths: Sequence[Path]) -> pd.DataFrame:
    """Read judgement files into one table, repeated answers left out (with a warning);
    refuses an empty set."""
    judgements = load_judgements(paths)
    if not judgements:
        raise InputError("no judgements to score.", path=paths[0] if len(paths) == 1 else None)
    return judgement_table(judgements)


def check_margin(margin: float) -> None:
    """Refuse a TOST margin outside (0, 0.5)."""
    if not 0 < margin < 0.5:
        raise InputError(
            f"the margin must be between 0 and 0.5, not {margin:g}.",
            field="--margin",
            hint="e.g. --margin 0.1 means 'within 40% to 60% correct'.",
        )


def print_summary(
    console: Console, title: str, rows: pd.DataFrame, group: str | Sequence[str] | None
) -> None:
    """Print summary rows as two tables, rates then tests, so they fit a terminal."""
    for columns, part in ((RATE_COLUMNS, "pass rates"), (TEST_COLUMNS, "tests")):
        header, body = format_table(rows, group, columns)
        console.print(rich_table(f"{title}: {part}", header, body))


def rich_table(title: str, header: list[str], rows: list[list[str]]) -> Table:
    """A rich table from display strings."""
    table = Table(title=title, title_justify="left")
    for index, name in enumerate(header):
        table.add_column(name, justify="left" if index == 0 else "right", overflow="fold")
    for row in rows:
        table.add_row(*row)
    return table


def run(args: argparse.Namespace) -> int:
    """Score judgement files from parsed arguments."""
    check_margin(args.margin)
    console = Console(highlight=False)
    frame = load_table(args.judgements)
    names = [name.strip() for name in args.by.split(",") if name.strip()]
    try:
        columns = expand_by(frame, names)
    except KeyError as error:
        raise InputError(
            f"cannot break down by {error.args[0]!r}.",
            field="--by",
            hint="Use " + ", ".join(BREAKDOWNS) + ", demographics or a demographic question.",
        ) from None
    tables = condition_tables(frame, reps=args.bootstrap, margin=args.margin)
    for title, rows in tables:
        print_summary(console, title, rows, "condition")
    if not tables:
        console.print("[yellow]no test-pair judgements to score.[/]")
    for column in columns:
        rows = breakdown(frame, column, reps=args.bootstrap, margin=args.margin)
        print_summary(console, f"By {column} (all judges)", rows, column)
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
    tally = tally_exclusions(
        zip(frame["pair_kind"], frame["excluded"], frame["exclusion_reason"], strict=True)
    )
    console.print(escape(tally.line()), soft_wrap=True)
    return 0
