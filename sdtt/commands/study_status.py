"""What ``sdtt study status`` prints: the design grid and the later steps, fit for 80 columns.

A column with one value in every cell (a design with one persona, one model, one topic)
is said once above the grid instead of repeated on every row; topics that differ, the
longest texts, appear in the grid as short keys listed under it. The grid has no
vertical rules, and its states, ids and numbers never wrap: names that still do not fit
fold rather than being cut short, so nothing is lost.
"""

from __future__ import annotations

from collections.abc import Callable

from rich import box
from rich.console import RenderableType
from rich.table import Table

from sdtt.redact import shown
from sdtt.study.status import GridRow, StudyStatus

STATE_STYLE = {"done": "green", "running": "yellow", "missing": "red"}

Column = tuple[str, Callable[[GridRow], str]]
"""A design column that may be said once above the grid: its header and a row's text."""

_DESIGN: tuple[Column, ...] = (
    ("persona", lambda row: shown(row.persona)),
    ("model", lambda row: shown(row.model)),
    ("mode", lambda row: row.mode),
    ("topic", lambda row: shown(row.topic)),
)


def state_text(state: str | None) -> str:
    """A state in its colour (``-`` for a chain that N = 0 does not have)."""
    return "-" if state is None else f"[{STATE_STYLE[state]}]{state}[/]"


def status_renderables(name: str, status: StudyStatus) -> list[RenderableType]:
    """The lines of ``sdtt study status`` for the study called ``name``, in order: the
    title, the columns shared by every cell, the grid, the topic keys, the later steps
    and what was spent."""
    rows = status.grid
    shared = [column for column in _DESIGN if len({column[1](r) for r in rows}) == 1]
    varying = [column for column in _DESIGN if column not in shared]
    printed: list[RenderableType] = [f"[italic]{shown(name)}: the design[/]"]
    if shared and rows:
        said = ", ".join(f"{header} {text(rows[0])}" for header, text in shared)
        printed.append(f"every cell: {said}")
    topics = {
        text: f"t{i}" for i, text in enumerate(dict.fromkeys(shown(r.topic) for r in rows), 1)
    }
    grid = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True)
    grid.add_column("cell", no_wrap=True)
    for header, _ in varying:
        grid.add_column(header, no_wrap=header == "topic", overflow="fold")
    for header in ("N", "X"):
        grid.add_column(header, justify="right", no_wrap=True)
    for header in ("chain", "chat"):
        grid.add_column(header, no_wrap=True)
    grid.add_column("cost", justify="right", no_wrap=True)
    for row in rows:
        texts = [topics[text(row)] if h == "topic" else text(row) for h, text in varying]
        chain, chat = state_text(row.chain), state_text(row.chat)
        grid.add_row(row.cell, *texts, str(row.n), str(row.x), chain, chat, f"{row.cost:.4f}")
    printed.append(grid)
    if any(header == "topic" for header, _ in varying):
        printed += [f"{key}  {text}" for text, key in topics.items()]
    later = Table(show_header=False, box=None)
    later.add_column(no_wrap=True)
    later.add_column(overflow="fold")
    later.add_column(no_wrap=True)
    for step, state in status.steps:
        later.add_row(step.stage, shown(step.label), state_text(state))
    printed += ["", later, f"{status.calls} calls so far, ≈${status.spent:.4f}"]
    return printed
