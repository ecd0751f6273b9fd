"""``sdtt score``: pass rates, intervals and tests from judgement files, as tables."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from sdtt.analysis.beliefs import belief_tables
from sdtt.analysis.format import RATE_COLUMNS, TEST_COLUMNS, format_table, percent
from sdtt.analysis.metrics import (
    BREAKDOWNS,
    DEFAULT_MARGIN,
    breakdown,
    condition_tables,
    expand_by,
    summarise,
)
from sdtt.analysis.table import judgement_table
from sdtt.beliefs.traces import (
    BeliefTrace,
    is_trace_file,
    judgements_from_traces,
    load_traces,
)
from sdtt.errors import InputError
from sdtt.questionnaires.judgements import load_judgements, tally_exclusions


def add_scoring_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by ``score`` and ``report``."""
    parser.add_argument("judgements", type=Path, nargs="+", metavar="JUDGEMENTS")
    parser.add_argument(
        "--bootstrap",
        type=int,
        default=1000,
        metavar="N",
        help="cluster bootstrap replicates (default 1000; 0 for none)",
    )
    parser.add_argument(
        "--margin",
        type=float,
        default=DEFAULT_MARGIN,
        help=f"equivalence margin around 50%% for the TOST (default {DEFAULT_MARGIN})",
    )
    parser.add_argument(
        "--pool",
        action="store_true",
        help="also show one figure pooled over every condition and judge type (off by "
        "default: conditions and human vs LLM judges are not comparable)",
    )


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``sdtt score``."""
    parser = subparsers.add_parser(
        "score",
        help="X-Turn Pass Rate, intervals and tests from judgement files",
        description=(
            "Score judgements (human and LLM alike): one row per condition (model x mode x "
            "total turns N+X), human and LLM judges in separate tables, with pair-averaged "
            "and pooled X-Turn Pass Rate, Wilson and cluster-bootstrap intervals, exact "
            "binomial test against 50%, TOST equivalence, d', detectability, LLM position "
            "bias and order consistency. Catch pairs and excluded judgements are counted, "
            "never used."
        ),
    )
    add_scoring_options(parser)
    parser.add_argument(
        "--by",
        default="",
        help=(
            "comma-separated breakdowns over all judges: "
            + ", ".join(BREAKDOWNS)
            + ", demographics or a demographic question name (turns: total turn index "
            "N+X; n: pseudo-dialogue turns; x: live turns shown)"
        ),
    )
    parser.set_defaults(func=run)


def load_table(paths: Sequence[Path]) -> pd.DataFrame:
    """Read judgement files into one table, repeated answers left out (with a warning);
    refuses an empty set."""
    traces = [path for path in paths if is_trace_file(path)]
    judgements = load_judgements([path for path in paths if path not in traces])
    # A belief trace's last belief is its verdict: traces score as judgements.
    judgements += judgements_from_traces(load_traces(traces))
    if not judgements:
        raise InputError("no judgements to score.", path=paths[0] if len(paths) == 1 else None)
    return judgement_table(judgements)


def trace_inputs(paths: Sequence[Path]) -> list[BeliefTrace]:
    """The belief traces among the input files (for the belief analyses)."""
    return load_traces([path for path in paths if is_trace_file(path)])


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
    for table in belief_tables(trace_inputs(args.judgements)):
        # Moments quote chat text: escaped so it cannot act as rich markup.
        cells = [[escape(cell) for cell in row] for row in table.rows]
        console.print(rich_table(table.title, table.header, cells))
        console.print(f"[dim]{escape(table.note)}[/]")
    return 0
