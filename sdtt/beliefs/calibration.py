"""Analysis of belief traces: calibration, sharpness, pass rate by turn, moving moments.

Everything here is pure (pandas and numpy, no I/O). A belief ``p`` is the judge's
probability (0-1) that the target is human and ``y`` the truth (1 human, 0 AI).

- **Brier score** ``mean((p - y)^2)`` and Murphy's decomposition over forecast bins:
  ``BS = REL - RES + UNC + residual`` with reliability ``REL = sum n_k (pbar_k -
  obar_k)^2 / N``, resolution ``RES = sum n_k (obar_k - obar)^2 / N`` and uncertainty
  ``UNC = obar(1 - obar)``. The residual is the within-bin variance of the forecasts
  minus their within-bin covariance with the outcomes (WBV - WBC, Stephenson et al.
  2008; it can be negative) and is zero when forecasts within each bin are equal, so
  beliefs with few distinct values (at most :data:`DISTINCT_BINS`, e.g. sliders in steps
  of 10 or 5) get one bin per value and the identity holds exactly;
  :attr:`Calibration.within_bin` reports it either way.
- **Log score** ``mean(-ln(p if y else 1 - p))``, with ``p`` clipped to
  [:data:`LOG_CLIP`, 1 - :data:`LOG_CLIP`] so a confident 0 or 100 costs a lot, not
  infinity.
- **ECE** ``sum n_k |pbar_k - obar_k| / N`` and the **sharpness**, the share of beliefs
  in Turing Trade's outermost bins, 0-9 and 90-100 (its Figures 7-8; the sharpness
  histogram uses the same tenths).
- **Pass rate by turn**: at turn ``t`` the share of judges whose belief (the last given
  by then, carried forward to the trace's X) is on the wrong side of 50, per item and
  then averaged over items as the pass rate averages over pairs; beliefs of exactly 50
  are counted as undecided and left out.
- **Moments that moved belief**: the steps with the largest change of belief, signed
  toward the truth, with the text that had just been revealed.
"""

from __future__ import annotations

import bisect
import math
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from sdtt.beliefs.traces import UNDECIDED, BeliefTrace

LOG_CLIP = 0.01
DEFAULT_BINS = 10
"""Equal-width bins (tenths: 0-9, ..., 90-100) when beliefs take many values."""
DISTINCT_BINS = 21
"""At most this many distinct beliefs get one bin each (the decomposition is then exact)."""
TENTHS = np.arange(DEFAULT_BINS + 1) / DEFAULT_BINS
"""Edges of the tenths for histograms (``np.histogram(bins=TENTHS)``): exact k / 10, so
a belief of 30 falls in 30-39 as the calibration bins put it (``bins=10, range=(0, 1)``
puts it in 20-29)."""
SHARP_LOW, SHARP_HIGH = TENTHS[1], TENTHS[-2]
"""Sharp beliefs: below ``SHARP_LOW`` (the 0-9 bin) or at least ``SHARP_HIGH`` (90-100)."""
GROUP_COLUMNS = ("judge", "model", "mode")
"""How belief analyses are broken down, as the scores are: judge (type, model, source),
the bot's model and mode; turns are the rows of the by-turn tables."""


@dataclass
class Calibration:
    """Calibration figures of a set of beliefs."""

    n: int
    brier: float
    reliability: float
    resolution: float
    uncertainty: float
    log_score: float
    ece: float
    sharpness: float
    within_bin: float
    """The residual ``Brier - (REL - RES + UNC)``: within-bin variance of the forecasts
    minus their within-bin covariance with the outcomes; zero when forecasts within each
    bin are equal, and it can be negative."""
    bins: pd.DataFrame = field(default_factory=pd.DataFrame)
    """Per bin: ``low``, ``high``, ``n``, ``mean_p``, ``observed`` (for the diagram)."""
    binning: str = ""
    """How the forecasts were binned (one bin per distinct belief, or equal widths)."""


def check_beliefs(forecasts: np.ndarray, outcomes: np.ndarray) -> None:
    """Refuse what calibration cannot mean: a ValueError naming the first bad value."""
    if forecasts.shape != outcomes.shape:
        raise ValueError(
            f"{len(forecasts)} beliefs but {len(outcomes)} outcomes: give one outcome per belief."
        )
    bad = np.flatnonzero(~((forecasts >= 0) & (forecasts <= 1)))
    if bad.size:
        raise ValueError(
            f"belief {bad[0]} is {float(forecasts[bad[0]]):g}: beliefs are probabilities "
            "from 0 to 1 (divide a 0-100 belief by 100)."
        )
    bad = np.flatnonzero((outcomes != 0) & (outcomes != 1))
    if bad.size:
        raise ValueError(
            f"outcome {bad[0]} is {float(outcomes[bad[0]]):g}: outcomes are 1 (human) or 0 (AI)."
        )


def _bin_forecasts(
    forecasts: np.ndarray, bins: int | None
) -> tuple[np.ndarray, list[tuple[float, float]], str]:
    """Each forecast's bin, the bins' (low, high) and a description.

    ``bins=None`` picks one bin per distinct value when there are at most
    :data:`DISTINCT_BINS` of them, else :data:`DEFAULT_BINS` tenths; a number asks for
    that many equal-width bins (the last includes 1).
    """
    values = np.unique(forecasts)
    if bins is None and len(values) <= DISTINCT_BINS:
        index = np.searchsorted(values, forecasts)
        return index, [(float(v), float(v)) for v in values], "one bin per distinct belief"
    count = DEFAULT_BINS if bins is None else bins
    # The nudge keeps an edge k / count in bin k despite rounding ((15 / 22) * 22 is
    # 14.999999999999998).
    index = np.minimum(np.floor(forecasts * count + 1e-9).astype(int), count - 1)
    edges = [(k / count, (k + 1) / count) for k in range(count)]
    return index, edges, f"{count} equal-width bins"


def calibration(
    p: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    bins: int | None = None,
) -> Calibration:
    """Brier score and its decomposition, log score, ECE and sharpness of ``p`` vs ``y``.

    ``p`` are probabilities (0-1) that the target is human, ``y`` the truths (1 or 0); a
    NaN, a belief outside 0-1 or an outcome other than 0 and 1 raises ValueError. Bins:
    see :func:`_bin_forecasts` (``None``, the default, keeps the decomposition exact for
    beliefs with few distinct values).
    """
    forecasts = np.asarray(p, dtype=float)
    outcomes = np.asarray(y, dtype=float)
    check_beliefs(forecasts, outcomes)
    n = len(forecasts)
    if n == 0:
        nan = math.nan
        return Calibration(0, nan, nan, nan, nan, nan, nan, nan, nan)
    brier = float(np.mean((forecasts - outcomes) ** 2))
    base = float(np.mean(outcomes))
    index, edges, binning = _bin_forecasts(forecasts, bins)
    rows = []
    reliability = resolution = ece = 0.0
    for k, (low, high) in enumerate(edges):
        mask = index == k
        count = int(mask.sum())
        mean_p = float(forecasts[mask].mean()) if count else math.nan
        observed = float(outcomes[mask].mean()) if count else math.nan
        if count:
            reliability += count * (mean_p - observed) ** 2 / n
            resolution += count * (observed - base) ** 2 / n
            ece += count * abs(mean_p - observed) / n
        rows.append({"low": low, "high": high, "n": count, "mean_p": mean_p, "observed": observed})
    uncertainty = base * (1 - base)
    clipped = np.clip(forecasts, LOG_CLIP, 1 - LOG_CLIP)
    log_score = float(np.mean(-np.log(np.where(outcomes == 1, clipped, 1 - clipped))))
    sharp = float(np.mean((forecasts < SHARP_LOW) | (forecasts >= SHARP_HIGH)))
    return Calibration(
        n=n,
        brier=brier,
        reliability=reliability,
        resolution=resolution,
        uncertainty=uncertainty,
        log_score=log_score,
        ece=ece,
        sharpness=sharp,
        within_bin=brier - (reliability - resolution + uncertainty),
        bins=pd.DataFrame(rows),
        binning=binning,
    )


def judge_label(trace: BeliefTrace) -> str:
    """``human``, ``market`` (a market's price) or ``llm <model> (<belief source>)``: how
    traces are told apart."""
    source = trace.points[0].source if trace.points else "stated"
    if trace.judge_type == "human":
        return "market" if source == "price" else "human"
    return f"llm {trace.judge_model} ({source})"


def usable_traces(traces: Iterable[BeliefTrace]) -> list[BeliefTrace]:
    """Traces that count: test items, not excluded, with at least one belief."""
    return [
        t for t in traces if t.pair_kind == "test" and not t.excluded and t.final_belief is not None
    ]


def _condition(trace: BeliefTrace) -> dict[str, Any]:
    bot = trace.shown.bot
    return {
        "judge": judge_label(trace),
        "judge_type": trace.judge_type,
        "model": str(bot.model) if bot is not None and bot.model is not None else "?",
        "mode": bot.mode if bot is not None else "?",
        "x": trace.x_turns,
        "total": trace.total_turns,
        "item": trace.item_id,
        "judge_id": trace.judge_id,
        "y": 1.0 if trace.target_human else 0.0,
    }


def held_beliefs(traces: Iterable[BeliefTrace]) -> pd.DataFrame:
    """One row per usable trace and turn 1..its horizon: the belief held then (the last
    given at or before that turn, carried forward; none before the first), plus
    ``final`` on the last row.

    The horizon is the later of the trace's last belief and its X (the turns revealed in
    all), so a judge who stopped moving the slider, or a market whose every trade came
    before the first answer (turn 0), still holds a belief at every turn up to X.
    """
    # Built as columns: a trace's condition once, then a number per row (a million
    # traces make millions of rows; a dict per row took gigabytes).
    conditions: list[tuple[Any, ...]] = []
    owner, turns, held = array("q"), array("q"), array("d")
    finals = bytearray()
    for trace in usable_traces(traces):
        given = [
            (point.turn, index, point.belief)
            for index, point in enumerate(trace.points)
            if point.turn is not None and point.belief is not None
        ]
        if not given:
            continue
        horizon = max(max(turn for turn, _, _ in given), trace.x_turns, 1)
        given.sort()
        latest, belief, position = -1, 0.0, 0
        rows_before = len(turns)
        for turn in range(1, horizon + 1):
            # Held: the belief given last (in the trace's order) at or before this turn.
            while position < len(given) and given[position][0] <= turn:
                if given[position][1] > latest:
                    latest, belief = given[position][1], given[position][2]
                position += 1
            if latest < 0:
                continue
            owner.append(len(conditions))
            turns.append(turn)
            held.append(belief / 100)
            finals.append(turn == horizon)
        if len(turns) > rows_before:
            condition = _condition(trace)
            conditions.append(tuple(condition[name] for name in _condition_columns()))
    columns = [*_condition_columns(), "turn", "p", "final"]
    if not conditions:
        return pd.DataFrame([], columns=columns)
    frame = pd.DataFrame(conditions, columns=_condition_columns())
    frame = frame.iloc[np.frombuffer(owner, dtype=np.int64)].reset_index(drop=True)
    frame["turn"] = np.frombuffer(turns, dtype=np.int64)
    frame["p"] = np.frombuffer(held, dtype=np.float64)
    frame["final"] = np.frombuffer(bytes(finals), dtype=np.bool_)
    return frame


def _condition_columns() -> list[str]:
    return ["judge", "judge_type", "model", "mode", "x", "total", "item", "judge_id", "y"]


def calibration_table(
    frame: pd.DataFrame, by: Sequence[str] = GROUP_COLUMNS, bins: int | None = None
) -> pd.DataFrame:
    """Calibration of final beliefs, one row per group."""
    final = frame.loc[frame["final"]]
    rows = []
    for key, part in final.groupby(list(by), sort=True, dropna=False):
        values = key if isinstance(key, tuple) else (key,)
        found = calibration(part["p"].to_numpy(), part["y"].to_numpy(), bins)
        rows.append(
            {
                **dict(zip(by, values, strict=True)),
                "beliefs": found.n,
                "brier": found.brier,
                "reliability": found.reliability,
                "resolution": found.resolution,
                "uncertainty": found.uncertainty,
                "log_score": found.log_score,
                "ece": found.ece,
                "sharpness": found.sharpness,
                "residual": found.within_bin,
            }
        )
    return pd.DataFrame(rows)


def by_turn(frame: pd.DataFrame, by: Sequence[str] = GROUP_COLUMNS) -> pd.DataFrame:
    """Per group and turn: judges, the pass rate from traces (the share of judges on the
    wrong side, averaged over items as the pass rate averages over pairs), undecided
    judges, mean belief in the truth and the Brier score (both over judges)."""
    rows = []
    for key, part in frame.groupby([*by, "turn"], sort=True, dropna=False):
        values = key if isinstance(key, tuple) else (key,)
        p, y = part["p"].to_numpy(), part["y"].to_numpy()
        decided = p != UNDECIDED / 100
        wrong = ((p > 0.5) != (y == 1)) & decided
        per_item = (
            pd.DataFrame({"item": part["item"].to_numpy(), "wrong": wrong, "decided": decided})
            .loc[decided]
            .groupby("item")["wrong"]
            .mean()
        )
        rows.append(
            {
                **dict(zip([*by, "turn"], values, strict=True)),
                "judges": len(part),
                "items": int(per_item.size),
                "undecided": int((~decided).sum()),
                "wrong_side": float(per_item.mean()) if per_item.size else math.nan,
                "belief_in_truth": float(np.mean(np.where(y == 1, p, 1 - p))),
                "brier": float(np.mean((p - y) ** 2)),
            }
        )
    return pd.DataFrame(rows)


def moments(traces: Iterable[BeliefTrace], top: int = 5) -> pd.DataFrame:
    """Per bot model, the ``top`` steps that moved belief most (from 50 before the first
    belief; steps that moved nothing are left out), with ``toward_truth`` > 0 when the
    step moved belief toward the truth. Ties go by judge, item and turn (no turn last),
    then by the order read."""
    # Only each model's best so far is kept: a million traces make millions of steps.
    best: dict[str, list[tuple[tuple[Any, ...], dict[str, Any]]]] = {}
    read = 0
    for trace in usable_traces(traces):
        condition: dict[str, Any] | None = None
        before = UNDECIDED
        for point in trace.points:
            if point.belief is None:
                continue
            shift = point.belief - before
            if shift == 0:
                continue  # a reading that moved nothing (a market's opening or close)
            condition = condition or _condition(trace)
            toward = shift if trace.target_human else -shift
            turn = point.turn
            rank = (-abs(toward), trace.judge_id, trace.item_id, turn is None, turn or 0, read)
            read += 1
            kept = best.setdefault(condition["model"], [])
            if len(kept) < top or (kept and rank < kept[-1][0]):
                row = {
                    **condition,
                    "turn": turn,
                    "before": before,
                    "after": point.belief,
                    "toward_truth": toward,
                    "text": point.text or "",
                }
                bisect.insort(kept, (rank, row), key=lambda item: item[0])
                del kept[top:]
            before = point.belief
    rows = [row for model in sorted(best) for _, row in best[model]]
    return pd.DataFrame(rows)
