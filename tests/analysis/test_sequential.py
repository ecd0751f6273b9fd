"""Sequential judging: the confidence sequence, its error rate under optional stopping,
the stopping rule in ``sdtt score --sequential`` and ``sdtt plan --sequential``."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import optimize, stats

from sdtt.analysis.sequential import PRIOR, bounds, sequential_test, simulate_stopping
from sdtt.cli import main
from sdtt.tasks.judgements import write_judgements
from tests.analysis.helpers import judgement

ALPHA = 0.05


def _reference_log_m(correct: int, n: int, p: float) -> float:
    """log M_n(p) written another way: the beta-binomial mixture's probability of the
    data over the binomial's at p (the binomial coefficients cancel)."""
    a, b = PRIOR
    return float(stats.betabinom.logpmf(correct, n, a, b) - stats.binom.logpmf(correct, n, p))


def _reference_bounds(correct: int, n: int) -> tuple[float, float]:
    level = math.log(1 / ALPHA)

    def f(p: float) -> float:
        return _reference_log_m(correct, n, p) - level

    mle = min(max(correct / n, 1e-9), 1 - 1e-9)
    low = 0.0 if f(1e-12) < 0 else optimize.brentq(f, 1e-12, mle)
    high = 1.0 if f(1 - 1e-12) < 0 else optimize.brentq(f, mle, 1 - 1e-12)
    return low, high


@pytest.mark.parametrize(("correct", "n"), [(0, 5), (7, 10), (30, 50), (51, 100), (410, 1000)])
def test_the_sequence_at_a_fixed_n_matches_an_independent_computation(correct: int, n: int) -> None:
    low, high = bounds(correct, n, ALPHA)
    ref_low, ref_high = _reference_bounds(correct, n)
    assert low == pytest.approx(ref_low, abs=1e-6)
    assert high == pytest.approx(ref_high, abs=1e-6)


def _wilson_excludes_half(correct: np.ndarray, n: np.ndarray) -> np.ndarray:
    """The fixed-n 95% Wilson interval, vectorised: True where it leaves out 0.5."""
    z = stats.norm.ppf(0.975)
    p = correct / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return np.asarray((centre - half > 0.5) | (centre + half < 0.5), dtype=bool)


def test_peeking_after_every_judgement_keeps_the_error_rate_at_most_alpha() -> None:
    # A perfect imitator (half the judges find it): every "differs" is a false alarm.
    rng = np.random.default_rng(2024)
    streams = rng.random((600, 400)) < 0.5
    false_alarms = sum(
        sequential_test(stream, margin=0.1, alpha=ALPHA, interval=False).conclusion == "differs"
        for stream in streams
    )
    assert false_alarms / len(streams) <= ALPHA
    # The same streams, peeked at with the fixed-n interval after every judgement,
    # stop on a false alarm far more often than 5%.
    n = np.arange(1, streams.shape[1] + 1)
    naive = _wilson_excludes_half(np.cumsum(streams, axis=1), n).any(axis=1).mean()
    assert naive > 3 * ALPHA


def test_a_false_equivalence_claim_under_peeking_stays_at_most_alpha() -> None:
    # True proportion correct on the margin's edge: "equivalent" would be wrong.
    rng = np.random.default_rng(7)
    streams = rng.random((600, 600)) < 0.6
    wrong = sum(
        sequential_test(stream, margin=0.1, alpha=ALPHA, interval=False).conclusion == "equivalent"
        for stream in streams
    )
    assert wrong / len(streams) <= ALPHA


def test_the_rule_stops_at_the_first_judgement_where_half_leaves_the_sequence() -> None:
    outcomes = [True, False] + [True] * 40
    level = math.log(1 / ALPHA)
    running = np.cumsum(outcomes)
    expected = next(
        n for n in range(1, len(outcomes) + 1) if _reference_log_m(running[n - 1], n, 0.5) >= level
    )
    result = sequential_test(outcomes, margin=0.1, alpha=ALPHA)
    assert result.conclusion == "differs"
    assert result.stopped_at == expected
    # The pass-rate interval is the running intersection: its top is the smallest
    # upper bound on the pass rate seen so far.
    tops = [1 - _reference_bounds(int(running[n - 1]), n)[0] for n in range(1, len(outcomes) + 1)]
    assert result.high == pytest.approx(min(tops), abs=1e-6)


def test_simulated_stopping_is_seeded_and_close_to_direct_runs() -> None:
    plan = simulate_stopping(0.7, goal="differs", margin=0.1, max_judgements=500, seed=3)
    again = simulate_stopping(0.7, goal="differs", margin=0.1, max_judgements=500, seed=3)
    assert plan == again
    rng = np.random.default_rng(11)
    direct = [
        sequential_test(rng.random(500) < 0.7, margin=0.1, interval=False).stopped_at or 500
        for _ in range(400)
    ]
    assert plan.expected == pytest.approx(np.mean(direct), rel=0.15)
    assert plan.worst >= plan.p90 >= plan.median
    assert plan.reached > 0.95


def _ordered_file(tmp_path: Path, outcomes: list[bool]) -> Path:
    path = tmp_path / "j.jsonl"
    write_judgements(path, [judgement(f"p{i % 7}", f"j{i}", ok) for i, ok in enumerate(outcomes)])
    return path


def test_score_reports_where_the_rule_was_met_in_file_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    outcomes = [True] * 30 + [False] * 10
    path = _ordered_file(tmp_path, outcomes)
    assert main(["score", str(path), "--bootstrap", "0", "--sequential"]) == 0
    out = capsys.readouterr().out
    running = np.cumsum(outcomes)
    level = math.log(1 / ALPHA)
    first = next(n for n in range(1, 41) if _reference_log_m(int(running[n - 1]), n, 0.5) >= level)
    assert f"stop at judgement {first}: pass rate differs from 50%" in out
    assert "no beliefs" not in out  # no trace file was given, so none is missed
    # The same judgements, the wrong ones first: the rule has not been met.
    reordered = _ordered_file(tmp_path, [False] * 10 + [True] * 10)
    assert main(["score", str(reordered), "--bootstrap", "0", "--sequential"]) == 0
    assert "not met: keep recruiting" in capsys.readouterr().out


def test_plan_sequential_shows_expected_and_worst_case(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["plan", "--sequential", "--max-judgements", "400", "--simulations", "300"]
    assert main([*args, "--pass-rate", "0.3"]) == 0
    out = capsys.readouterr().out
    plan = simulate_stopping(
        0.7, goal="differs", margin=0.1, max_judgements=400, simulations=300, seed=0
    )
    assert "expected (mean)" in out and f"{plan.expected:.0f}" in out
    assert "worst case simulated" in out and str(plan.worst) in out
    assert "A fixed-n test needs" in out
    assert main([*args, "--icc", "0.1"]) == 2
    assert "--icc" in capsys.readouterr().err
