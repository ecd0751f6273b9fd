"""Sequential judging: an anytime-valid confidence sequence for the proportion correct,
and the stopping rule built on it, so a study may look at its pass rate after every
judgement and stop as soon as it has a conclusion, at no cost in error rate.

The confidence sequence is Robbins' beta-binomial mixture (Robbins 1970, "Statistical
methods related to the law of the iterated logarithm", Ann. Math. Statist. 41; see also
Howard, Ramdas, McAuliffe & Sekhon 2021, "Time-uniform, nonparametric, nonasymptotic
confidence sequences", Ann. Statist. 49, section on conjugate mixtures). After ``n``
judgements of which ``S`` were correct, for a candidate proportion correct ``p``::

    M_n(p) = B(a + S, b + n - S) / B(a, b) / (p^S (1 - p)^(n - S))

where ``B`` is the beta function and ``Beta(a, b)`` the mixing distribution. ``M_n(p)``
is the likelihood ratio of the Beta(a, b) mixture of Bernoulli laws against Bernoulli(p):
a nonnegative martingale with mean 1 when ``p`` is the truth, so by Ville's inequality
``P(exists n: M_n(p) >= 1/alpha) <= alpha``. The confidence sequence is
``C_n = {p : M_n(p) < 1/alpha}``; ``log M_n`` is convex in ``p`` with its minimum at
``S/n``, so ``C_n`` is an interval around ``S/n``. Every ``C_n`` covers the truth at once
with probability at least ``1 - alpha``, so their running intersection does too: that is
the interval reported.

Judgements count as independent trials, as for the Wilson interval and the exact TOST
that ``sdtt score`` reports at a fixed n (see :mod:`sdtt.analysis.stats`); the mixing
distribution is ``Beta(10, 10)``, centred on chance, which keeps the sequence narrow
for the pass rates a Turing test sees (chosen by simulating the stopping times).

The stopping rule, checked after every judgement, stops at the first of:

- *differs*: 0.5 has left the sequence: the pass rate differs from 50%;
- *equivalent*: the sequence lies inside ``0.5 +- margin``: indistinguishable within the
  margin, the sequential counterpart of the TOST.

Both read one confidence sequence, so the chance of any wrong conclusion, however often
one looks, is at most ``alpha`` (a wrong "differs" needs 0.5, the truth, to leave the
sequence; a wrong "equivalent" needs a truth outside the margin to). The equivalence
claim is thereby at level ``alpha``, more cautious than a fixed-n TOST at ``alpha``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray
from scipy import special

from sdtt.seeds import seeded_generator

PRIOR = (10.0, 10.0)
"""``(a, b)`` of the Beta mixing distribution."""

Conclusion = Literal["differs", "equivalent"]
"""What the stopping rule concludes: the pass rate differs from 50%, or is equivalent
to 50% within the margin (also what a plan aims for)."""


def log_mixture(
    correct: NDArray[np.int64] | int,
    n: NDArray[np.int64] | int,
    p: NDArray[np.float64] | float,
    prior: tuple[float, float] = PRIOR,
) -> NDArray[np.float64]:
    """``log M_n(p)`` for ``correct`` of ``n`` (arrays broadcast): the evidence against
    a proportion correct of ``p``; ``p`` leaves the sequence when it reaches
    ``log(1/alpha)``."""
    a, b = prior
    s = np.asarray(correct, dtype=float)
    total = np.asarray(n, dtype=float)
    # p at 0 or 1 exactly is out of every sequence that saw both outcomes; clipped, the
    # logarithms stay finite.
    q = np.clip(np.asarray(p, dtype=float), 1e-15, 1 - 1e-15)
    value = (
        special.betaln(a + s, b + total - s)
        - special.betaln(a, b)
        - s * np.log(q)
        - (total - s) * np.log1p(-q)
    )
    return np.asarray(value, dtype=float)


def bounds(
    correct: int, n: int, alpha: float = 0.05, prior: tuple[float, float] = PRIOR
) -> tuple[float, float]:
    """The interval ``C_n`` for the proportion correct after ``correct`` of ``n``
    (``(0, 1)`` before any judgement)."""
    if n <= 0:
        return 0.0, 1.0
    low, high = interval_arrays(np.array([correct]), np.array([n]), alpha, prior)
    return float(low[0]), float(high[0])


def interval_arrays(
    correct: NDArray[np.int64],
    n: NDArray[np.int64],
    alpha: float = 0.05,
    prior: tuple[float, float] = PRIOR,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``C_n`` for many (correct, n) at once (each ``n >= 1``), by bisection on each side
    of ``correct / n``: ``log M_n`` is convex with its minimum there, below the level."""
    level = math.log(1 / alpha)
    centre = correct / n

    def side(outer: float) -> NDArray[np.float64]:
        inside = centre.astype(float)
        edge = np.full(centre.shape, outer)
        # Where even the edge is inside the sequence, the bound is the edge itself.
        at_edge = log_mixture(correct, n, outer, prior) < level
        for _ in range(60):
            middle = (inside + edge) / 2
            out = log_mixture(correct, n, middle, prior) >= level
            edge = np.where(out, middle, edge)
            inside = np.where(out, inside, middle)
        return np.where(at_edge, outer, (inside + edge) / 2)

    return side(0.0), side(1.0)


@dataclass(frozen=True)
class SequentialResult:
    """The confidence sequence after the last judgement and when the rule stopped.

    Intervals are of the pass rate (1 - proportion correct), as every sdtt table shows.
    """

    judgements: int
    correct: int
    low: float
    high: float
    """Running intersection of the sequence so far, as a pass-rate interval."""
    margin: float
    alpha: float
    stopped_at: int | None
    """The judgement (1-based) at which the rule first reached a conclusion, or None."""
    conclusion: Conclusion | None

    def line(self) -> str:
        """The stopping rule's state in words."""
        if self.conclusion == "differs":
            return f"stop at judgement {self.stopped_at}: pass rate differs from 50%"
        if self.conclusion == "equivalent":
            return (
                f"stop at judgement {self.stopped_at}: equivalent to 50% within +-{self.margin:g}"
            )
        return "not met: keep recruiting"


def sequential_test(
    outcomes: Sequence[bool] | NDArray[np.bool_],
    *,
    margin: float,
    alpha: float = 0.05,
    prior: tuple[float, float] = PRIOR,
    interval: bool = True,
) -> SequentialResult:
    """Walk judgements in the order they arrived (True: the judge found the bot) and
    report the running confidence sequence and the first judgement where the stopping
    rule (see the module docstring) was met. ``interval=False`` skips computing the
    interval (reported as 0 to 100%) when only the stopping point is wanted."""
    values = np.asarray(outcomes, dtype=bool)
    n = values.size
    counts = np.arange(1, n + 1)
    successes = np.cumsum(values)
    level = math.log(1 / alpha)
    differs = log_mixture(successes, counts, 0.5, prior) >= level
    below = _excluded(successes, counts, 0.5 - margin, level, prior, above=True)
    over = _excluded(successes, counts, 0.5 + margin, level, prior, above=False)
    equivalent = np.logical_or.accumulate(below) & np.logical_or.accumulate(over)
    stopped_at: int | None = None
    conclusion: Conclusion | None = None
    for index in range(n):
        if differs[index]:
            stopped_at, conclusion = index + 1, "differs"
            break
        if equivalent[index]:
            stopped_at, conclusion = index + 1, "equivalent"
            break
    low_pc, high_pc = 0.0, 1.0
    if n and interval:
        lows, highs = interval_arrays(successes, counts, alpha, prior)
        low_pc, high_pc = float(lows.max()), float(highs.min())
    return SequentialResult(
        judgements=n,
        correct=int(successes[-1]) if n else 0,
        low=1 - high_pc,
        high=1 - low_pc,
        margin=margin,
        alpha=alpha,
        stopped_at=stopped_at,
        conclusion=conclusion,
    )


def _excluded(
    successes: NDArray[np.int64],
    counts: NDArray[np.int64],
    p: float,
    level: float,
    prior: tuple[float, float],
    *,
    above: bool,
) -> NDArray[np.bool_]:
    """True where ``p`` is out of ``C_n`` on one side: below it (``above``: the
    sequence lies above ``p``) or over it."""
    out = log_mixture(successes, counts, p, prior) >= level
    side = successes > counts * p if above else successes < counts * p
    return np.asarray(out & side, dtype=bool)


@dataclass(frozen=True)
class SamplePlan:
    """Stopping times of the rule, simulated under a planned pass rate."""

    goal: Conclusion
    simulations: int
    max_judgements: int
    expected: float
    """Mean judgements until the rule stops (a run that never stops counts the cap)."""
    median: float
    p90: float
    worst: int
    """The most judgements any simulated run needed (the cap if one never stopped)."""
    reached: float
    """Share of runs that reached the goal's conclusion within the cap."""
    wrong: float
    """Share of runs that reached the other conclusion first."""


def simulate_stopping(
    pc: float,
    *,
    goal: Conclusion,
    margin: float,
    alpha: float = 0.05,
    max_judgements: int = 2000,
    simulations: int = 2000,
    seed: int = 0,
    prior: tuple[float, float] = PRIOR,
) -> SamplePlan:
    """Run the stopping rule on ``simulations`` seeded streams of independent judgements
    with proportion correct ``pc``, each up to ``max_judgements``.

    Streams are drawn in blocks, so memory stays bounded for any cap.
    """
    level = math.log(1 / alpha)
    rng = seeded_generator(seed)
    counts = np.arange(1, max_judgements + 1)[None, :]
    stops = np.empty(simulations, dtype=np.int64)
    outcome = np.empty(simulations, dtype="U10")
    block = max(1, 1_000_000 // max_judgements)
    for start in range(0, simulations, block):
        size = min(block, simulations - start)
        running = np.cumsum(rng.random((size, max_judgements)) < pc, axis=1, dtype=np.int64)
        differs = np.logical_or.accumulate(
            log_mixture(running, counts, 0.5, prior) >= level, axis=1
        )
        below = _excluded(running, counts, 0.5 - margin, level, prior, above=True)
        over = _excluded(running, counts, 0.5 + margin, level, prior, above=False)
        equivalent = np.logical_or.accumulate(below, axis=1) & np.logical_or.accumulate(
            over, axis=1
        )
        first_differs = np.where(differs.any(1), differs.argmax(1), max_judgements)
        first_equivalent = np.where(equivalent.any(1), equivalent.argmax(1), max_judgements)
        first = np.minimum(first_differs, first_equivalent)
        stops[start : start + size] = np.minimum(first + 1, max_judgements)
        outcome[start : start + size] = np.where(
            first == max_judgements,
            "none",
            np.where(first_differs <= first_equivalent, "differs", "equivalent"),
        )
    other = "equivalent" if goal == "differs" else "differs"
    return SamplePlan(
        goal=goal,
        simulations=simulations,
        max_judgements=max_judgements,
        expected=float(stops.mean()),
        median=float(np.median(stops)),
        p90=float(np.percentile(stops, 90)),
        worst=int(stops.max()),
        reached=float((outcome == goal).mean()),
        wrong=float((outcome == other).mean()),
    )
