"""``sdtt study status`` on an 80-column terminal: nothing past the edge, no state cut."""

from __future__ import annotations

import io
import re
from pathlib import Path

from rich.console import Console

from sdtt.commands.study_status import status_renderables
from sdtt.study.spec import read_spec
from sdtt.study.status import GridRow, StudyStatus, study_status
from sdtt.study.steps import State, Step

EXAMPLE = Path(__file__).parents[2] / "examples" / "turns_study.toml"
STATES: tuple[State, ...] = ("done", "running", "missing")


def rendered(status: StudyStatus) -> str:
    console = Console(width=80, record=True, file=io.StringIO())
    for renderable in status_renderables("turns", status):
        console.print(renderable)
    return console.export_text()


def assert_fits_80_columns(status: StudyStatus) -> str:
    """The text at 80 columns, checked: no line is wider, and each state is shown whole as
    often as the status holds it."""
    text = rendered(status)
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 80, text
    held = [s for row in status.grid for s in (row.chain, row.chat) if s is not None]
    held += [s for _, s in status.steps]
    for word in STATES:
        assert len(re.findall(rf"\b{word}\b", text)) == held.count(word), text
    for row in status.grid:
        assert re.search(rf"^{row.cell} ", text, re.MULTILINE), text
    return text


def test_the_example_studys_status_fits_80_columns_with_every_cell_and_name(
    tmp_path: Path,
) -> None:
    spec = tmp_path / "study.toml"
    text = EXAMPLE.read_text("utf-8")
    spec.write_text(re.sub(r"(?m)^out = .*$", 'out = "out"', text), "utf-8")
    status = study_status(read_spec(spec))  # nothing run: every step missing
    shown = " ".join(assert_fits_80_columns(status).split())  # words a wrap split, joined
    row = status.grid[0]
    for value in (row.persona, row.model, row.mode, row.topic):
        assert value in shown


def _row(i: int, model: str, topic: str, chain: State | None, chat: State) -> GridRow:
    return GridRow(
        f"cell-{i:03d}",
        "a-rather-long-persona-name-0f3a9c",
        model,
        "pingpong",
        100 if chain else 0,
        10,
        topic,
        chain,
        chat,
        0.1234,
    )


def test_a_grid_of_long_differing_names_fits_80_columns_with_every_state_whole() -> None:
    models = ["anthropic/claude-sonnet-4-5-20250929", "openai/gpt-4o-mini-2024-07-18"]
    topics = ["What would you do with a whole free year of travel?", "Can computers love?"]
    states: list[tuple[State | None, State]] = [
        (None, "done"),
        ("done", "running"),
        ("running", "missing"),
        ("missing", "missing"),
    ]
    rows = [
        _row(i, models[i % 2], topics[i // 2 % 2], chain, chat)
        for i, (chain, chat) in enumerate(states * 2, 1)
    ]
    step = Step("report", "report", "report and figures", Path("report"))
    status = StudyStatus(rows, [(step, "running")], spent=1.0, calls=10)
    shown = " ".join(assert_fits_80_columns(status).split())
    for topic in topics:  # listed under the grid, each whole
        assert topic in shown
    assert "a-rather-long-persona-name-0f3a9c" in shown  # shared by all: said once
