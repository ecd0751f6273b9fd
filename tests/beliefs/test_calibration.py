"""Belief analyses: Brier and Murphy's decomposition, log score, ECE, by-turn, moments."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdtt.beliefs.calibration import by_turn, calibration, held_beliefs, moments
from sdtt.beliefs.traces import BeliefPoint, write_traces
from sdtt.cli import main
from tests.beliefs.helpers import trace


def test_worked_example_where_the_decomposition_holds() -> None:
    # Five forecasts of 0.2 (one came true) and five of 0.8 (three came true).
    p = [0.2] * 5 + [0.8] * 5
    y = [0, 0, 0, 0, 1, 1, 1, 1, 0, 0]
    found = calibration(p, y)
    assert found.brier == pytest.approx(0.22)
    assert found.uncertainty == pytest.approx(0.24)  # base rate 0.4
    assert found.reliability == pytest.approx(0.02)  # 0.8 said, 0.6 happened
    assert found.resolution == pytest.approx(0.04)
    assert found.reliability - found.resolution + found.uncertainty == pytest.approx(0.22)
    assert found.within_bin == pytest.approx(0.0, abs=1e-12)
    assert found.ece == pytest.approx(0.1)
    expected_log = (7 * -math.log(0.8) + 3 * -math.log(0.2)) / 10
    assert found.log_score == pytest.approx(expected_log)
    assert found.sharpness == 0.0
    assert calibration([0.0, 1.0], [0, 1]).sharpness == 1.0


@given(st.lists(st.tuples(st.integers(0, 10), st.integers(0, 1)), min_size=1, max_size=60))
def test_decomposition_identity_for_forecasts_in_tenths(pairs: list[tuple[int, int]]) -> None:
    # 11 bins, so every bin holds one forecast value and the identity is exact.
    p = [tenth / 10 for tenth, _ in pairs]
    y = [outcome for _, outcome in pairs]
    found = calibration(p, y, bins=11)
    assert found.brier == pytest.approx(
        found.reliability - found.resolution + found.uncertainty, abs=1e-9
    )
    assert 0 <= found.ece <= 1 and found.log_score >= 0


def test_confident_wrong_beliefs_cost_a_lot_but_not_infinity() -> None:
    assert calibration([0.0], [1]).log_score == pytest.approx(-math.log(0.01))


def test_pass_rate_by_turn_counts_judges_on_the_wrong_side() -> None:
    # Target human in both; a fooled judge stays below 50 until turn 3.
    traces = [
        trace([30, 40, 70], judge_id="a"),
        trace([60, 80, 90], judge_id="b"),
        trace([50, None, 20], judge_id="c"),
    ]
    table = by_turn(held_beliefs(traces), by=("model",)).set_index("turn")
    assert table.loc[1, "wrong_side"] == pytest.approx(0.5)  # c is undecided
    assert table.loc[1, "undecided"] == 1
    assert table.loc[2, "wrong_side"] == pytest.approx(0.5)  # c still holds 50
    assert table.loc[3, "wrong_side"] == pytest.approx(1 / 3)


def test_excluded_and_catch_traces_do_not_count() -> None:
    traces = [
        trace([90]),
        trace([10], judge_id="x", excluded=True, exclusion_reason="failed catch"),
        trace([10], judge_id="y", pair_kind="catch"),
    ]
    assert set(held_beliefs(traces)["judge_id"]) == {"j1"}


def test_the_moments_that_moved_belief_come_with_their_text() -> None:
    moving = trace([50, 45, 90], judge_id="a")
    moving.points[2] = BeliefPoint(turn=3, belief=90, source="slider", text="chat 1: lol same")
    found = moments([moving], top=1)
    assert found.loc[0, "text"] == "chat 1: lol same"
    assert found.loc[0, "toward_truth"] == 45


def test_score_and_report_show_belief_analyses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "300")
    path = tmp_path / "traces.jsonl"
    write_traces(
        path,
        [
            trace([40, 70], judge_id="a"),
            trace([60, 20], judge_id="b", item_id="pxyz234", bot_position=1, target_human=False),
            trace([55, 45], judge_id="c", condition={"bot_meta": {"model": "eliza/classic"}}),
        ],
    )
    assert main(["score", str(path), "--bootstrap", "0"]) == 0
    out = capsys.readouterr().out
    assert "calibration of final beliefs" in out and "pass rate by turn" in out
    assert "eliza/classic (baseline)" in out
    report = tmp_path / "report"
    assert main(["report", str(path), "--out", str(report), "--bootstrap", "0"]) == 0
    html = (report / "report.html").read_text(encoding="utf-8")
    assert "Calibration and sharpness" in html and "Belief traces" in html
    assert (report / "calibration.png").stat().st_size > 1000
    assert (report / "belief-traces.png").exists()
