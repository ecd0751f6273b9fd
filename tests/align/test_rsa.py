"""RSA against known values: scipy's Spearman, Shrout & Fleiss' ICC, planted structure."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from sdtt.align import rsa
from sdtt.align.alignment_report import (
    build_alignment_report,
    comparison_table,
    individual_table,
    render_html,
)
from sdtt.align.analysis import analyse
from sdtt.align.ratings import Rating
from sdtt.align.verdicts import cohen_kappa, fleiss_kappa, verdict_agreement
from sdtt.tasks.judgements import Judgement
from sdtt.tasks.questionnaire import Line
from sdtt.tasks.rating_task import RatingItem, RatingPair, RatingTask

SHROUT_FLEISS = np.array(
    [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]],
    dtype=float,
)
"""Table 2 of Shrout & Fleiss (1979): six targets rated by four judges."""


def test_icc_agreement_matches_shrout_and_fleiss() -> None:
    single, average = rsa.icc_agreement(SHROUT_FLEISS)
    # Their Table 4: ICC(2,1) = .29 and ICC(2,4) = .62.
    assert (round(single, 2), round(average, 2)) == (0.29, 0.62)


def test_icc_leaves_out_targets_with_a_missing_rating() -> None:
    with_gap = np.vstack([SHROUT_FLEISS, [np.nan, 1, 1, 1]])
    assert rsa.icc_agreement(with_gap) == rsa.icc_agreement(SHROUT_FLEISS)
    assert all(math.isnan(v) for v in rsa.icc_agreement(np.zeros((1, 3))))


def test_spearman_matches_scipy_with_ties_and_gaps() -> None:
    rng = np.random.default_rng(3)
    for _ in range(20):
        a = rng.integers(1, 6, 30).astype(float)
        b = a + rng.integers(-2, 3, 30)
        a[rng.integers(0, 30, 4)] = np.nan
        kept = ~np.isnan(a)
        expected = stats.spearmanr(a[kept], b[kept]).statistic
        assert rsa.spearman(a, b) == pytest.approx(expected)
    assert math.isnan(rsa.spearman(np.ones(5), np.arange(5.0)))


def _clustered(size: int, rng: np.random.Generator, noise: float) -> rsa.Matrix:
    """Two clusters of items: near within, far across, plus symmetric noise."""
    groups = np.arange(size) % 2
    base = (groups[:, None] != groups[None, :]).astype(float)
    jitter = rng.normal(0, noise, (size, size))
    matrix = base + (jitter + jitter.T) / 2
    np.fill_diagonal(matrix, 0)
    return matrix


def _noise(size: int, rng: np.random.Generator) -> rsa.Matrix:
    jitter = rng.random((size, size))
    matrix = (jitter + jitter.T) / 2
    np.fill_diagonal(matrix, 0)
    return matrix


def test_permutation_p_recovers_planted_structure_and_not_shuffled() -> None:
    rng = np.random.default_rng(0)
    x, y = _clustered(12, rng, 0.3), _clustered(12, rng, 0.3)
    assert rsa.matrix_alignment(x, y) > 0.5
    assert rsa.permutation_p(x, y, permutations=200) <= 1 / 201 * 2
    # Against structure-free matrices the p-values are roughly uniform: few are small.
    ps = [rsa.permutation_p(x, _noise(12, rng), permutations=100, seed=s) for s in range(40)]
    assert sum(p < 0.05 for p in ps) <= 6
    assert np.median(ps) > 0.2


def test_bonferroni() -> None:
    assert rsa.bonferroni(0.01, 3) == pytest.approx(0.03)
    assert rsa.bonferroni(0.5, 3) == 1.0


def test_noise_ceiling_bounds() -> None:
    rng = np.random.default_rng(1)
    same = [_clustered(10, np.random.default_rng(5), 0.2)] * 4
    assert rsa.noise_ceiling(same) == rsa.NoiseCeiling(pytest.approx(1.0), pytest.approx(1.0))
    noisy = [_clustered(10, rng, 0.8) for _ in range(6)]
    ceiling = rsa.noise_ceiling(noisy)
    assert 0 < ceiling.lower < ceiling.upper < 1


def test_classical_mds_keeps_planar_distances() -> None:
    points = np.array([[0, 0], [3, 0], [0, 4], [1, 1], [-2, 2]], dtype=float)
    distances = np.linalg.norm(points[:, None] - points[None, :], axis=2)
    coords = rsa.classical_mds(distances)
    found = np.linalg.norm(coords[:, None] - coords[None, :], axis=2)
    assert found == pytest.approx(distances, abs=1e-9)


def _task(size: int) -> RatingTask:
    items = [
        RatingItem(id=f"i{n:05d}", lines=[Line(number=1, speaker="B", text=f"item {n}")])
        for n in range(size)
    ]
    pairs = [
        RatingPair(id=f"r{a:02d}{b:03d}", first=items[a].id, second=items[b].id)
        for a in range(size)
        for b in range(a + 1, size)
    ]
    return RatingTask(
        id="tzzzzzz",
        title="t",
        intro="",
        end_text="",
        question="q",
        scale_min=1,
        scale_max=7,
        min_label="",
        max_label="",
        items=items,
        pairs=pairs,
    )


def _ratings(task: RatingTask, matrix: rsa.Matrix, judge: str, cohort: str) -> list[Rating]:
    index = {item.id: n for n, item in enumerate(task.items)}
    low, high = float(np.min(rsa.upper(matrix))), float(np.max(rsa.upper(matrix)))
    out = []
    for pair in task.pairs:
        d = (matrix[index[pair.first], index[pair.second]] - low) / (high - low)
        out.append(
            Rating(
                task="t",
                task_id=task.id,
                judge_id=judge,
                cohort=cohort,
                judge_type="human" if cohort == "human" else "llm",
                pair_id=pair.id,
                first=pair.first,
                second=pair.second,
                rating=round(7 - 6 * d),
                scale_min=1,
                scale_max=7,
                source="test",
            )
        )
    return out


def test_dissimilarity_matrix_from_ratings() -> None:
    task = _task(3)
    ratings = _ratings(task, np.array([[0, 1, 0], [1, 0, 0.5], [0, 0.5, 0]]), "j", "human")
    matrix = rsa.dissimilarity_matrix(ratings, [i.id for i in task.items])
    assert matrix[0, 1] == matrix[1, 0] == 1.0  # rated 1: least similar
    assert matrix[1, 2] == pytest.approx(0.5)
    partial = rsa.dissimilarity_matrix(ratings[:1], [i.id for i in task.items])
    assert math.isnan(partial[1, 2]) and partial[0, 0] == 0


def test_analysis_finds_the_aligned_cohort() -> None:
    task = _task(10)
    rng = np.random.default_rng(2)
    ratings: list[Rating] = []
    for n in range(5):
        ratings += _ratings(task, _clustered(10, rng, 0.3), f"h{n}", "human")
        ratings += _ratings(task, _clustered(10, rng, 0.3), f"a{n}", "aligned")
        ratings += _ratings(task, _noise(10, rng), f"n{n}", "noise")
    result = analyse(task, ratings, permutations=200)
    assert [c.name for c in result.cohorts] == ["human", "aligned", "noise"]
    by_name = {c.cohort: c for c in result.comparisons}
    assert by_name["aligned"].p_bonferroni < 0.05 < by_name["noise"].p_bonferroni
    assert by_name["aligned"].rho > by_name["noise"].rho
    assert by_name["aligned"].p_bonferroni == pytest.approx(min(1, 2 * by_name["aligned"].p))
    human = result.cohort("human")
    assert human is not None and human.ceiling.lower < human.ceiling.upper
    assert len(human.pairwise) == 10 and human.icc_single > 0.3
    assert by_name["aligned"].individual.shape == (5, 5)
    assert result.map_coords.shape == (15, 2)


def test_cohen_kappa_known_value() -> None:
    # 50 items: both yes 20, a yes b no 5, a no b yes 10, both no 15 -> kappa 0.4.
    pairs = [(True, True)] * 20 + [(True, False)] * 5 + [(False, True)] * 10 + [(False, False)] * 15
    assert cohen_kappa(pairs) == pytest.approx(0.4)


def _judgement(judge: str, pair: int, correct: bool) -> Judgement:
    human = judge.startswith("h")
    return Judgement(
        study="s",
        judge_id=judge,
        judge_type="human" if human else "llm",
        judge_model=None if human else "mock/x",
        pair_id=f"p{pair:05d}",
        choice="A" if correct else "B",
        bot_position=1,
        correct=correct,
        source="test",
        condition={
            "bot_conversation": f"b{pair}",
            "human_conversation": f"h{pair}",
            "live_from": 1,
            "live_to": 3,
        },
    )


def test_the_human_like_llm_judge_agrees_most() -> None:
    rng = np.random.default_rng(4)
    judgements = []
    for pair in range(30):
        easy = pair % 2 == 0
        for human in range(4):
            judgements.append(_judgement(f"h{human}", pair, easy or rng.random() < 0.2))
        judgements.append(_judgement("llm-like", pair, easy))
        judgements.append(_judgement("llm-coin", pair, bool(rng.random() < 0.5)))
    found = verdict_agreement(judgements, reps=200)
    assert [j.judge for j in found.judges] == ["llm-like", "llm-coin"]
    like = found.judges[0]
    assert like.kappa.low <= like.kappa.value <= like.kappa.high
    assert like.kappa.value > 0.5 and like.fooled_r.value > 0.8
    assert found.humans == 4 and found.pairs == 30
    assert 0 < found.human_kappa.value < 1


def test_the_fast_permutation_path_matches_the_plain_one() -> None:
    rng = np.random.default_rng(9)
    x, y = _clustered(9, rng, 0.5), _clustered(9, rng, 0.5)
    observed = rsa.matrix_alignment(x, y)
    draw = np.random.default_rng(1)
    rows, cols = np.triu_indices(9, k=1)
    higher = 0
    for _ in range(300):
        order = draw.permutation(9)
        higher += rsa.spearman(rsa.upper(x), y[np.ix_(order, order)][rows, cols]) >= observed
    assert rsa.permutation_p(x, y, permutations=300, seed=1) == (1 + higher) / 301


def test_report_page_escapes_names(tmp_path: Path) -> None:
    task = _task(6)
    rng = np.random.default_rng(8)
    ratings: list[Rating] = []
    for n in range(3):
        ratings += _ratings(task, _clustered(6, rng, 0.3), f"h{n}", "human")
        ratings += _ratings(task, _clustered(6, rng, 0.3), f"m{n}", "<script>x()</script>")
    result = analyse(task, ratings, permutations=20)
    report = build_alignment_report(result, tmp_path)
    page = render_html(report)
    assert "<script>" not in page and "&lt;script&gt;x()" in page


def _rounded(size: int, rng: np.random.Generator, noise: float) -> rsa.Matrix:
    """A clustered matrix on a coarse scale, so its values tie as ratings do."""
    return np.round(_clustered(size, rng, noise) * 3) / 3


def test_noise_ceiling_matches_rsatoolbox_for_spearman() -> None:
    from rsatoolbox.inference.noise_ceiling import boot_noise_ceiling
    from rsatoolbox.rdm import RDMs

    rng = np.random.default_rng(11)
    for people in (2, 5, 9):
        matrices = [_rounded(10, rng, 0.8) for _ in range(people)]
        data = RDMs(np.stack([rsa.upper(m) for m in matrices]))
        low, high = boot_noise_ceiling(data, method="spearman")
        ceiling = rsa.noise_ceiling(matrices)
        assert ceiling.lower == pytest.approx(low, abs=1e-12)
        assert ceiling.upper == pytest.approx(high, abs=1e-12)


def test_mean_alignment_with_each_human_matches_rsatoolbox() -> None:
    from rsatoolbox.rdm import RDMs, compare

    rng = np.random.default_rng(12)
    humans = [_rounded(9, rng, 0.7) for _ in range(6)]
    model = _rounded(9, rng, 0.4)
    expected = compare(
        RDMs(rsa.upper(model)[None]), RDMs(np.stack([rsa.upper(m) for m in humans])), "spearman"
    ).mean()
    assert rsa.mean_alignment(model, humans) == pytest.approx(expected, abs=1e-12)


def test_an_llm_cohort_like_the_humans_sits_in_the_ceiling_not_above_it(tmp_path: Path) -> None:
    # LLM participants drawn exactly as the humans are: a perfect model of the humans.
    # Its group-to-group rho beats the ceiling (averaging removes noise on both sides),
    # but the figure the ceiling bounds, its group matrix against each human, does not.
    task = _task(12)
    rng = np.random.default_rng(13)
    ratings: list[Rating] = []
    for n in range(8):
        ratings += _ratings(task, _clustered(12, rng, 0.9), f"h{n}", "human")
        ratings += _ratings(task, _clustered(12, rng, 0.9), f"m{n}", "like")
    result = analyse(task, ratings, permutations=20)
    human = result.cohort("human")
    assert human is not None
    (like,) = result.comparisons
    assert like.rho > human.ceiling.upper
    assert like.to_humans < human.ceiling.upper
    assert like.to_humans / human.ceiling.lower == pytest.approx(1, abs=0.15)
    row = comparison_table(result).rows[0]
    assert row[4] == f"{like.to_humans:.2f}"
    assert row[5] == human.ceiling.place(like.to_humans)
    assert row[5].split()[0] in ("within", "below")
    page = render_html(build_alignment_report(result, tmp_path))
    assert "not comparable with the ceiling" in page


def test_fleiss_kappa_matches_statsmodels() -> None:
    from statsmodels.stats.inter_rater import fleiss_kappa as reference

    rng = np.random.default_rng(21)
    for raters in (2, 3, 5):
        items = [list(rng.random(raters) < rng.uniform(0.1, 0.9)) for _ in range(40)]
        table = np.array([[sum(i), raters - sum(i)] for i in items])
        assert fleiss_kappa(items) == pytest.approx(reference(table), abs=1e-12)
    assert math.isnan(fleiss_kappa([[True, True], [True, True]]))


def test_verdict_kappas_compare_like_with_like_by_sklearn() -> None:
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(22)
    judgements = []
    truth: dict[int, list[bool]] = {}
    llm: dict[int, bool] = {}
    for pair in range(25):
        easy = rng.random() < 0.5
        truth[pair] = [bool(easy or rng.random() < 0.3) for _ in range(3)]
        llm[pair] = bool(easy or rng.random() < 0.5)
        for number, found in enumerate(truth[pair]):
            judgements.append(_judgement(f"h{number}", pair, found))
        judgements.append(_judgement("llm", pair, llm[pair]))
    found = verdict_agreement(judgements, reps=20)
    pairs = sorted(truth)

    def human(n: int) -> list[bool]:
        return [truth[p][n] for p in pairs]

    # The ceiling: Cohen's kappa of every two humans, averaged; the LLM's: Cohen's kappa
    # with each human, averaged. The same statistic on both sides.
    ceiling = np.mean([cohen_kappa_score(human(a), human(b)) for a, b in ((0, 1), (0, 2), (1, 2))])
    mine = [llm[p] for p in pairs]
    expected = np.mean([cohen_kappa_score(mine, human(n)) for n in range(3)])
    assert found.human_kappa.value == pytest.approx(ceiling, abs=1e-12)
    assert found.judges[0].kappa.value == pytest.approx(expected, abs=1e-12)
    assert found.human_kappa.low <= found.human_kappa.value <= found.human_kappa.high


def test_the_kappa_ceiling_is_not_a_fleiss_kappa_the_llm_beats() -> None:
    from sklearn.metrics import cohen_kappa_score

    # Humans who split on some pairs in a pattern Fleiss' kappa reads lower than the mean
    # pairwise Cohen's kappa (different raters' base rates); an LLM that copies one human.
    h0 = [True] * 10 + [False] * 10
    h1 = [True] * 8 + [False] * 12
    h2 = [True] * 14 + [False] * 6
    judgements = []
    for pair in range(20):
        for name, verdicts in (("h0", h0), ("h1", h1), ("h2", h2)):
            judgements.append(_judgement(name, pair, verdicts[pair]))
        judgements.append(_judgement("llm", pair, h0[pair]))
    found = verdict_agreement(judgements, reps=10)
    pairwise = np.mean([cohen_kappa_score(a, b) for a, b in ((h0, h1), (h0, h2), (h1, h2))])
    assert found.human_kappa.value == pytest.approx(pairwise, abs=1e-12)
    assert found.human_kappa.value != pytest.approx(
        fleiss_kappa([[h0[p], h1[p], h2[p]] for p in range(20)]), abs=1e-3
    )
    llm = np.mean([cohen_kappa_score(h0, other) for other in (h0, h1, h2)])
    assert found.judges[0].kappa.value == pytest.approx(llm, abs=1e-12)


def _sided(size: int, rng: np.random.Generator, between_noise: float) -> rsa.Matrix:
    """Items 0..size/2 are 'bot', the rest 'human': a clustered matrix whose pairs across
    the two sides carry extra noise (people and models disagree there most)."""
    matrix = _clustered(size, rng, 0.2)
    half = size // 2
    jitter = rng.normal(0, between_noise, (half, size - half))
    matrix[:half, half:] += jitter
    matrix[half:, :half] += jitter.T
    return matrix


def test_within_and_between_category_alignment_and_their_signed_rank_tests() -> None:
    task = _task(10)
    sides = {item.id: ("bot" if n < 5 else "human") for n, item in enumerate(task.items)}
    rng = np.random.default_rng(31)
    ratings: list[Rating] = []
    for n in range(6):
        ratings += _ratings(task, _sided(10, rng, 0.0), f"h{n}", "human")
        ratings += _ratings(task, _sided(10, rng, 3.0), f"a{n}", "noisy across")
        ratings += _ratings(task, _sided(10, rng, 3.0), f"b{n}", "also noisy across")
    result = analyse(task, ratings, item_sides=sides, permutations=10)
    human = result.cohort("human")
    assert human is not None
    rows, cols = np.triu_indices(10, k=1)
    within = (rows < 5) == (cols < 5)
    for comparison in result.comparisons:
        cohort = result.cohort(comparison.cohort)
        assert cohort is not None
        expected = stats.spearmanr(rsa.upper(human.group)[within], rsa.upper(cohort.group)[within])
        assert comparison.within_rho == pytest.approx(expected.statistic, abs=1e-12)
        assert comparison.within_rho > comparison.between_rho
        # The participant-level test is paired: each participant's within and between
        # value, by scipy's signed-rank test (a participant without a value left out).
        # All higher within: the smaller signed-rank sum is 0, the exact p 2 / 2^n.
        ins = [rsa.matrix_alignment(m, human.group, within) for m in cohort.matrices]
        outs = [rsa.matrix_alignment(m, human.group, ~within) for m in cohort.matrices]
        expected = stats.wilcoxon(ins, outs, alternative="two-sided", nan_policy="omit")
        assert (comparison.within_w, comparison.within_p) == (
            expected.statistic,
            pytest.approx(expected.pvalue, abs=1e-12),
        )
        kept = sum(not (math.isnan(a) or math.isnan(b)) for a, b in zip(ins, outs, strict=True))
        assert comparison.within_p == pytest.approx(2 / 2**kept)
    # Across the two cohorts, paired by cohort: with two pairs the exact p is 2 / 2^2.
    assert (result.category_w, result.category_p) == (0.0, pytest.approx(0.5))


def test_the_signed_rank_test_pairs_each_participants_values() -> None:
    # Five participants, each higher within than between: a rank-sum test that takes the
    # ten values as independent said p = 0.008; paired, p = 2 / 2^5 = 0.0625.
    within = [0.62, 0.55, 0.71, 0.48, 0.66]
    between = [0.41, 0.35, 0.45, 0.30, 0.44]
    w, p = rsa.signed_rank(within, between)
    expected = stats.wilcoxon(within, between)
    assert (w, p) == (expected.statistic, pytest.approx(expected.pvalue, abs=1e-12))
    assert p == pytest.approx(0.0625)
    assert stats.mannwhitneyu(within, between).pvalue < 0.01  # what the old test said
    # NaN pairs are left out; no difference at all is no test.
    assert rsa.signed_rank([*within, math.nan], [*between, 0.2]) == (w, pytest.approx(p))
    assert all(math.isnan(v) for v in rsa.signed_rank([0.5, 0.4], [0.5, 0.4]))


def test_alignment_is_placed_between_the_ceiling_bounds_never_divided_by_the_lower() -> None:
    ceiling = rsa.NoiseCeiling(0.02, 0.50)
    # 60% of the upper bound: the old 'of lower ceiling' printed 1500%.
    assert ceiling.place(0.30) == "within (58% of the way from lower to upper)"
    assert ceiling.place(0.01) == "below (0.01 under the lower bound)"
    assert ceiling.place(0.55) == "above (0.05 over the upper bound)"
    assert ceiling.place(math.nan) == "\u2014"
    assert "%" not in ceiling.place(0.55) and "%" not in ceiling.place(0.01)


def test_the_individual_level_table_finds_the_best_match_and_the_human_range(
    tmp_path: Path,
) -> None:
    task = _task(8)
    rng = np.random.default_rng(32)
    ratings: list[Rating] = []
    for n in range(4):
        ratings += _ratings(task, _clustered(8, rng, 0.6), f"h{n}", "human")
        ratings += _ratings(task, _clustered(8, rng, 0.6), f"m{n}", "model")
    result = analyse(task, ratings, permutations=10)
    human, model = result.cohort("human"), result.cohort("model")
    assert human is not None and model is not None
    # By hand with scipy: every model participant against every human.
    values = np.array(
        [
            [stats.spearmanr(rsa.upper(m), rsa.upper(h)).statistic for h in human.matrices]
            for m in model.matrices
        ]
    )
    (comparison,) = result.comparisons
    assert comparison.individual == pytest.approx(values, abs=1e-12)
    i, j = np.unravel_index(np.argmax(values), values.shape)
    spread = [
        stats.spearmanr(rsa.upper(x), rsa.upper(y)).statistic
        for n, x in enumerate(human.matrices)
        for y in human.matrices[n + 1 :]
    ]
    (row,) = individual_table(result).rows
    assert row[3] == f"{values[i, j]:.2f} ({model.participants[i]} x {human.participants[j]})"
    inside = np.mean((values >= min(spread)) & (values <= max(spread)))
    assert row[4] == f"{100 * inside:.0f}%"
    assert row[5] == f"{min(spread):.2f} - {max(spread):.2f}"


def test_tsne_keeps_two_distinct_cohorts_apart() -> None:
    rng = np.random.default_rng(33)
    first = [_clustered(8, rng, 0.1) for _ in range(12)]
    second = [_noise(8, rng) for _ in range(12)]
    coords = rsa.participant_tsne(first + second)
    distances = np.linalg.norm(coords[:, None] - coords[None, :], axis=2)
    np.fill_diagonal(distances, np.inf)
    nearest = distances.argmin(axis=1)
    assert all((n < 12) == (i < 12) for i, n in enumerate(nearest))
    assert rsa.participant_tsne(first[:2]).shape == (2, 2)
