"""Analysis of belief traces: calibration, sharpness, pass rate by turn, moving moments.

Everything here is pure (pandas and numpy, no I/O). A belief ``p`` is the judge's
probability (0-1) that the target is human and ``y`` the truth (1 human, 0 AI).

- **Brier score** ``mean((p - y)^2)`` and Murphy's decomposition over forecast bins:
  ``BS = REL - RES + UNC`` with reliability ``REL = sum n_k (pbar_k - obar_k)^2 / N``,
  resolution ``RES = sum n_k (obar_k - obar)^2 / N`` and uncertainty ``UNC = obar(1 -
  obar)``. The identity is exact when forecasts within a bin are equal (e.g. sliders in
  steps of 10 with 11 bins); otherwise it is off by the spread of forecasts within bins,
  which :attr:`Calibration.within_bin` reports.
- **Log score** ``mean(-ln(p if y else 1 - p))``, with ``p`` clipped to
  [:data:`LOG_CLIP`, 1 - :data:`LOG_CLIP`] so a confident 0 or 100 costs a lot, not
  infinity.
- **ECE** ``sum n_k |pbar_k - obar_k| / N`` and the **sharpness** share of beliefs at
  most 0.1 or at least 0.9 (Turing Trade's Figures 7-8).
- **Pass rate by turn**: at turn ``t`` the share of judges whose belief (the last given
  by then) is on the wrong side of 50; beliefs of exactly 50 are counted as undecided.
- **Moments that moved belief**: the steps with the largest change of belief, signed
  toward the truth, with the text that had just been revealed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from sdtt.beliefs.traces import UNDECIDED, BeliefTrace

LOG_CLIP = 0.01
DEFAULT_BINS = 10
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
    """Brier - (REL - RES + UNC): zero when forecasts within each bin are equal."""
    bins: pd.DataFrame = field(default_factory=pd.DataFrame)
    """Per bin: ``low``, ``high``, ``n``, ``mean_p``, ``observed`` (for the diagram)."""


def calibration(
    p: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray, bins: int = DEFAULT_BINS
) -> Calibration:
    """Brier score and its decomposition, log score, ECE and sharpness of ``p`` vs ``y``.

    ``bins`` equal-width forecast bins on [0, 1]; the last bin includes 1.
    """
    forecasts = np.asarray(p, dtype=float)
    outcomes = np.asarray(y, dtype=float)
    n = len(forecasts)
    if n == 0:
        nan = math.nan
        return Calibration(0, nan, nan, nan, nan, nan, nan, nan, nan)
    brier = float(np.mean((forecasts - outcomes) ** 2))
    base = float(np.mean(outcomes))
    index = np.minimum((forecasts * bins).astype(int), bins - 1)
    rows = []
    reliability = resolution = ece = 0.0
    for k in range(bins):
        mask = index == k
        count = int(mask.sum())
        mean_p = float(forecasts[mask].mean()) if count else math.nan
        observed = float(outcomes[mask].mean()) if count else math.nan
        if count:
            reliability += count * (mean_p - observed) ** 2 / n
            resolution += count * (observed - base) ** 2 / n
            ece += count * abs(mean_p - observed) / n
        rows.append(
            {
                "low": k / bins,
                "high": (k + 1) / bins,
                "n": count,
                "mean_p": mean_p,
                "observed": observed,
            }
        )
    uncertainty = base * (1 - base)
    clipped = np.clip(forecasts, LOG_CLIP, 1 - LOG_CLIP)
    log_score = float(np.mean(-np.log(np.where(outcomes == 1, clipped, 1 - clipped))))
    sharp = float(np.mean((forecasts <= 0.1) | (forecasts >= 0.9)))
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
    meta = trace.condition.get("bot_meta") or {}
    return {
        "judge": judge_label(trace),
        "judge_type": trace.judge_type,
        "model": str(trace.condition.get("model", meta.get("model", "?"))),
        "mode": str(trace.condition.get("mode", meta.get("mode", "?"))),
        "x": trace.x_turns,
        "total": trace.total_turns,
        "item": trace.item_id,
        "judge_id": trace.judge_id,
        "y": 1.0 if trace.target_human else 0.0,
    }


def held_beliefs(traces: Iterable[BeliefTrace]) -> pd.DataFrame:
    """One row per usable trace and turn 1..its last: the belief held then (the last
    given by that turn; none before the first), plus ``final`` for the last turn."""
    rows = []
    for trace in usable_traces(traces):
        turns = [p.turn for p in trace.points if p.turn is not None]
        last = max(turns, default=0)
        for turn in range(1, last + 1):
            belief = trace.belief_at(turn)
            if belief is None:
                continue
            rows.append(
                {**_condition(trace), "turn": turn, "p": belief / 100, "final": turn == last}
            )
    columns = [*_condition_columns(), "turn", "p", "final"]
    return pd.DataFrame(rows, columns=columns)


def _condition_columns() -> list[str]:
    return ["judge", "judge_type", "model", "mode", "x", "total", "item", "judge_id", "y"]


def calibration_table(
    frame: pd.DataFrame, by: Sequence[str] = GROUP_COLUMNS, bins: int = DEFAULT_BINS
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
            }
        )
    return pd.DataFrame(rows)


def by_turn(frame: pd.DataFrame, by: Sequence[str] = GROUP_COLUMNS) -> pd.DataFrame:
    """Per group and turn: judges, the share on the wrong side (the pass rate from
    traces), undecided judges, mean belief in the truth and the Brier score."""
    rows = []
    for key, part in frame.groupby([*by, "turn"], sort=True, dropna=False):
        values = key if isinstance(key, tuple) else (key,)
        p, y = part["p"].to_numpy(), part["y"].to_numpy()
        decided = p != UNDECIDED / 100
        wrong = ((p > 0.5) != (y == 1)) & decided
        rows.append(
            {
                **dict(zip([*by, "turn"], values, strict=True)),
                "judges": len(part),
                "undecided": int((~decided).sum()),
                "wrong_side": float(wrong.sum() / decided.sum()) if decided.any() else math.nan,
                "belief_in_truth": float(np.mean(np.where(y == 1, p, 1 - p))),
                "brier": float(np.mean((p - y) ** 2)),
            }
        )
    return pd.DataFrame(rows)


def moments(traces: Iterable[BeliefTrace], top: int = 5) -> pd.DataFrame:
    """Per bot model, the ``top`` steps that moved belief most (from 50 before the first
    belief), with ``toward_truth`` > 0 when the step moved belief toward the truth."""
    rows = []
    for trace in usable_traces(traces):
        before = UNDECIDED
        for point in trace.points:
            if point.belief is None:
                continue
            shift = point.belief - before
            toward = shift if trace.target_human else -shift
            rows.append(
                {
                    **_condition(trace),
                    "turn": point.turn,
                    "before": before,
                    "after": point.belief,
                    "toward_truth": toward,
                    "text": point.text or "",
                }
            )
            before = point.belief
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    frame["size"] = frame["toward_truth"].abs()
    frame = frame.sort_values(
        ["model", "size", "judge_id", "item", "turn"], ascending=[True, False, True, True, True]
    )
    return frame.groupby("model", sort=True).head(top).drop(columns="size").reset_index(drop=True)
