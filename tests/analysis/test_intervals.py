"""Every interval is what its label says, none has zero width from data that disagree,
and every test says what it was computed on (checked against statsmodels and scipy)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats
from statsmodels.stats.proportion import proportion_confint

from sdtt.analysis import stats
from sdtt.analysis.metrics import summarise
from sdtt.analysis.report import build_report, render_html, render_markdown
from sdtt.analysis.table import judgement_table
from tests.analysis.helpers import judgement


def frame(cells: list[tuple[str, str, bool]]) -> pd.DataFrame:
    return judgement_table([judgement(p, j, c, n=0) for p, j, c in cells])


def half_right() -> pd.DataFrame:
    """Three pairs, each judged twice by one judge (both orders): one right, one wrong."""
    return frame([(f"p{i}", "llm", right) for i in range(3) for right in (True, False)])


def test_three_pairs_each_half_right_get_an_interval_of_honest_width() -> None:
    summary = summarise(half_right(), reps=500)
    assert summary.pass_rate == 0.5
    # The bootstrap gave [50.0%, 50.0%]: one judge, and every pair at 1 of 2.
    assert summary.boot_high - summary.boot_low > 0.5
    # The pairs are no more alike inside than across (ICC clipped to 0): the effective n
    # is all 6 judgements, and the interval Wilson's for 3 of 6.
    assert summary.effective_n == pytest.approx(6)
    low, high = proportion_confint(3, 6, alpha=0.05, method="wilson")
    assert (summary.boot_low, summary.boot_high) == pytest.approx((low, high), abs=1e-12)
    assert summary.interval_method == "Wilson, effective n"


def test_the_effective_n_is_kish_with_scipys_one_way_anova() -> None:
    rng = np.random.default_rng(4)
    for _ in range(20):
        sizes = rng.integers(2, 7, size=6)
        pairs = np.repeat(np.arange(6), sizes)
        chance = rng.uniform(0.1, 0.9, size=6)[pairs]
        correct = (rng.random(pairs.size) < chance).astype(float)
        groups = [correct[pairs == i] for i in range(6)]
        f = scipy_stats.f_oneway(*groups).statistic
        n, k = correct.size, 6
        m0 = (n - float(np.sum(sizes**2)) / n) / (k - 1)
        icc = min(max((f - 1) / (f + m0 - 1), 0.0), 1.0)
        expected = n / (1 + (n / k - 1) * icc)
        assert stats.effective_n(pairs.astype(np.int64), correct) == pytest.approx(expected)
        assert k <= stats.effective_n(pairs.astype(np.int64), correct) <= n


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.booleans(), min_size=1, max_size=4), min_size=1, max_size=6).filter(
        lambda pairs: len({v for pair in pairs for v in pair}) == 2
    ),
    st.booleans(),
)
def test_no_interval_from_data_that_disagree_has_zero_width(
    pairs: list[list[bool]], one_judge: bool
) -> None:
    # One judge (an LLM asked both orders) leaves the bootstrap only the pairs to draw.
    cells = [
        (f"p{i}", "llm" if one_judge else f"j{n}", v)
        for i, pair in enumerate(pairs)
        for n, v in enumerate(pair)
    ]
    summary = summarise(frame(cells), reps=50)
    assert summary.boot_high - summary.boot_low > 0.05
    assert summary.boot_low <= summary.pass_rate <= summary.boot_high


def test_every_interval_names_the_method_its_row_used(tmp_path: Path) -> None:
    # Condition N=0: 0 of 3 fooled, all agreeing (Wilson); N=100: 40 pairs, 4 judges
    # each, mixed (the bootstrap is the wider there).
    rng = np.random.default_rng(2)
    cells = [judgement(f"a{i}", f"j{i}", True, n=0) for i in range(3)]
    cells += [
        judgement(f"b{i}", f"k{j}", bool(rng.random() < 0.3 + 0.4 * (i % 2)), n=100)
        for i in range(40)
        for j in range(4)
    ]
    report = build_report(judgement_table(cells), tmp_path, reps=400)
    summaries = {
        n: summarise(judgement_table([c for c in cells if c.pseudo_turns == n]), reps=400)
        for n in (0, 100)
    }
    methods = {n: s.interval_method for n, s in summaries.items()}
    assert methods == {0: "Wilson, effective n", 100: "cluster bootstrap"}
    few, many = report.headline
    assert "Wilson, effective n 3.0" in few and "bootstrap" not in few
    assert "cluster bootstrap" in many and "Wilson" not in many
    (points,) = [s for s in report.sections if s.title.startswith("Pass rate against turns")]
    method = points.header.index("CI method")
    assert [row[method] for row in points.rows] == ["Wilson, effective n 3.0", "cluster bootstrap"]
    table = next(s for s in report.sections if s.title.endswith("one row per condition"))
    assert [row[table.header.index("CI method")] for row in table.rows] == [
        "Wilson, effective n 3.0",
        "cluster bootstrap",
    ]
    for page in (render_html(report), render_markdown(report)):
        assert "bootstrap 95%" not in page
        assert "Wilson, effective n 3.0" in page


def test_d_prime_of_one_right_judgement_of_one_is_no_longer_zero() -> None:
    # The log-linear rule: (1 + 1/2) / (1 + 1) = 0.75, d' = sqrt(2) z(0.75).
    assert stats.dprime_2afc(1.0, 1) == pytest.approx(math.sqrt(2) * scipy_stats.norm.ppf(0.75))
    assert stats.dprime_2afc(0.0, 4) == pytest.approx(math.sqrt(2) * scipy_stats.norm.ppf(0.1))
    summary = summarise(frame([("p1", "j1", True)]), reps=10)
    assert summary.dprime > 0.9


def test_the_tests_say_they_are_on_the_pooled_judgements(tmp_path: Path) -> None:
    # Nine pairs of one fooled judge and one pair of 40 judges who all found the bot:
    # pass rate (pair-averaged) 90%, pooled 9 of 49 = 18.4%.
    cells = [judgement(f"p{i}", f"j{i}", False, n=0) for i in range(9)]
    cells += [judgement("p9", f"k{i}", True, n=0) for i in range(40)]
    table = judgement_table(cells)
    summary = summarise(table, reps=200)
    assert summary.pass_rate == pytest.approx(0.9)
    assert summary.binomial_p == pytest.approx(scipy_stats.binomtest(40, 49).pvalue)
    assert summary.dprime == pytest.approx(math.sqrt(2) * scipy_stats.norm.ppf(40 / 49))
    sections = build_report(table, tmp_path, reps=200).sections
    section = next(s for s in sections if s.title.endswith("one row per condition"))
    for title in ("binom. p (pooled)", "TOST p (pooled)", "d' (pooled)", "pooled"):
        assert title in section.header
    assert "detect. (all verdicts)" in section.header
    assert "single-transcript ties included" in section.note


def test_a_row_without_a_usable_judgement_names_no_method(tmp_path: Path) -> None:
    cells = [judgement("p1", "j1", None, n=0, excluded="no answer")]
    cells.append(judgement("p2", "j1", True, n=100))
    report = build_report(judgement_table(cells), tmp_path, reps=50)
    empty, used = report.headline
    assert "0 judgement(s)" in empty and "Wilson" not in empty and "bootstrap" not in empty
    assert "Wilson, effective n 1.0" in used
