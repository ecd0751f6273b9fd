"""The whole alignment analysis of a rating task: cohorts, matrices and comparisons.

The human cohort is the reference: each LLM cohort's group matrix is compared with the
human group matrix (Spearman, permutation p, Bonferroni over the LLM cohorts), and with
each human's matrix, averaged, which is what the human noise ceiling bounds; within
every cohort the spread of participant-to-participant alignment and the ICC say how
much individuals differ; every LLM participant is also compared with every human one.
As Ogg et al. do, alignment is also split into item pairs within one category and
across categories (the rating key's bot and human sides) with Wilcoxon signed-rank tests
(each participant's, or each cohort's, two values are paired), and participants are
mapped by MDS and by t-SNE.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from sdtt.align import rsa
from sdtt.align.ratings import Rating
from sdtt.seeds import derive_seed
from sdtt.tasks.rating_task import RatingTask

HUMAN = "human"


@dataclass
class CohortResult:
    """One cohort: its participants, their matrices and how much they agree."""

    name: str
    participants: list[str]
    matrices: list[rsa.Matrix]
    group: rsa.Matrix
    pairwise: list[float]
    """Alignment of every two of its participants."""
    icc_single: float
    icc_average: float
    ceiling: rsa.NoiseCeiling
    ratings: int

    @property
    def pairwise_median(self) -> float:
        """Median participant-to-participant alignment (NaN without two participants)."""
        kept = [v for v in self.pairwise if not math.isnan(v)]
        return float(np.median(kept)) if kept else rsa.NAN


@dataclass
class Comparison:
    """An LLM cohort against the human group."""

    cohort: str
    rho: float
    p: float
    p_bonferroni: float
    to_humans: float
    """Mean alignment of its group matrix with each human's matrix: the figure the human
    noise ceiling bounds (``rho`` is group against group, which the ceiling does not)."""
    individual_mean: float
    """Mean alignment of its participants with individual humans."""
    individual: rsa.Matrix
    """Its participants (rows) against each human (columns)."""
    within_rho: float = rsa.NAN
    """Group x human group over the item pairs of one category (bot-bot, human-human)."""
    between_rho: float = rsa.NAN
    """Group x human group over the item pairs across categories (bot-human)."""
    within_w: float = rsa.NAN
    within_p: float = rsa.NAN
    """Wilcoxon signed-rank test of its participants' within- against their
    between-category alignment with the human group, paired by participant (W is the
    smaller of the signed-rank sums, as scipy reports it)."""


@dataclass
class AlignmentResult:
    """Everything ``sdtt align score`` prints and ``sdtt align report`` draws."""

    items: list[str]
    item_sides: dict[str, str]
    cohorts: list[CohortResult]
    comparisons: list[Comparison] = field(default_factory=list)
    map_labels: list[tuple[str, str]] = field(default_factory=list)
    """(cohort, participant) of each row of ``map_coords``."""
    map_coords: rsa.Matrix = field(default_factory=lambda: np.zeros((0, 2)))
    tsne_coords: rsa.Matrix = field(default_factory=lambda: np.zeros((0, 2)))
    """t-SNE of the same participants (rows as ``map_labels``)."""
    category_w: float = rsa.NAN
    category_p: float = rsa.NAN
    """Ogg et al.'s comparison across LLM cohorts: Wilcoxon signed-rank test of the
    cohorts' within- against their between-category group alignment, paired by cohort
    (needs two cohorts or more)."""
    permutations: int = 0

    def cohort(self, name: str) -> CohortResult | None:
        """The cohort called ``name``, if any."""
        return next((c for c in self.cohorts if c.name == name), None)


def _cohort(name: str, ratings: Sequence[Rating], items: list[str]) -> CohortResult:
    by_judge: dict[str, list[Rating]] = {}
    for rating in ratings:
        by_judge.setdefault(rating.judge_id, []).append(rating)
    judges = sorted(by_judge)
    matrices = [rsa.dissimilarity_matrix(by_judge[j], items) for j in judges]
    single, average = rsa.icc_agreement(rsa.rater_table(matrices))
    return CohortResult(
        name=name,
        participants=judges,
        matrices=matrices,
        group=rsa.group_matrix(matrices),
        pairwise=rsa.pairwise_alignment(matrices),
        icc_single=single,
        icc_average=average,
        ceiling=rsa.noise_ceiling(matrices),
        ratings=len(ratings),
    )


def analyse(
    task: RatingTask,
    ratings: Sequence[Rating],
    *,
    item_sides: Mapping[str, str] | None = None,
    permutations: int = 1000,
    seed: int = 0,
) -> AlignmentResult:
    """Analyse the usable ratings of ``task`` (other tasks' ratings are ignored)."""
    items = [item.id for item in task.items]
    usable = [r for r in ratings if r.task_id == task.id and r.rating is not None]
    names = sorted({r.cohort for r in usable}, key=lambda n: (n != HUMAN, n))
    cohorts = [_cohort(name, [r for r in usable if r.cohort == name], items) for name in names]
    result = AlignmentResult(items, dict(item_sides or {}), cohorts, permutations=permutations)
    human = result.cohort(HUMAN)
    models = [c for c in cohorts if c.name != HUMAN]
    categories = [result.item_sides.get(item, "?") for item in items]
    within, between = rsa.category_pairs(categories)
    if human is not None:
        for number, cohort in enumerate(models):
            p = rsa.permutation_p(
                human.group,
                cohort.group,
                permutations=permutations,
                seed=derive_seed(seed, "cohort", number),
            )
            individual = rsa.cross_alignment(cohort.matrices, human.matrices)
            kept = individual[~np.isnan(individual)]
            w, w_p = rsa.signed_rank(
                [rsa.matrix_alignment(m, human.group, within) for m in cohort.matrices],
                [rsa.matrix_alignment(m, human.group, between) for m in cohort.matrices],
            )
            result.comparisons.append(
                Comparison(
                    cohort=cohort.name,
                    rho=rsa.matrix_alignment(human.group, cohort.group),
                    p=p,
                    p_bonferroni=rsa.bonferroni(p, len(models)),
                    to_humans=rsa.mean_alignment(cohort.group, human.matrices),
                    individual_mean=float(kept.mean()) if kept.size else rsa.NAN,
                    individual=individual,
                    within_rho=rsa.matrix_alignment(human.group, cohort.group, within),
                    between_rho=rsa.matrix_alignment(human.group, cohort.group, between),
                    within_w=w,
                    within_p=w_p,
                )
            )
    if len(result.comparisons) >= 2:
        result.category_w, result.category_p = rsa.signed_rank(
            [c.within_rho for c in result.comparisons],
            [c.between_rho for c in result.comparisons],
        )
    everyone = [m for c in cohorts for m in c.matrices]
    result.map_labels = [(c.name, p) for c in cohorts for p in c.participants]
    result.map_coords = rsa.participant_map(everyone)
    result.tsne_coords = rsa.participant_tsne(everyone, seed=seed)
    return result
