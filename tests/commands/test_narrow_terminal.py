"""On a terminal too narrow for a table's columns, ``sdtt score`` prints each row as a
block of (column, value) lines instead of breaking words and numbers across lines: at 80
columns the old table showed ``judges`` as ``judge``/``s`` and 10000 as ``1000``/``0``."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from sdtt.beliefs.traces import write_traces
from sdtt.cli import main
from sdtt.display import FittedTable
from tests.beliefs.helpers import trace


def _score(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    path = tmp_path / "traces.jsonl"
    write_traces(
        path,
        [
            trace([40.0, 60.0, 70.0 - n % 3], judge_id=f"j{n}", item_id=f"p{n % 7}")
            for n in range(10000)
        ],
    )
    assert main(["score", str(path), "--bootstrap", "0"]) == 0
    return capsys.readouterr().out


def test_at_80_columns_no_header_or_number_is_broken(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    out = _score(tmp_path, capsys)
    for line in out.splitlines():
        # Only notes, printed whole for the terminal to wrap, are longer: prose, no cells.
        assert len(line.rstrip()) <= 80 or "  " not in line.strip(), line
    # Every column's name and the count of judgements stand whole on one line.
    assert re.search(r"^judges\s+10000\s*$", out, re.M), out
    assert re.search(r"^pooled 95% CI \(Wilson\)\s+\[", out, re.M), out
    assert re.search(r"^beliefs\s+10000\s*$", out, re.M), out


def test_a_wide_terminal_keeps_the_tables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "240")
    out = _score(tmp_path, capsys)
    assert re.search(r"┃ condition\s+┃ pairs ┃ judges ┃", out), out
    assert "┃ beliefs ┃" in out


def test_cells_are_shown_as_text_in_both_layouts() -> None:
    table = FittedTable("[red]t[/]", ["a", "b"], [["[bold]x[/]", "\x1b[2J12345"]])
    for width in (16, 200):
        console = Console(width=width, record=True, force_terminal=False, color_system=None)
        console.print(table)
        text = console.export_text()
        assert "[bold]x[/]" in text and "[red]t[/]" in text
        assert "\x1b" not in text and "12345" in text


def _as_rich_lays_it_out(table: FittedTable, console: Console) -> None:
    """FittedTable as Rich alone would print it: every cell measured, each block a table."""
    from rich.measure import Measurement

    from sdtt.display import facts_table, terminal_text

    whole = table.table()
    needed = Measurement.get(console, console.options.update_width(1 << 16), whole).minimum
    if needed <= console.width:
        console.print(whole)
        return
    console.print(terminal_text(table.title))
    for row in table.rows:
        console.print(facts_table("", zip(table.header, row, strict=False), boxed=False))
        console.print("")


_CELL = st.lists(
    st.sampled_from([*"ab 1.%[]/\\\n", "漢", "é", "😀", ":smile:", "[bold]", "word"]),
    max_size=12,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(
    header=st.lists(_CELL, min_size=1, max_size=5),
    rows=st.lists(st.lists(_CELL, min_size=0, max_size=5), max_size=4),
    width=st.integers(8, 120),
    colour=st.booleans(),
)
def test_the_blocks_and_the_table_print_as_rich_lays_them_out(
    header: list[str], rows: list[list[str]], width: int, colour: bool
) -> None:
    rows = [row[: len(header)] for row in rows]
    table = FittedTable("title", header, rows)
    printed = []
    for draw in (lambda console: console.print(table), lambda c: _as_rich_lays_it_out(table, c)):
        console = Console(
            width=width,
            record=True,
            force_terminal=colour,
            color_system="standard" if colour else None,
            file=io.StringIO(),
        )
        draw(console)
        printed.append(console.export_text(styles=False))
    assert printed[0] == printed[1]
