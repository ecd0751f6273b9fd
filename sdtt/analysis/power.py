"""How big a study must be: power of the exact binomial test and of the TOST.

Judgements of the same pair or judge are not independent; the power analysis uses the usual
design effect ``1 + (judges - 1) * icc`` for judgements clustered in pairs, so the
effective number of independent judgements is ``pairs * judges / deff``. With
``icc = 0`` every judgement counts fully (an upper bound on power).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats


def effective_n(pairs: int, judges: int, icc: float) -> int:
    """Independent judgements a design of ``pairs`` x ``judges`` is worth."""
    deff = 1 + (judges - 1) * icc
    return max(1, math.floor(pairs * judges / deff))


def binomial_power(n: int, pc: float, alpha: float = 0.05) -> float:
    """Power of the two-sided exact binomial test of 0.5 when the true proportion correct
    is ``pc``: the chance of landing in the test's rejection region."""
    k = np.arange(n + 1)
    null = stats.binom.pmf(k, n, 0.5)
    # Two-sided exact test (as scipy's binomtest): the p-value of k is the null mass of
    # every outcome at most as likely as k.
    ascending = np.sort(null)
    cumulative = np.cumsum(ascending)
    at_most = np.searchsorted(ascending, null * (1 + 1e-7), side="right")
    reject = cumulative[at_most - 1] <= alpha
    return float(stats.binom.pmf(k[reject], n, pc).sum())


def tost_power(n: int, pc: float, margin: float, alpha: float = 0.05) -> float:
    """Power of the exact binomial TOST for equivalence to 0.5 within ``margin`` when the
    true proportion correct is ``pc`` (usually 0.5: a perfect imitator)."""
    k = np.arange(n + 1)
    low_ok = stats.binom.sf(k - 1, n, 0.5 - margin) < alpha
    high_ok = stats.binom.cdf(k, n, 0.5 + margin) < alpha
    return float(stats.binom.pmf(k[low_ok & high_ok], n, pc).sum())


def power_table(
    pairs: Sequence[int],
    judges: Sequence[int],
    *,
    test: str,
    pc: float,
    margin: float = 0.1,
    alpha: float = 0.05,
    icc: float = 0.0,
) -> list[list[float]]:
    """Power for every pairs x judges design: rows are pairs, columns judges.

    ``test`` is ``"difference"`` (binomial test against 0.5 when the true proportion
    correct is ``pc``) or ``"equivalence"`` (TOST within ``margin`` at true ``pc``).
    """
    table = []
    for n_pairs in pairs:
        row = []
        for n_judges in judges:
            n = effective_n(n_pairs, n_judges, icc)
            if test == "difference":
                row.append(binomial_power(n, pc, alpha))
            else:
                row.append(tost_power(n, pc, margin, alpha))
        table.append(row)
    return table
