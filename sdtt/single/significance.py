"""The papers' tests for single-item studies, written out so each formula is visible.

- :func:`wilcoxon_one_sample`: one-sample Wilcoxon signed-rank test of per-judge rates
  against 0.5 (normal approximation with tie correction, zeros dropped, reported as z as
  the papers do);
- :func:`mann_whitney`: Mann-Whitney U test of two groups of per-judge rates (normal
  approximation with tie and continuity correction);
- :func:`permutation_test`: two-sided permutation test of a difference in means (exact
  when every relabelling can be counted, else Monte Carlo), with :func:`bonferroni` for
  many comparisons.

Each is checked against SciPy and statsmodels in the tests.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from sdtt.seeds import seeded_generator

NAN = float("nan")
EXACT_LIMIT = 20000
"""Relabellings counted exactly at most; above, a seeded Monte Carlo draw of as many."""


@dataclass(frozen=True)
class Significance:
    """A test's statistic, its z (when it has one), p-value and sample sizes."""

    statistic: float
    z: float
    p: float
    n: tuple[int, ...]


def _tie_term(ranks_of: np.ndarray) -> float:
    _, counts = np.unique(ranks_of, return_counts=True)
    return float(np.sum(counts.astype(float) ** 3 - counts))


def wilcoxon_one_sample(values: Sequence[float], centre: float = 0.5) -> Significance:
    """Signed-rank test of ``values`` against ``centre``: the statistic is the smaller of
    the positive and negative rank sums (as SciPy reports it), z from the sum of positive
    ranks."""
    differences = np.asarray(values, dtype=float) - centre
    differences = differences[~np.isnan(differences)]
    differences = differences[differences != 0]
    n = differences.size
    if n == 0:
        return Significance(NAN, NAN, NAN, (0,))
    ranks = stats.rankdata(np.abs(differences))
    positive = float(ranks[differences > 0].sum())
    negative = float(ranks[differences < 0].sum())
    mean = n * (n + 1) / 4
    variance = n * (n + 1) * (2 * n + 1) / 24 - _tie_term(np.abs(differences)) / 48
    z = (positive - mean) / math.sqrt(variance) if variance > 0 else NAN
    p = float(2 * stats.norm.sf(abs(z))) if not math.isnan(z) else NAN
    return Significance(min(positive, negative), z, min(1.0, p), (n,))


def mann_whitney(first: Sequence[float], second: Sequence[float]) -> Significance:
    """U of ``first`` (its rank sum less its minimum), z and two-sided p."""
    x = np.asarray(first, dtype=float)
    y = np.asarray(second, dtype=float)
    x, y = x[~np.isnan(x)], y[~np.isnan(y)]
    n1, n2 = x.size, y.size
    if n1 == 0 or n2 == 0:
        return Significance(NAN, NAN, NAN, (n1, n2))
    pooled = np.concatenate([x, y])
    ranks = stats.rankdata(pooled)
    u = float(ranks[:n1].sum() - n1 * (n1 + 1) / 2)
    n = n1 + n2
    mean = n1 * n2 / 2
    variance = n1 * n2 / 12 * ((n + 1) - _tie_term(pooled) / (n * (n - 1)))
    if variance <= 0:
        return Significance(u, NAN, 1.0, (n1, n2))
    # Continuity correction: half a step towards the mean.
    z = (abs(u - mean) - 0.5) / math.sqrt(variance)
    z = max(z, 0.0) * (1 if u >= mean else -1)
    return Significance(u, z, min(1.0, float(2 * stats.norm.sf(abs(z)))), (n1, n2))


def permutation_test(
    first: Sequence[float], second: Sequence[float], *, reps: int = EXACT_LIMIT, seed: int = 0
) -> Significance:
    """Two-sided permutation test of ``mean(first) - mean(second)``: twice the smaller
    one-sided share of relabellings at least as extreme, capped at 1 (SciPy's rule)."""
    x = np.asarray(first, dtype=float)
    y = np.asarray(second, dtype=float)
    n1, n2 = x.size, y.size
    if n1 == 0 or n2 == 0:
        return Significance(NAN, NAN, NAN, (n1, n2))
    pooled = np.concatenate([x, y])
    observed = float(x.mean() - y.mean())
    total = pooled.sum()
    if math.comb(n1 + n2, n1) <= reps:
        # Every way to pick which values form the first group, the observed one included.
        sums = np.array(
            [pooled[list(chosen)].sum() for chosen in itertools.combinations(range(n1 + n2), n1)]
        )
        null = sums / n1 - (total - sums) / n2
        less = float(np.mean(null <= observed + 1e-12))
        greater = float(np.mean(null >= observed - 1e-12))
    else:
        rng = seeded_generator(seed)
        sums = np.empty(reps)
        block = max(1, 2_000_000 // (n1 + n2))  # relabellings held in memory at once
        for start in range(0, reps, block):
            size = min(block, reps - start)
            shuffled = rng.permuted(np.tile(pooled, (size, 1)), axis=1)
            sums[start : start + size] = shuffled[:, :n1].sum(axis=1)
        null = sums / n1 - (total - sums) / n2
        # The observed labelling counts as one of the draws (so p is never 0).
        less = (float(np.sum(null <= observed + 1e-12)) + 1) / (reps + 1)
        greater = (float(np.sum(null >= observed - 1e-12)) + 1) / (reps + 1)
    return Significance(observed, NAN, min(1.0, 2 * min(less, greater)), (n1, n2))


def bonferroni(p_values: Sequence[float]) -> list[float]:
    """Each p-value times the number of comparisons, capped at 1 (NaN stays NaN and does
    not count as a comparison)."""
    m = sum(1 for p in p_values if not math.isnan(p))
    return [p if math.isnan(p) else min(1.0, p * m) for p in p_values]
