"""Intervals and tests for proportions of correct identifications.

All functions take counts or arrays and return plain floats (NaN when there is no data),
so zero-variance and empty cases never raise. ``pc`` is the proportion of judgements
that found the bot; the pass rate is ``1 - pc``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray
from scipy import sparse, stats

from sdtt.analysis.defaults import DEFAULT_BOOTSTRAP
from sdtt.seeds import seeded_generator

NAN = float("nan")
BOOTSTRAP_CELLS = 4_000_000
"""Replicates x pairs held in memory at once by the bootstrap (it works in blocks)."""


def wilson(k: float, n: float, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for ``k`` successes in ``n`` trials."""
    if n <= 0:
        return NAN, NAN
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def binomial_p(k: int, n: int, p: float = 0.5) -> float:
    """Two-sided exact binomial test of ``k`` of ``n`` against ``p``."""
    if n <= 0:
        return NAN
    return float(stats.binomtest(int(k), int(n), p).pvalue)


def tost_p(k: int, n: int, margin: float) -> float:
    """Exact binomial TOST p-value for equivalence of the proportion to 0.5 within
    ``margin``: the larger of the two one-sided p-values (H0: p <= 0.5 - margin and
    H0: p >= 0.5 + margin). Small means "indistinguishable within the margin"."""
    if n <= 0:
        return NAN
    if not 0 < margin < 0.5:
        raise ValueError("margin must be between 0 and 0.5")
    low = float(stats.binom.sf(int(k) - 1, int(n), 0.5 - margin))
    high = float(stats.binom.cdf(int(k), int(n), 0.5 + margin))
    return max(low, high)


def dprime_2afc(pc: float, n: float) -> float:
    """Sensitivity of a two-alternative forced choice: ``sqrt(2) * z(pc)``.

    A proportion of 0 or 1 is moved to ``(k + 1/2) / (n + 1)`` (the log-linear rule,
    Hautus 1995) so d' stays finite; the ``1/(2n)`` rule would move one correct judgement
    of one to 0.5, a d' of 0, as if the judge had guessed.
    """
    if n <= 0 or math.isnan(pc):
        return NAN
    if pc in (0.0, 1.0):
        pc = (pc * n + 0.5) / (n + 1)
    return float(math.sqrt(2) * stats.norm.ppf(pc))


def effective_n(pair_codes: NDArray[np.int64], correct: NDArray[np.float64]) -> float:
    """Kish's effective sample size of judgements clustered in pairs: ``n / DEFF`` with
    ``DEFF = 1 + (m - 1) ICC``, ``m`` the mean judgements per pair and ICC the one-way
    ANOVA intraclass correlation of the 0/1 judgements (clipped to [0, 1]), so it lies
    between the number of pairs (judgements of a pair all alike) and the number of
    judgements (pairs no more alike inside than across). Where the data cannot tell (every
    judgement the same, or one pair) it is the number of pairs, the cautious end.
    """
    n = correct.size
    if n == 0:
        return NAN
    sizes = np.bincount(pair_codes).astype(float)
    sums = np.bincount(pair_codes, weights=correct)
    kept = sizes > 0
    sizes, sums = sizes[kept], sums[kept]
    k = sizes.size
    if k == n:
        return float(n)  # one judgement per pair: nothing clusters
    share = sums / sizes
    within = float(np.sum(sizes * share * (1 - share))) / (n - k)
    between = float(np.sum(sizes * (share - correct.mean()) ** 2)) / (k - 1) if k > 1 else NAN
    m0 = (n - float(np.sum(sizes**2)) / n) / (k - 1) if k > 1 else NAN
    denominator = between + (m0 - 1) * within
    if k == 1 or not denominator > 0:
        return float(k)
    icc = min(max((between - within) / denominator, 0.0), 1.0)
    return float(n / (1 + (n / k - 1) * icc))


def pair_averaged_pc(pair_codes: NDArray[np.int64], correct: NDArray[np.float64]) -> float:
    """Mean over pairs of each pair's share correct (``(1/N) sum C_i / K_i``)."""
    if correct.size == 0:
        return NAN
    c = np.bincount(pair_codes, weights=correct)
    k = np.bincount(pair_codes).astype(float)
    seen = k > 0
    return float(np.mean(c[seen] / k[seen]))


def cluster_bootstrap(
    pair_codes: NDArray[np.int64],
    judge_codes: NDArray[np.int64],
    correct: NDArray[np.float64],
    *,
    reps: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Two-way cluster bootstrap over pairs and judges.

    Each replicate draws pairs and judges with replacement, independently; a judgement
    counts as often as its pair times its judge was drawn. Returns the replicates'
    pair-averaged and pooled proportions correct (NaN where a replicate kept nothing).
    Works on (pair, judge) cell totals with sparse products, in blocks of replicates.
    """
    if correct.size == 0 or reps <= 0:
        return np.full(max(reps, 0), np.nan), np.full(max(reps, 0), np.nan)
    rng = seeded_generator(seed)
    n_pairs = int(pair_codes.max()) + 1
    n_judges = int(judge_codes.max()) + 1
    c_cells = sparse.csr_matrix((correct, (judge_codes, pair_codes)), shape=(n_judges, n_pairs))
    k_cells = sparse.csr_matrix(
        (np.ones_like(correct), (judge_codes, pair_codes)), shape=(n_judges, n_pairs)
    )
    c_t = c_cells.T.tocsr()
    k_t = k_cells.T.tocsr()
    averaged = np.empty(reps)
    pooled = np.empty(reps)
    block = max(1, BOOTSTRAP_CELLS // max(n_pairs, n_judges))
    for start in range(0, reps, block):
        size = min(block, reps - start)
        judge_w = rng.multinomial(n_judges, np.full(n_judges, 1 / n_judges), size=size)
        pair_w = rng.multinomial(n_pairs, np.full(n_pairs, 1 / n_pairs), size=size)
        c = np.asarray(c_t @ judge_w.T.astype(float)).T
        k = np.asarray(k_t @ judge_w.T.astype(float)).T
        seen = k > 0
        ratio = np.divide(c, k, out=np.zeros_like(c), where=seen)
        weight = pair_w * seen
        with np.errstate(invalid="ignore", divide="ignore"):
            averaged[start : start + size] = (weight * ratio).sum(1) / weight.sum(1)
            pooled[start : start + size] = (pair_w * c).sum(1) / (pair_w * k).sum(1)
    return averaged, pooled


def percentile_interval(
    values: NDArray[np.float64], confidence: float = 0.95
) -> tuple[float, float]:
    """The central percentile interval of bootstrap replicates (NaN ones ignored)."""
    kept = values[~np.isnan(values)]
    if kept.size == 0:
        return NAN, NAN
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(kept, [tail, 100 - tail])
    return float(low), float(high)
