"""PAN's detector metrics, for detectors and for human and LLM judges on the same items.

Every item has a truth ``y`` (1 when chat 2's User B is the human, the positive class of
PAN's evaluator) and a score ``s`` from 0 to 1 (above 0.5 says chat 2 is human, below
says chat 1, exactly 0.5 answers neither way). The five measures of the PAN 2024
"Voight-Kampff" task (Bevendorff et al. 2024), all higher-is-better:

- **ROC-AUC**: the chance that a random positive item scores above a random negative one
  (ties count half), the Mann-Whitney statistic over both counts.
- **Brier**: ``1 - mean((s - y)^2)``, the complement of the Brier score.
- **C@1** (Peñas & Rodrigo 2011): ``(n_c + n_u * n_c / n) / n`` with ``n_c`` correct
  answers and ``n_u`` non-answers (score 0.5) of ``n`` items: a non-answer earns the
  accuracy of the answers. A non-answer is never correct (PAN's evaluator code counts
  a 0.5 on a negative item as correct; the measure's definition does not).
- **F1**: of the decisions ``s > 0.5`` (a non-answer counts as negative, as in PAN).
- **F0.5u** (Bevendorff et al. 2019): ``1.25 tp / (1.25 tp + 0.25 (fn + n_u) + fp)``:
  F0.5 with non-answers counted as false negatives.

Beside them, the Inverse Turing Bench's own figure, **accuracy**: the share of items
answered right, a non-answer counting as wrong (its runner writes ``NA`` for an item it
could not answer, and the item stays in the count).

Judges become scores per item: the share of a judge group's usable judgements of the
item that said chat 2's User B is the person (0.5 when no one in the group judged it,
a non-answer, as PAN treats an item a detector left out).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import stats

from sdtt.analysis.metrics import judge_parts
from sdtt.analysis.table import usable

NAN = float("nan")


@dataclass(frozen=True)
class PanScores:
    """PAN's measures for one detector or judge group over the same items."""

    items: int
    answered: int
    """Items with a score other than 0.5."""
    roc_auc: float
    brier: float
    c_at_1: float
    f1: float
    f05u: float
    accuracy: float
    """The Inverse Turing Bench's figure (not part of PAN's mean)."""
    c_at_1_pan_code: float
    """C@1 as PAN's evaluator code computes it (:func:`c_at_1_pan_code`)."""

    @property
    def mean(self) -> float:
        """The mean of the five measures (PAN's overall ranking figure)."""
        return float(np.mean([self.roc_auc, self.brier, self.c_at_1, self.f1, self.f05u]))


def roc_auc(truth: NDArray[np.float64], score: NDArray[np.float64]) -> float:
    """Area under the ROC curve (NaN when the items hold one class only)."""
    positive = truth == 1
    n_pos = int(positive.sum())
    n_neg = truth.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return NAN
    ranks = stats.rankdata(score)
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def brier(truth: NDArray[np.float64], score: NDArray[np.float64]) -> float:
    """The complement of the Brier score."""
    return float(1 - np.mean((score - truth) ** 2)) if truth.size else NAN


def c_at_1(truth: NDArray[np.float64], score: NDArray[np.float64]) -> float:
    """C@1: accuracy where a non-answer earns the accuracy of the answers."""
    n = truth.size
    if n == 0:
        return NAN
    unanswered = int((score == 0.5).sum())
    correct = int((((score > 0.5) & (truth == 1)) | ((score < 0.5) & (truth == 0))).sum())
    return (correct + unanswered * correct / n) / n


def c_at_1_pan_code(truth: NDArray[np.float64], score: NDArray[np.float64]) -> float:
    """C@1 as PAN 2024's evaluator code computes it, for comparing with its leaderboard:
    its ``n_c`` counts ``truth == (score > 0.5)``, so a 0.5 on a negative item counts as
    correct. Equal to :func:`c_at_1` when no item has a score of 0.5."""
    n = truth.size
    if n == 0:
        return NAN
    correct = int((truth == (score > 0.5)).sum())
    unanswered = int((score == 0.5).sum())
    return (correct + unanswered * correct / n) / n


def f1(truth: NDArray[np.float64], score: NDArray[np.float64]) -> float:
    """F1 of the decisions ``score > 0.5`` (0 when there is no true positive)."""
    said = score > 0.5
    tp = int((said & (truth == 1)).sum())
    fp = int((said & (truth == 0)).sum())
    fn = int((~said & (truth == 1)).sum())
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def f05u(truth: NDArray[np.float64], score: NDArray[np.float64]) -> float:
    """F0.5u: F0.5 with non-answers as false negatives (0 without a true positive)."""
    tp = int(((score > 0.5) & (truth == 1)).sum())
    fn = int(((score < 0.5) & (truth == 1)).sum())
    fp = int(((score > 0.5) & (truth == 0)).sum())
    unanswered = int((score == 0.5).sum())
    return 1.25 * tp / (1.25 * tp + 0.25 * (fn + unanswered) + fp) if tp else 0.0


def accuracy(truth: NDArray[np.float64], score: NDArray[np.float64]) -> float:
    """The share of items answered right; a non-answer (0.5) is wrong."""
    if truth.size == 0:
        return NAN
    return float((((score > 0.5) & (truth == 1)) | ((score < 0.5) & (truth == 0))).mean())


def pan_scores(truth: Sequence[float], score: Sequence[float]) -> PanScores:
    """Every PAN measure of ``score`` against ``truth`` (same order, same items)."""
    y = np.asarray(truth, dtype=float)
    s = np.asarray(score, dtype=float)
    return PanScores(
        items=int(y.size),
        answered=int((s != 0.5).sum()),
        roc_auc=roc_auc(y, s),
        brier=brier(y, s),
        c_at_1=c_at_1(y, s),
        f1=f1(y, s),
        f05u=f05u(y, s),
        accuracy=accuracy(y, s),
        c_at_1_pan_code=c_at_1_pan_code(y, s),
    )


def judge_item_scores(
    frame: pd.DataFrame, truth: Mapping[str, bool]
) -> dict[str, dict[str, float]]:
    """Per judge group (as the score tables split them), each item's share of usable
    paired judgements saying chat 2's User B is the person; 0.5 where the group has none.

    ``truth`` maps pair id to "chat 2's User B is the person" in the layout detectors
    see. A judgement says so when it is right exactly where that is true: read from
    whether it was right, not from the side it picked, so a judge shown the pair swapped
    (an LLM judge's second order, a judge design's second view) counts the same.
    """
    test = frame.loc[(frame["pair_kind"] == "test") & frame["pair_id"].isin(list(truth))]
    groups: dict[str, dict[str, float]] = {}
    for title, part in judge_parts(test):
        used = usable(part)
        used = used.loc[used["witness"].isna()]
        if used.empty:
            continue
        correct = used["correct"].to_numpy(dtype=float) > 0.5
        second = used["pair_id"].map(truth).to_numpy(dtype=bool)
        says = pd.Series((correct == second).astype(float), index=used.index)
        shares = says.groupby(used["pair_id"]).mean()
        groups[title] = {pair: float(shares.get(pair, 0.5)) for pair in truth}
    return groups


def score_table(
    truth: Mapping[str, bool], scored: Mapping[str, Mapping[str, float]]
) -> list[tuple[str, PanScores]]:
    """PAN's measures for each named scorer (a detector or a judge group) over the
    items of ``truth`` (pair id to "chat 2's User B is the person")."""
    pairs = list(truth)
    y = [1.0 if truth[pair] else 0.0 for pair in pairs]
    return [
        (name, pan_scores(y, [scores.get(pair, 0.5) for pair in pairs]))
        for name, scores in scored.items()
    ]
