"""Belief analyses: Brier and Murphy's decomposition, log score, ECE, by-turn, moments."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss, log_loss

from sdtt.analysis.beliefs import belief_tables
from sdtt.analysis.metrics import summarise
from sdtt.analysis.table import judgement_table
from sdtt.beliefs.calibration import (
    LOG_CLIP,
    TENTHS,
    by_turn,
    calibration,
    held_beliefs,
    moments,
)
from sdtt.beliefs.traces import BeliefPoint, judgements_from_traces, write_traces
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


def _wbv_minus_wbc(p: np.ndarray, y: np.ndarray, bins: np.ndarray) -> float:
    """Stephenson et al. (2008): within-bin variance of forecasts minus twice their
    within-bin covariance with the outcomes, over all forecasts."""
    total = 0.0
    for k in np.unique(bins):
        pk, yk = p[bins == k], y[bins == k]
        total += ((pk - pk.mean()) ** 2).sum() - 2 * ((pk - pk.mean()) * (yk - yk.mean())).sum()
    return total / len(p)


def test_sliders_in_tens_add_up_at_the_defaults_and_match_sklearn() -> None:
    # The case the default of ten tenths got wrong: 90 and 100 shared the last bin.
    rng = np.random.default_rng(5)
    p = rng.integers(0, 11, 300) / 10
    y = (rng.random(300) < 0.3 + 0.4 * p).astype(float)
    found = calibration(p, y)
    assert found.brier == pytest.approx(brier_score_loss(y, p), abs=1e-12)
    assert found.reliability - found.resolution + found.uncertainty == pytest.approx(
        found.brier, abs=1e-12
    )
    assert found.within_bin == pytest.approx(0, abs=1e-12)
    assert len(found.bins) == len(np.unique(p))
    expected_log = log_loss(y, np.clip(p, LOG_CLIP, 1 - LOG_CLIP))
    assert found.log_score == pytest.approx(expected_log, abs=1e-12)


def test_many_distinct_beliefs_use_tenths_and_report_the_residual() -> None:
    rng = np.random.default_rng(6)
    p = rng.uniform(0.001, 0.999, 400)
    p = p[np.abs(p * 10 - np.round(p * 10)) > 1e-6]  # none on an edge (sklearn puts edges low)
    y = (rng.random(len(p)) < p).astype(float)
    found = calibration(p, y)
    true, predicted = calibration_curve(y, p, n_bins=10, strategy="uniform")
    used = found.bins.loc[found.bins["n"] > 0]
    assert used["observed"].to_numpy() == pytest.approx(true, abs=1e-12)
    assert used["mean_p"].to_numpy() == pytest.approx(predicted, abs=1e-12)
    residual = _wbv_minus_wbc(p, y, np.floor(p * 10))
    assert found.within_bin == pytest.approx(residual, abs=1e-12)
    assert found.brier == pytest.approx(
        found.reliability - found.resolution + found.uncertainty + found.within_bin, abs=1e-12
    )


def test_the_residual_can_be_negative() -> None:
    # Within the 0.3 bin the higher forecast is the one that came true: WBC > WBV.
    p, y = np.array([0.31, 0.39, 0.31, 0.39]), np.array([0.0, 1.0, 0.0, 1.0])
    found = calibration(p, y, bins=10)
    assert found.within_bin < 0
    assert found.within_bin == pytest.approx(_wbv_minus_wbc(p, y, np.zeros(4)), abs=1e-12)


def test_sharpness_uses_the_histograms_tenths() -> None:
    # Turing Trade's bins: 0-9 and 90-100 are sharp; 10 is in 10-19.
    beliefs = np.array([0, 9, 9.5, 10, 50, 89, 90, 100]) / 100
    assert calibration(beliefs, np.ones(8)).sharpness == pytest.approx(5 / 8)
    counts, _ = np.histogram(beliefs, bins=TENTHS)
    assert (counts[0] + counts[-1]) / len(beliefs) == pytest.approx(5 / 8)
    # Every belief k lands in the tenth floor(k / 10), as the calibration bins put it.
    every = np.arange(101) / 100
    assert list(np.histogram(every, bins=TENTHS)[0]) == [10] * 9 + [11]


@pytest.mark.parametrize(
    ("p", "y", "words"),
    [
        ([0.5, math.nan], [1, 0], "belief 1 is nan"),
        ([1.5], [1], "belief 0 is 1.5"),
        ([0.5], [0.5], "outcome 0 is 0.5"),
        ([0.5, 0.5], [1], "2 beliefs but 1 outcomes"),
    ],
)
def test_calibration_refuses_what_it_cannot_mean(
    p: list[float], y: list[float], words: str
) -> None:
    with pytest.raises(ValueError, match=words):
        calibration(p, y)


def test_pass_rate_by_turn_carries_the_last_belief_and_averages_over_pairs() -> None:
    # Pair one: three judges, two fooled (below 50 on a human target); judge a stops
    # moving the slider after turn 1 of 3. Pair two: one judge, not fooled.
    traces = [
        trace([30, None, None], judge_id="a", item_id="pone234"),
        trace([60, 40, 20], judge_id="b", item_id="pone234"),
        trace([90, 80, 70], judge_id="c", item_id="pone234"),
        trace([20, 80, 90], judge_id="d", item_id="ptwo234", target_human=True),
    ]
    traces[0] = traces[0].model_copy(update={"points": traces[0].points[:1]})
    frame = held_beliefs(traces)
    table = by_turn(frame, by=("model",)).set_index("turn")
    assert list(table["judges"]) == [4, 4, 4]
    # By hand: per pair the share fooled, then the mean over pairs.
    assert table.loc[3, "wrong_side"] == pytest.approx((2 / 3 + 0) / 2)
    assert table.loc[1, "wrong_side"] == pytest.approx((1 / 3 + 1) / 2)
    # The last turn is the verdict each trace ends in: it equals the headline pass rate.
    summary = summarise(judgement_table(judgements_from_traces(traces)), reps=0)
    assert table.loc[3, "wrong_side"] == pytest.approx(summary.pass_rate)


def test_a_market_that_traded_before_the_first_answer_still_counts() -> None:
    market = trace(
        [],
        judge_id="room1",
        item_id="room1",
        item_kind="room",
        target="target",
        bot_position=None,
        condition={"live_from": 1, "live_to": 3},
        points=[
            BeliefPoint(turn=0, message=0, belief=50, source="price"),
            BeliefPoint(turn=0, message=0, belief=35, source="price"),
        ],
    )
    frame = held_beliefs([market])
    assert list(frame["turn"]) == [1, 2, 3]
    assert list(frame["p"]) == [0.35] * 3 and list(frame["final"]) == [False, False, True]
    titles = [t.title for t in belief_tables([market])]
    assert "Beliefs: calibration of final beliefs" in titles


def test_steps_that_moved_nothing_are_not_moments() -> None:
    still = trace([50, 50, 70, 70], judge_id="a")
    found = moments([still], top=5)
    assert list(found["after"]) == [70]
