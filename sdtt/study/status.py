"""``sdtt study status``: the design as a grid with what is done, running and missing."""

from __future__ import annotations

from dataclasses import dataclass

from sdtt.study.ledger import LEDGER_FILE, Ledger
from sdtt.study.spec import Study
from sdtt.study.steps import State, Step, cells, chain_key, chain_step_id, state, steps


@dataclass(frozen=True)
class GridRow:
    """One cell of the design and the state of its chain and chat."""

    cell: str
    persona: str
    model: str
    mode: str
    n: int
    x: int
    topic: str
    chain: State | None
    """None when N = 0 (no pseudo-dialogue)."""
    chat: State
    cost: float


@dataclass(frozen=True)
class StudyStatus:
    """The grid, every later step, and what was spent."""

    grid: list[GridRow]
    steps: list[tuple[Step, State]]
    """Steps after the chats (questionnaire, judges, survey, report)."""
    spent: float
    calls: int


def study_status(study: Study) -> StudyStatus:
    """Where every piece of ``study`` stands."""
    ledger = Ledger(study.out / LEDGER_FILE)
    by_condition = ledger.tallies("condition")
    by_cell = ledger.tallies("cell")
    every = {step.id: step for step in steps(study)}
    rows = []
    for cell in cells(study):
        chain = every.get(chain_step_id(chain_key(study, cell))) if cell.n else None
        chat = every[f"chat {cell.id}"]
        # Ledgers written before cells were recorded named each cell's calls by its label.
        tally = by_cell.get(cell.id) or by_condition.get(cell.label)
        rows.append(
            GridRow(
                cell=cell.id,
                persona=cell.persona,
                model=cell.model,
                mode=cell.mode,
                n=cell.n,
                x=cell.x,
                topic=cell.topic,
                chain=None if chain is None else state(study, chain),
                chat=state(study, chat),
                cost=0.0 if tally is None else tally.cost,
            )
        )
    later = [
        (step, state(study, step))
        for step in every.values()
        if step.stage not in ("topics", "chains", "chats")
    ]
    total = ledger.total()
    return StudyStatus(grid=rows, steps=later, spent=total.cost, calls=total.calls)
