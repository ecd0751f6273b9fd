"""The papers' tests as sdtt writes them, against SciPy and statsmodels."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from sdtt.single.significance import (
    bonferroni,
    mann_whitney,
    permutation_test,
    wilcoxon_one_sample,
)

RNG = np.random.default_rng(11)
# Per-judge rates as the scoring makes them: shares of a few trials, so ties abound.
RATE_SAMPLES = [RNG.integers(0, 11, size=size) / 10 for size in (8, 15, 40)] + [
    np.array([0.5, 0.6, 0.7, 0.7, 0.8, 0.3, 0.9, 0.9, 1.0, 0.6])
]


@pytest.mark.parametrize("values", RATE_SAMPLES)
def test_wilcoxon_matches_scipy_normal_approximation(values: np.ndarray) -> None:
    ours = wilcoxon_one_sample(values, 0.5)
    theirs = stats.wilcoxon(values - 0.5, zero_method="wilcox", correction=False, method="approx")
    assert ours.statistic == pytest.approx(theirs.statistic)
    assert ours.p == pytest.approx(theirs.pvalue, rel=1e-9)
    assert abs(ours.z) == pytest.approx(abs(theirs.zstatistic), rel=1e-9)
    assert ours.n == (int(np.sum(values != 0.5)),)


def test_wilcoxon_z_is_positive_when_rates_are_above_chance() -> None:
    assert wilcoxon_one_sample([0.7, 0.8, 0.9, 0.6, 0.75]).z > 0
    assert wilcoxon_one_sample([0.3, 0.2, 0.1, 0.4, 0.25]).z < 0


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (RATE_SAMPLES[0], RATE_SAMPLES[1]),
        (RATE_SAMPLES[2], RATE_SAMPLES[3]),
        ([0.1, 0.2, 0.3], [0.7, 0.8, 0.9, 1.0]),
    ],
)
def test_mann_whitney_matches_scipy_asymptotic(first: np.ndarray, second: np.ndarray) -> None:
    ours = mann_whitney(first, second)
    theirs = stats.mannwhitneyu(first, second, alternative="two-sided", method="asymptotic")
    assert ours.statistic == pytest.approx(theirs.statistic)
    assert ours.p == pytest.approx(theirs.pvalue, rel=1e-9)


def _mean_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x, axis=axis) - np.mean(y, axis=axis)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ([1.0, 1.0, 0.0, 1.0, 1.0, 0.0], [0.0, 0.0, 1.0, 0.0, 0.0]),
        ([0.2, 0.9, 0.4, 0.8], [0.1, 0.3, 0.35, 0.2, 0.05]),
        ([1.0, 0.0, 1.0], [1.0, 0.0, 1.0, 0.0]),
    ],
)
def test_exact_permutation_test_matches_scipy(first: list[float], second: list[float]) -> None:
    ours = permutation_test(first, second)
    theirs = stats.permutation_test(
        (np.array(first), np.array(second)),
        _mean_difference,
        permutation_type="independent",
        alternative="two-sided",
        n_resamples=np.inf,
        vectorized=True,
    )
    assert ours.statistic == pytest.approx(theirs.statistic)
    assert ours.p == pytest.approx(theirs.pvalue)


def test_monte_carlo_permutation_test_agrees_with_scipy_within_noise() -> None:
    x = RNG.integers(0, 2, size=40).astype(float)
    y = (RNG.random(45) < 0.3).astype(float)
    ours = permutation_test(x, y, reps=5000, seed=1)
    theirs = stats.permutation_test(
        (x, y), _mean_difference, n_resamples=5000, vectorized=True, rng=2
    )
    assert ours.p == pytest.approx(theirs.pvalue, abs=0.02)


def test_bonferroni_matches_statsmodels() -> None:
    p = [0.001, 0.02, 0.04, 0.3, 0.8]
    _, corrected, _, _ = multipletests(p, method="bonferroni")
    assert bonferroni(p) == pytest.approx(list(corrected))
    # A missing test is not a comparison.
    assert bonferroni([0.01, float("nan")])[0] == pytest.approx(0.01)
