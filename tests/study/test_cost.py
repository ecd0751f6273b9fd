"""The cost ledger and the budget, with a mock provider given a price."""

from __future__ import annotations

import json
from pathlib import Path

from sdtt.study.ledger import read_ledger
from tests.study.helpers import CountingMocks, run_study, write_spec

PRICE = '\n[prices."mock/chatty"]\ninput = 2.0\noutput = 10.0\ncached_input = 0.5\n'
"""Dollars per million tokens; mock usage counts words, so the costs are tiny."""


def dollars(record: dict[str, int]) -> float:
    """The price above applied by hand to one call's tokens."""
    cached = record["cached_input_tokens"] or 0
    return (
        (record["input_tokens"] - cached) * 2.0 + cached * 0.5 + record["output_tokens"] * 10.0
    ) / 1e6


def test_every_call_is_priced_per_stage_and_condition_in_the_report(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, extra=PRICE)
    mocks = CountingMocks()
    assert run_study(spec, mocks).finished
    records = read_ledger(tmp_path / "out" / "ledger.jsonl")
    assert len(records) == len(mocks.calls)
    total = sum(dollars(r) for r in records)
    assert total > 0
    figures = json.loads((tmp_path / "out/report/figures.json").read_text("utf-8"))
    sections = {s["title"]: s for s in figures["sections"]}
    by_stage = {row[0]: row for row in sections["Cost by stage"]["rows"]}
    assert set(by_stage) == {"chains", "chats", "judges", "total"}
    assert float(by_stage["total"][-1]) == round(total, 4)
    chats = [r for r in records if r["stage"] == "chats"]
    assert float(by_stage["chats"][-1]) == round(sum(dollars(r) for r in chats), 4)
    assert by_stage["chats"][1] == str(len(chats))
    judged = {str(r["condition"]) for r in records if r["stage"] == "judges"}
    assert judged == {"catch pairs"} | {str(r["condition"]) for r in chats}  # per condition
    conditions = [row[0] for row in sections["Cost by condition"]["rows"]]
    assert any("N=6, X=2" in c for c in conditions) and any("N=0, X=2" in c for c in conditions)
    # The score tables name each condition as the cost table does, so the two join.
    scored = {
        row[section["header"].index("condition")]
        for section in figures["sections"]
        if section["title"].endswith("one row per condition")
        for row in section["rows"]
    }
    assert len(scored) == 2 and scored <= set(conditions)
    # A pseudo-dialogue chain is named as its conditions are: model, then mode.
    chained = {str(r["condition"]) for r in records if r["stage"] == "chains"}
    model = next(iter(scored)).split(",")[0]
    assert chained and all(name.startswith(f"{model}, burst, ") for name in chained)
    assert chained <= set(conditions)
    # Each cell's calls, its chat's and its pairs' judging, are tallied under its id.
    judged_cells = {r["cell"] for r in records if r["stage"] == "judges" and r["cell"]}
    assert judged_cells == {r["cell"] for r in chats} and len(judged_cells) == 2
    assert "Cost by stage" in (tmp_path / "out/report/report.md").read_text("utf-8")


def test_the_budget_stops_before_a_call_that_could_pass_it(tmp_path: Path) -> None:
    whole = CountingMocks()
    assert run_study(write_spec(tmp_path / "whole", extra=PRICE), whole).finished
    spent = sum(dollars(r) for r in read_ledger(tmp_path / "whole/out/ledger.jsonl"))
    budget = spent / 2
    spec = write_spec(tmp_path / "tight", extra=PRICE, study_extra=f"budget = {budget!r}")
    tight = CountingMocks()
    result = run_study(spec, tight)
    assert not result.finished and result.budget is not None
    assert "budget" in str(result.budget)
    records = read_ledger(tmp_path / "tight/out/ledger.jsonl")
    assert len(records) == len(tight.calls) < len(whole.calls)
    assert sum(dollars(r) for r in records) <= budget
    assert [s.stage for s in result.undone][-1] == "report"
    assert not (tmp_path / "tight/out/report").exists()
    # With the budget raised, the rest is made and nothing asked twice.
    spec.write_text(
        spec.read_text("utf-8").replace(f"budget = {budget!r}", "budget = 1.0"), "utf-8"
    )
    rest = CountingMocks()
    assert run_study(spec, rest).finished
    assert tight.counted() + rest.counted() == whole.counted()


def test_a_budget_refuses_a_model_without_a_price(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, study_extra="budget = 1.0")

    class Unpriced(CountingMocks):
        def __call__(self, name: str):  # type: ignore[no-untyped-def]
            api = super().__call__(name)
            api.name = "openai/made-up-model"  # no price anywhere
            return api

    mocks = Unpriced()
    result = run_study(spec, mocks)
    assert result.budget is not None
    assert "openai/made-up-model has no price" in str(result.budget)
    assert mocks.calls == []
