"""How human-like an LLM judge's Turing verdicts are, pair by pair.

From a judgement table (``sdtt judge`` and imported human answers): for each LLM judge,
Cohen's kappa between its verdicts (found the bot, or was fooled) and each human judge's
on the pairs both judged, averaged over the humans, and the correlation across pairs of
its fooled rate with the humans' fooled rate; both with percentile intervals from a
bootstrap over pairs. The ceiling to read the kappa against is the same statistic among
the humans: Cohen's kappa of every two human judges on the pairs both judged, averaged
over those two-judge combinations. (A Fleiss' kappa of the humans set against a Cohen's
kappa of pooled LLM-human verdict pairs compares two statistics: on one data set 0.19
against 0.28, where the mean pairwise human Cohen's kappa was 0.27.)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sdtt.analysis.stats import percentile_interval
from sdtt.analysis.table import judgement_table
from sdtt.seeds import derive_seed, seeded_generator
from sdtt.tasks.judgements import Judgement

NAN = float("nan")
Verdicts = dict[str, dict[str, list[bool]]]
"""pair key -> judge id -> verdicts (True: found the bot)."""


def cohen_kappa(pairs: Sequence[tuple[bool, bool]]) -> float:
    """Cohen's kappa of two raters' binary labels, one tuple per rated thing."""
    if not pairs:
        return NAN
    a = np.array([x for x, _ in pairs], dtype=float)
    b = np.array([y for _, y in pairs], dtype=float)
    observed = float((a == b).mean())
    expected = float(a.mean() * b.mean() + (1 - a.mean()) * (1 - b.mean()))
    if expected == 1:
        return NAN
    return (observed - expected) / (1 - expected)


def fleiss_kappa(items: Sequence[Sequence[bool]]) -> float:
    """Fleiss' kappa (1971) of binary labels, one sequence of raters' labels per item.

    Items may have different numbers of raters (items with fewer than two are left
    out): ``P_i`` is the share of agreeing rater pairs within item i, ``P = mean P_i``,
    ``P_e = sum_j p_j^2`` with ``p_j`` the share of all labels in category j, and
    kappa ``(P - P_e) / (1 - P_e)``. With equal raters per item it is the usual
    Fleiss' kappa. NaN when nothing is left or every label is the same.
    """
    rated = [list(labels) for labels in items if len(labels) >= 2]
    if not rated:
        return NAN
    yes = np.array([sum(labels) for labels in rated], dtype=float)
    n = np.array([len(labels) for labels in rated], dtype=float)
    no = n - yes
    agreement = float(np.mean((yes * (yes - 1) + no * (no - 1)) / (n * (n - 1))))
    share = float(yes.sum() / n.sum())
    expected = share**2 + (1 - share) ** 2
    if expected == 1:
        return NAN
    return (agreement - expected) / (1 - expected)


def _human_verdicts(verdicts: Verdicts, key: str, humans: set[str]) -> list[bool]:
    return [v for j, vs in verdicts.get(key, {}).items() if j in humans for v in vs]


def _two_judges(
    verdicts: Verdicts, first: str, second: str, keys: Sequence[str]
) -> list[tuple[bool, bool]]:
    """The verdicts of two judges on the pairs of ``keys`` both judged (each of the
    first's against each of the second's, where a judge saw a pair more than once)."""
    out = []
    for key in keys:
        judged = verdicts.get(key, {})
        out += [(a, b) for a in judged.get(first, []) for b in judged.get(second, [])]
    return out


def mean_pairwise_kappa(
    verdicts: Verdicts, pairs: Sequence[tuple[str, str]], keys: Sequence[str]
) -> float:
    """The mean of Cohen's kappa over the judge combinations ``pairs`` (each on the
    pairs of ``keys`` both judged; a combination whose kappa is undefined is left out)."""
    kappas = [cohen_kappa(_two_judges(verdicts, a, b, keys)) for a, b in pairs]
    kept = [k for k in kappas if not math.isnan(k)]
    return float(np.mean(kept)) if kept else NAN


def _fooled_correlation(
    verdicts: Verdicts, judge: str, humans: set[str], keys: Sequence[str]
) -> float:
    llm, people = [], []
    for key in keys:
        mine = verdicts.get(key, {}).get(judge, [])
        theirs = _human_verdicts(verdicts, key, humans)
        if mine and theirs:
            llm.append(1 - sum(mine) / len(mine))
            people.append(1 - sum(theirs) / len(theirs))
    if len(llm) < 3 or np.ptp(llm) == 0 or np.ptp(people) == 0:
        return NAN
    return float(np.corrcoef(llm, people)[0, 1])


@dataclass(frozen=True)
class Estimate:
    """A value with a percentile bootstrap interval."""

    value: float
    low: float
    high: float


@dataclass(frozen=True)
class JudgeAgreement:
    """One LLM judge against the human judges."""

    judge: str
    pairs: int
    kappa: Estimate
    fooled_r: Estimate


@dataclass(frozen=True)
class VerdictAgreement:
    """Every LLM judge, and the human-human kappa ceiling (the same statistic)."""

    judges: list[JudgeAgreement]
    human_kappa: Estimate
    """Mean Cohen's kappa of every two human judges over the pairs both judged: what each
    judge's ``kappa`` (its mean Cohen's kappa with each human) is read against."""
    humans: int
    pairs: int


def _bootstrap(
    keys: list[str], statistic: Callable[[Sequence[str]], float], reps: int, seed: int
) -> Estimate:
    value = statistic(keys)
    rng = seeded_generator(seed)
    draws = np.array(
        [statistic([keys[i] for i in rng.integers(0, len(keys), len(keys))]) for _ in range(reps)]
    )
    low, high = percentile_interval(draws) if keys else (NAN, NAN)
    return Estimate(value, low, high)


def verdict_agreement(
    judgements: Sequence[Judgement] | pd.DataFrame, *, reps: int = 1000, seed: int = 0
) -> VerdictAgreement:
    """Agreement of each LLM judge with the human judges on test pairs both answered
    (of judgements, or of their :func:`~sdtt.analysis.table.judgement_table`)."""
    table = judgements if isinstance(judgements, pd.DataFrame) else judgement_table(judgements)
    verdicts: Verdicts = {}
    humans: set[str] = set()
    llms: set[str] = set()
    rows = table.loc[(table["pair_kind"] == "test") & ~table["excluded"] & table["correct"].notna()]
    for chats, judge, kind, correct in zip(
        rows["chats"], rows["judge_id"], rows["judge_type"], rows["correct"], strict=True
    ):
        verdicts.setdefault(chats, {}).setdefault(judge, []).append(bool(correct))
        (humans if kind == "human" else llms).add(judge)
    human_keys = [k for k in verdicts if len(_human_verdicts(verdicts, k, humans)) >= 2]
    people = sorted(humans)
    human_pairs = [(a, b) for i, a in enumerate(people) for b in people[i + 1 :]]
    human_kappa = _bootstrap(
        human_keys, lambda ks: mean_pairwise_kappa(verdicts, human_pairs, ks), reps, seed
    )
    results = []
    for number, judge in enumerate(sorted(llms), start=1):
        keys = [
            k for k, js in verdicts.items() if judge in js and _human_verdicts(verdicts, k, humans)
        ]

        def kappa(ks: Sequence[str], judge: str = judge) -> float:
            return mean_pairwise_kappa(verdicts, [(judge, h) for h in people], ks)

        def fooled(ks: Sequence[str], judge: str = judge) -> float:
            return _fooled_correlation(verdicts, judge, humans, ks)

        results.append(
            JudgeAgreement(
                judge=judge,
                pairs=len(keys),
                kappa=_bootstrap(keys, kappa, reps, derive_seed(seed, "judge", number)),
                fooled_r=_bootstrap(keys, fooled, reps, derive_seed(seed, "judge", number)),
            )
        )
    results.sort(key=lambda a: -a.kappa.value if not math.isnan(a.kappa.value) else math.inf)
    return VerdictAgreement(results, human_kappa, len(humans), len(verdicts))
