"""Representational similarity analysis of similarity ratings.

Every participant's ratings become a dissimilarity matrix over the task's items
(``(scale_max - rating) / (scale_max - scale_min)``, NaN where a pair was not rated);
a group's matrix is the mean of its members'. Matrices are compared by the Spearman
correlation of their upper triangles over the pairs both hold. Functions return plain
floats (NaN when there is nothing to compare), never raise on empty input.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from sdtt.align.ratings import Rating
from sdtt.seeds import seeded_generator

Matrix = NDArray[np.float64]
NAN = float("nan")


def dissimilarity_matrix(ratings: Sequence[Rating], items: Sequence[str]) -> Matrix:
    """One matrix from ``ratings`` (one judge's, or a group's pooled): the mean
    dissimilarity of each rated pair, symmetric, zero on the diagonal."""
    index = {item: number for number, item in enumerate(items)}
    total = np.zeros((len(items), len(items)))
    count = np.zeros((len(items), len(items)))
    for rating in ratings:
        if rating.rating is None:
            continue
        a, b = index[rating.first], index[rating.second]
        value = (rating.scale_max - rating.rating) / (rating.scale_max - rating.scale_min)
        for i, j in ((a, b), (b, a)):
            total[i, j] += value
            count[i, j] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        matrix = total / count
    np.fill_diagonal(matrix, 0.0)
    return matrix


def group_matrix(matrices: Sequence[Matrix]) -> Matrix:
    """The mean of participants' matrices, cell by cell over those that rated it."""
    if not matrices:
        return np.zeros((0, 0))
    stack = np.stack(list(matrices))
    rated = ~np.isnan(stack)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean: Matrix = np.nansum(stack, axis=0) / rated.sum(axis=0)
    return mean


def upper(matrix: Matrix) -> NDArray[np.float64]:
    """The upper triangle (above the diagonal) as a vector, row by row."""
    rows, cols = np.triu_indices(matrix.shape[0], k=1)
    values: NDArray[np.float64] = matrix[rows, cols]
    return values


def spearman(a: NDArray[np.float64], b: NDArray[np.float64]) -> float:
    """Spearman's rho over the positions both vectors hold (average ranks for ties);
    NaN with fewer than 3 shared values or when either side is constant."""
    both = ~(np.isnan(a) | np.isnan(b))
    if both.sum() < 3:
        return NAN
    ra = stats.rankdata(a[both])
    rb = stats.rankdata(b[both])
    if np.ptp(ra) == 0 or np.ptp(rb) == 0:
        return NAN
    return float(np.corrcoef(ra, rb)[0, 1])


def matrix_alignment(x: Matrix, y: Matrix, pairs: NDArray[np.bool_] | None = None) -> float:
    """Spearman correlation of two matrices' upper triangles (only the item pairs where
    ``pairs``, an upper-triangle mask, is true, when given)."""
    if pairs is None:
        return spearman(upper(x), upper(y))
    return spearman(upper(x)[pairs], upper(y)[pairs])


def category_pairs(categories: Sequence[str]) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """Upper-triangle masks of the item pairs within one category and across two."""
    rows, cols = np.triu_indices(len(categories), k=1)
    labels = np.asarray(categories, dtype=object)
    within: NDArray[np.bool_] = labels[rows] == labels[cols]
    return within, ~within


def signed_rank(first: Sequence[float], second: Sequence[float]) -> tuple[float, float]:
    """Two-sided Wilcoxon signed-rank test of paired values (``first[i]`` and
    ``second[i]`` of one participant): scipy's statistic (the smaller of the signed-rank
    sums) and its p (exact for small samples without ties or zero differences). Pairs
    with a NaN are left out; NaN with no pair left, or when every difference is 0."""
    kept = [
        (a, b) for a, b in zip(first, second, strict=True) if not (math.isnan(a) or math.isnan(b))
    ]
    if not kept or all(a == b for a, b in kept):
        return NAN, NAN
    found = stats.wilcoxon([a for a, _ in kept], [b for _, b in kept], alternative="two-sided")
    return float(found.statistic), float(found.pvalue)


def permutation_p(x: Matrix, y: Matrix, *, permutations: int = 1000, seed: int = 0) -> float:
    """One-sided p of the alignment of ``x`` and ``y`` under shuffled item labels.

    Rows and columns of ``y`` are permuted together (the items relabelled), which keeps
    each matrix's internal structure; p = (1 + #permuted >= observed) / (1 + permutations).
    """
    observed = matrix_alignment(x, y)
    if math.isnan(observed) or permutations < 1:
        return NAN
    rng = seeded_generator(seed)
    ux = upper(x)
    rows, cols = np.triu_indices(x.shape[0], k=1)
    orders = np.array([rng.permutation(x.shape[0]) for _ in range(permutations)])
    if np.isnan(ux).any() or np.isnan(upper(y)).any():
        values = np.array([spearman(ux, y[np.ix_(o, o)][rows, cols]) for o in orders])
    else:
        # Relabelling items only moves the upper triangle's values around, so y's ranks
        # are computed once and every permutation is an indexing of them.
        ranks_y = np.zeros_like(y)
        ranks_y[rows, cols] = stats.rankdata(upper(y))
        ranks_y = ranks_y + ranks_y.T
        centred_x = stats.rankdata(ux) - (len(ux) + 1) / 2
        permuted = ranks_y[orders[:, rows], orders[:, cols]]
        centred = permuted - permuted.mean(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            values = (centred @ centred_x) / (
                np.sqrt((centred**2).sum(axis=1)) * np.sqrt((centred_x**2).sum())
            )
    higher = int(np.sum(values >= observed - 1e-12))
    return (1 + higher) / (1 + permutations)


def bonferroni(p: float, comparisons: int) -> float:
    """``p`` corrected for ``comparisons`` tests (at most 1)."""
    return NAN if math.isnan(p) else min(1.0, p * max(1, comparisons))


@dataclass(frozen=True)
class NoiseCeiling:
    """What a perfect model of the group could reach, given how much people differ: the
    range in which the true model's mean alignment with the individual matrices lies."""

    lower: float
    """Mean alignment of each participant with the mean of the others' ranked matrices."""
    upper: float
    """Mean alignment of each participant with the mean of all ranked matrices
    (themselves included)."""

    def place(self, value: float) -> str:
        """Where ``value`` (a mean alignment with the individual matrices) lies against
        the bounds: ``below`` or ``above`` them by how much, or ``within``, with how far
        up the band it sits (0% at the lower bound, 100% at the upper). Never a ratio to
        the lower bound, which explodes as that bound nears 0."""
        if math.isnan(value) or math.isnan(self.lower) or math.isnan(self.upper):
            return "\u2014"
        if value < self.lower:
            return f"below ({self.lower - value:.2f} under the lower bound)"
        if value > self.upper:
            return f"above ({value - self.upper:.2f} over the upper bound)"
        width = self.upper - self.lower
        share = (value - self.lower) / width if width > 0 else 1.0
        return f"within ({100 * share:.0f}% of the way from lower to upper)"


def ranked(matrix: Matrix) -> Matrix:
    """``matrix`` with its upper triangle replaced by its ranks (average ranks for ties,
    NaN kept), mirrored; zero on the diagonal."""
    values = upper(matrix)
    kept = ~np.isnan(values)
    ranks = np.full(values.shape, np.nan)
    ranks[kept] = stats.rankdata(values[kept])
    out = np.zeros_like(matrix, dtype=float)
    rows, cols = np.triu_indices(matrix.shape[0], k=1)
    out[rows, cols] = ranks
    out[cols, rows] = ranks
    return out


def noise_ceiling(matrices: Sequence[Matrix]) -> NoiseCeiling:
    """Leave-one-participant-out bounds of Nili et al. (2014) for Spearman correlation.

    The best model for Spearman is the mean of the participants' *rank-transformed*
    matrices (as rsatoolbox pools for 'spearman'), so the bounds average ranks, not raw
    dissimilarities. The bounds are of the mean alignment of one matrix with each
    participant's: compare them with :func:`mean_alignment`, not with a group-to-group
    correlation, which is higher because averaging removes individual noise.
    """
    if len(matrices) < 2:
        return NoiseCeiling(NAN, NAN)
    ranks = [ranked(m) for m in matrices]
    whole = group_matrix(ranks)
    lows, highs = [], []
    for index, matrix in enumerate(matrices):
        others = group_matrix([m for n, m in enumerate(ranks) if n != index])
        lows.append(matrix_alignment(matrix, others))
        highs.append(matrix_alignment(matrix, whole))
    return NoiseCeiling(_mean(lows), _mean(highs))


def mean_alignment(model: Matrix, matrices: Sequence[Matrix]) -> float:
    """Mean alignment of ``model`` with each of ``matrices``: the figure a noise ceiling
    of those matrices bounds."""
    return _mean([matrix_alignment(model, m) for m in matrices])


def _mean(values: Sequence[float]) -> float:
    kept = [v for v in values if not math.isnan(v)]
    return sum(kept) / len(kept) if kept else NAN


def pairwise_alignment(matrices: Sequence[Matrix]) -> list[float]:
    """Alignment of every two participants of one cohort (the inter-individual spread)."""
    return [
        matrix_alignment(matrices[i], matrices[j])
        for i in range(len(matrices))
        for j in range(i + 1, len(matrices))
    ]


def cross_alignment(left: Sequence[Matrix], right: Sequence[Matrix]) -> Matrix:
    """Alignment of each participant of ``left`` (rows) with each of ``right``."""
    out = np.full((len(left), len(right)), np.nan)
    for i, x in enumerate(left):
        for j, y in enumerate(right):
            out[i, j] = matrix_alignment(x, y)
    return out


def icc_agreement(data: Matrix) -> tuple[float, float]:
    """ICC(2,1) and ICC(2,k) of Shrout & Fleiss (1979): two-way random effects, absolute
    agreement, for one rater and for the mean of k raters.

    ``data`` has one row per target (a pair of items) and one column per rater; rows
    with a missing value are left out. NaN with fewer than 2 targets or raters.
    """
    complete = data[~np.isnan(data).any(axis=1)] if data.size else data
    n, k = complete.shape if complete.ndim == 2 else (0, 0)
    if n < 2 or k < 2:
        return NAN, NAN
    grand = complete.mean()
    bms = k * ((complete.mean(axis=1) - grand) ** 2).sum() / (n - 1)
    jms = n * ((complete.mean(axis=0) - grand) ** 2).sum() / (k - 1)
    total = ((complete - grand) ** 2).sum()
    ems = (total - bms * (n - 1) - jms * (k - 1)) / ((n - 1) * (k - 1))
    single_denominator = bms + (k - 1) * ems + k * (jms - ems) / n
    average_denominator = bms + (jms - ems) / n
    single = (bms - ems) / single_denominator if single_denominator else NAN
    average = (bms - ems) / average_denominator if average_denominator else NAN
    return float(single), float(average)


def rater_table(matrices: Sequence[Matrix]) -> Matrix:
    """Upper triangles side by side: one row per pair, one column per participant."""
    if not matrices:
        return np.zeros((0, 0))
    return np.stack([upper(m) for m in matrices], axis=1)


def classical_mds(distances: Matrix, dimensions: int = 2) -> Matrix:
    """Torgerson's classical multidimensional scaling: coordinates whose Euclidean
    distances best keep ``distances`` (NaN distances count as the largest seen)."""
    size = distances.shape[0]
    if size == 0:
        return np.zeros((0, dimensions))
    d = np.where(
        np.isnan(distances),
        np.nanmax(distances) if np.isfinite(distances).any() else 1.0,
        distances,
    )
    centre = np.eye(size) - np.full((size, size), 1 / size)
    b = -0.5 * centre @ (d**2) @ centre
    values, vectors = np.linalg.eigh(b)
    order = np.argsort(values)[::-1][:dimensions]
    scale = np.sqrt(np.clip(values[order], 0, None))
    coords: Matrix = vectors[:, order] * scale
    # eigh's sign is arbitrary: point each axis so its largest coordinate is positive.
    for axis in range(coords.shape[1]):
        column = coords[:, axis]
        if column.size and column[np.argmax(np.abs(column))] < 0:
            coords[:, axis] = -column
    if coords.shape[1] < dimensions:
        coords = np.hstack([coords, np.zeros((size, dimensions - coords.shape[1]))])
    return coords


def participant_tsne(matrices: Sequence[Matrix], *, seed: int = 0) -> Matrix:
    """2-D t-SNE of participants' flattened matrices, as Ogg et al. drew them (PCA
    start, perplexity 30, or (n - 1) / 3 for fewer than 91 participants, as t-SNE needs);
    an unrated pair counts as the middle of the scale (0.5), as theirs did."""
    size = len(matrices)
    if size < 3:
        return np.zeros((size, 2))
    from sklearn.manifold import TSNE

    vectors = np.nan_to_num(np.stack([upper(m) for m in matrices]), nan=0.5)
    perplexity = min(30.0, (size - 1) / 3)
    # Exact gradients for a study's few hundred participants: more faithful than the
    # Barnes-Hut approximation and, at this size, many times faster.
    method = "exact" if size <= 300 else "barnes_hut"
    found = TSNE(
        2, perplexity=perplexity, init="pca", method=method, random_state=seed
    ).fit_transform(vectors)
    coords: Matrix = np.asarray(found, dtype=float)
    return coords


def participant_map(matrices: Sequence[Matrix]) -> Matrix:
    """2-D MDS coordinates of participants, distance = 1 - their alignment."""
    size = len(matrices)
    distances = np.zeros((size, size))
    for i in range(size):
        for j in range(i + 1, size):
            value = matrix_alignment(matrices[i], matrices[j])
            distances[i, j] = distances[j, i] = 1 - value if not math.isnan(value) else np.nan
    return classical_mds(distances)
