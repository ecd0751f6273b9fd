"""Nothing is pooled that should stay apart: judge runs, judge types and bot models."""

from __future__ import annotations

from pathlib import Path

import pytest

from sdtt.analysis.metrics import condition_tables
from sdtt.analysis.report import build_report, render_markdown
from sdtt.analysis.table import judgement_table
from sdtt.judges.llm import judge_id_for
from sdtt.tasks.judgements import Judgement
from tests.analysis.helpers import judgement


def llm(pair: str, judge_id: str, correct: bool, order: str) -> Judgement:
    record = judgement(pair, judge_id, correct, n=0, mode="burst")
    return record.model_copy(
        update={
            "judge_type": "llm",
            "judge_model": "mock/judge",
            "shown": record.shown.model_copy(update={"judge_kind": "paired", "order": order}),
        }
    )


def test_a_judge_asked_both_orders_and_one_random_order_is_two_runs_never_merged() -> None:
    both = judge_id_for("mock/judge", "paired", orders="both")
    one = judge_id_for("mock/judge", "paired", orders="random")
    assert both != one
    records = []
    for pair in ("p1", "p2"):
        # The both-orders run finds the bot every time; the random-order run never does.
        records += [llm(pair, both, True, "original"), llm(pair, both, True, "swapped")]
        records.append(llm(pair, one, False, "original"))
    tables = dict(condition_tables(judgement_table(records), reps=0))
    assert set(tables) == {
        f"LLM judge mock/judge (paired), judge id {both}, one row per condition",
        f"LLM judge mock/judge (paired), judge id {one}, one row per condition",
    }
    rates = {title.split("judge id ")[1].split(",")[0]: t for title, t in tables.items()}
    # Merged, the pair would weigh the first run 2:1 (pass rate 1/3); apart, 0% and 100%.
    assert rates[both]["pass_rate"].tolist() == [0.0]
    assert rates[one]["pass_rate"].tolist() == [1.0]
    assert [int(n) for n in rates[both]["judgements"]] == [4]


def test_the_report_opens_with_the_figure_and_a_line_per_condition(tmp_path: Path) -> None:
    records = [judgement("p1", f"j{i}", i < 1, n=0, mode="burst") for i in range(4)]
    records += [
        judgement("e1", f"j{i}", True, n=0, mode="burst", model="eliza/classic") for i in range(4)
    ]
    markdown = render_markdown(build_report(judgement_table(records), tmp_path, reps=0))
    head = markdown.split("\n## ")[0]
    assert "![Pass rate against turns](pass-rate.png)" in head
    lines = [line for line in head.splitlines() if line.startswith("- ")]
    assert len(lines) == 2
    assert lines[0].startswith("- eliza/classic (baseline), burst, turn 3 (N=0, X=3), Human")
    assert "pass rate 0.0%" in lines[0] and "4 judgement(s) of 1 pair(s)" in lines[0]
    assert "openai/gpt-4o, burst, turn 3 (N=0, X=3), Human judges: pass rate 75.0%" in lines[1]
    # The baseline and the model are never in one breakdown or one verdict panel.
    assert "all judges" not in markdown and "pooled" not in markdown.split("## Verdicts")[1]
    assert "## Verdicts by truth, Human judges, bot eliza/classic (baseline)" in markdown


@pytest.mark.parametrize("column", ["judge_model", "model"])
def test_no_breakdown_by_what_a_part_holds_fixed(column: str, tmp_path: Path) -> None:
    from sdtt.analysis.within import breakdown_tables

    frame = judgement_table([judgement("p1", "j1", True), judgement("p2", "j1", False)])
    assert breakdown_tables(frame, column, reps=0) == []
    assert len(breakdown_tables(frame, column, reps=0, pool=True)) == (column == "model")
