"""What ``sdtt score``, ``sdtt report`` and ``sdtt demo`` share: reading judgement
files into a table and the pass-rate tables printed with Rich (their options are in
:mod:`sdtt.commands.score_parser`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from rich.console import Console
from rich.table import Table

from sdtt.analysis.format import INTERVAL_NOTE, RATE_COLUMNS, TEST_COLUMNS, format_table
from sdtt.analysis.table import judgement_table
from sdtt.beliefs.traces import BeliefTrace, is_trace_file, load_traces
from sdtt.errors import InputError
from sdtt.questionnaires.judgements import Judgement
from sdtt.redact import shown
from sdtt.results import read_judgement_files


def read_judgements(paths: Sequence[Path], *, allow_empty: bool = False) -> list[Judgement]:
    """Read judgement and belief-trace files (a trace scores by its last belief),
    repeated answers left out (with a warning); refuses an empty set unless
    ``allow_empty`` (beliefs without verdicts, such as a market's prices)."""
    # A belief trace's last belief is its verdict: traces score as judgements.
    judgements = read_judgement_files(paths)
    if not judgements and not allow_empty:
        raise InputError("no judgements to score.", path=paths[0] if len(paths) == 1 else None)
    return judgements


def load_table(paths: Sequence[Path]) -> pd.DataFrame:
    """Read judgement files into one table (see :func:`read_judgements`)."""
    return judgement_table(read_judgements(paths))


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
    """Print summary rows as two tables, rates then tests, so they fit a terminal; the
    rates say what each interval is of."""
    for columns, part in ((RATE_COLUMNS, "pass rates"), (TEST_COLUMNS, "tests")):
        header, body = format_table(rows, group, columns)
        console.print(rich_table(f"{title}: {part}", header, body))
        if columns is RATE_COLUMNS:
            console.print(f"[dim]{INTERVAL_NOTE}[/]")


def rich_table(title: str, header: list[str], rows: list[list[str]]) -> Table:
    """A rich table from display strings, every one shown as text (topics, models and
    personas come from files: no markup or control character of theirs acts)."""
    table = Table(title=shown(title), title_justify="left")
    for index, name in enumerate(header):
        table.add_column(shown(name), justify="left" if index == 0 else "right", overflow="fold")
    for row in rows:
        table.add_row(*(shown(cell) for cell in row))
    return table


def print_escaped_table(
    console: Console, title: str, header: list[str], rows: list[list[str]], note: str = ""
) -> None:
    """A table whose cells may quote chat text (escaped, so none acts as Rich markup),
    with its note under it."""
    console.print(rich_table(title, header, rows))
    if note:
        console.print(f"[dim]{shown(note)}[/]")
