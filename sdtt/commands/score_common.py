"""What ``sdtt score``, ``sdtt report`` and ``sdtt demo`` share: reading judgement
files into a table and the pass-rate tables printed with Rich (their options are in
:mod:`sdtt.commands.score_parser`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)

from sdtt.analysis.format import INTERVAL_NOTE, RATE_COLUMNS, TEST_COLUMNS, format_table
from sdtt.analysis.table import judgement_table, read_judgement_table, without_repeats
from sdtt.beliefs.traces import BeliefTrace, is_trace_file, judgements_from_traces, load_traces
from sdtt.display import FittedTable
from sdtt.errors import InputError
from sdtt.redact import shown


def read_table(
    paths: Sequence[Path],
    *,
    allow_empty: bool = False,
    console: Console | None = None,
    traces: Sequence[BeliefTrace] | None = None,
) -> pd.DataFrame:
    """The judgement table of judgement and belief-trace files (a trace scores by its
    last belief), repeated answers left out (with a warning); refuses an empty set
    unless ``allow_empty`` (beliefs without verdicts, such as a market's prices).

    Judgement files are read a block at a time into the table's columns (with Arrow,
    see :func:`~sdtt.analysis.table.read_judgement_table`), never held as records, with
    a progress bar of the bytes read on ``console`` (stderr) while a large one is read.
    ``traces`` are the trace files' traces when the caller has read them already (see
    :func:`trace_inputs`), so that no file is read twice.
    """
    trace_files = [path for path in paths if is_trace_file(path)]
    files = [path for path in paths if path not in trace_files]
    with _reading(files, console) as progress:
        frame = read_judgement_table(files, progress=progress)
    frame = without_repeats(frame, files)
    if trace_files:
        if traces is None:
            traces = trace_inputs(trace_files, console)
        # A belief trace's last belief is its verdict: traces score as judgements.
        from_traces = judgement_table(judgements_from_traces(traces))
        parts = [part for part in (frame, from_traces) if len(part)]
        frame = (
            pd.concat(parts, ignore_index=True) if len(parts) == 2 else parts[0] if parts else frame
        )
    if frame.empty and not allow_empty:
        raise InputError("no judgements to score.", path=paths[0] if len(paths) == 1 else None)
    return frame


PROGRESS_FROM_BYTES = 32 << 20
"""Input files this large (together) are read with a progress bar."""


@contextmanager
def _reading(
    files: Sequence[Path], console: Console | None
) -> Iterator[Callable[[Path], Callable[[int], None] | None]]:
    """A progress bar of the bytes read, when the files are large enough to wait for;
    yields the ``progress`` callback to give each file's reader."""
    sizes = {path: _size(path) for path in files}
    if console is None or sum(sizes.values()) < PROGRESS_FROM_BYTES:
        yield lambda path: None
        return
    columns = (
        TextColumn("reading {task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=True) as bar:

        def of(path: Path) -> Callable[[int], None]:
            task = bar.add_task(shown(path.name), total=sizes[path] or None)
            return lambda done: bar.update(task, completed=done)

        yield of


def _size(path: Path) -> int:
    try:
        return path.stat().st_size if path.is_file() else 0
    except OSError:
        return 0


def trace_inputs(paths: Sequence[Path], console: Console | None = None) -> list[BeliefTrace]:
    """The belief traces among the input files (for the belief analyses), with a
    progress bar on ``console`` while large ones are read."""
    files = [path for path in paths if is_trace_file(path)]
    with _reading(files, console) as progress:
        return load_traces(files, progress=progress)


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
        console.print(FittedTable(f"{title}: {part}", header, body))
        if columns is RATE_COLUMNS:
            console.print(f"[dim]{INTERVAL_NOTE}[/]")


def print_escaped_table(
    console: Console, title: str, header: list[str], rows: list[list[str]], note: str = ""
) -> None:
    """A table whose cells may quote chat text (escaped, so none acts as Rich markup),
    with its note under it."""
    console.print(FittedTable(title, header, rows))
    if note:
        console.print(f"[dim]{shown(note)}[/]")
