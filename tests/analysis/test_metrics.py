from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from sdtt.analysis import stats
from sdtt.analysis.metrics import breakdown, expand_by, summarise
from sdtt.analysis.table import judgement_table
from sdtt.cli import main
from sdtt.tasks.judgements import write_judgements
from tests.analysis.helpers import judgement


def unequal_study() -> pd.DataFrame:
    """Pair p1: 3 judges, 2 correct; p2: 1 judge, correct; p3: 2 judges, none correct.
    Plus rows that must not count: an excluded judge, a missing answer, a catch pair."""
    records = [
        judgement("p1", "j1", True),
        judgement("p1", "j2", True, bot_position=2),
        judgement("p1", "j3", False),
        judgement("p2", "j1", True),
        judgement("p3", "j2", False),
        judgement("p3", "j3", False, bot_position=2),
        judgement("p2", "j4", False, excluded="failed catch pairs"),
        judgement("p3", "j5", None, excluded="no answer"),
        judgement("c1", "j1", False, kind="catch"),
    ]
    return judgement_table(records)


def test_pair_averaged_and_pooled_pass_rates_match_hand_values() -> None:
    summary = summarise(unequal_study(), reps=200)
    # P_X = 1 - (2/3 + 1/1 + 0/2) / 3 = 4/9; pooled = 1 - 3/6.
    assert summary.pass_rate == pytest.approx(4 / 9)
    assert summary.pass_rate_pooled == pytest.approx(0.5)
    assert (summary.pairs, summary.judges, summary.judgements) == (3, 3, 6)
    assert summary.excluded == 2
    assert summary.exclusions == {"failed catch pairs": 1, "no answer": 1}


def test_tests_and_intervals_match_hand_values() -> None:
    summary = summarise(unequal_study(), reps=200)
    # Wilson for 3 of 6 at z = 1.96: 0.5 -+ 0.31238.
    assert summary.wilson_low == pytest.approx(0.18762, abs=1e-4)
    assert summary.wilson_high == pytest.approx(0.81238, abs=1e-4)
    low, high = proportion_confint(3, 6, alpha=0.05, method="wilson")
    assert (summary.wilson_low, summary.wilson_high) == pytest.approx((low, high), abs=1e-12)
    assert summary.binomial_p == pytest.approx(1.0)
    # TOST at margin 0.1: P(X >= 3 | 0.4) = P(X <= 3 | 0.6) = 0.45568 for n = 6.
    assert summary.tost_p == pytest.approx(0.45568, abs=1e-5)
    assert not summary.equivalent
    assert summary.dprime == pytest.approx(0.0)
    assert stats.dprime_2afc(0.75, 100) == pytest.approx(math.sqrt(2) * 0.6744898, abs=1e-6)
    assert summary.boot_low <= summary.pass_rate <= summary.boot_high


def test_paired_verdicts_give_conditional_rates_and_detectability() -> None:
    summary = summarise(unequal_study(), reps=10)
    # 3 of 6 correct: bot called M 3 times, human called H 3 times.
    assert summary.confusion.rate("M", "M") == pytest.approx(0.5)
    assert summary.confusion.rate("H", "H") == pytest.approx(0.5)
    assert summary.confusion.detectability == pytest.approx(0.5)


def test_single_transcript_labels_give_unequal_conditional_rates() -> None:
    records = [
        # Bot in chat 1 called AI, human in chat 2 called human (correct choice).
        judgement("p1", "z", True, judge_kind="zero-shot", labels={"1": "ai", "2": "human"}),
        # Both called human: a tie, excluded from the pass rate but counted here.
        judgement(
            "p2",
            "z",
            None,
            excluded="tie: both chats labelled human",
            judge_kind="zero-shot",
            labels={"1": "human", "2": "human"},
        ),
    ]
    summary = summarise(judgement_table(records), reps=10)
    assert summary.judgements == 1
    assert summary.confusion.rate("M", "M") == pytest.approx(0.5)  # 1 of 2 bots caught
    assert summary.confusion.rate("H", "H") == pytest.approx(1.0)  # both humans called human
    assert summary.confusion.detectability == pytest.approx(0.75)


def test_zero_variance_and_empty_groups_do_not_crash() -> None:
    all_right = judgement_table([judgement(f"p{i}", f"j{i}", True) for i in range(5)])
    summary = summarise(all_right, reps=50)
    assert summary.pass_rate == 0.0
    # Every replicate of a bootstrap is 100% correct too, so its percentile interval
    # was [0%, 0%]; the interval is Wilson's with the 5 pairs as trials instead.
    low, high = proportion_confint(0, 5, alpha=0.05, method="wilson")
    assert (summary.boot_low, summary.boot_high) == pytest.approx((low, high), abs=1e-12)
    assert summary.boot_high > 0.4
    assert math.isfinite(summary.dprime)
    assert summary.binomial_p == pytest.approx(0.0625)
    nothing = judgement_table([judgement("p1", "j1", None, excluded="no answer")])
    empty = summarise(nothing, reps=50)
    assert empty.judgements == 0 and math.isnan(empty.pass_rate) and not empty.equivalent


def test_breakdowns_by_model_x_and_demographics() -> None:
    records = [
        judgement("p1", "j1", True, x=3, model="m1", demographics={"age": "18-24"}),
        judgement("p2", "j1", False, x=10, model="m1", demographics={"age": "18-24"}),
        judgement("p3", "j2", False, x=3, model="m2", demographics={"age": "25-34"}),
        judgement("p4", "j2", False, x=10, model="m2", demographics={"age": "25-34"}),
    ]
    frame = judgement_table(records)
    by_x = breakdown(frame, "x", reps=20)
    assert list(by_x["x"]) == ["3", "10"]
    assert list(by_x["pass_rate"]) == [0.5, 1.0]
    by_model = breakdown(frame, "model", reps=20)
    assert dict(zip(by_model["model"], by_model["pass_rate"], strict=True)) == {
        "m1": 0.5,
        "m2": 1.0,
    }
    assert expand_by(frame, ["demographics", "age", "judge_type"]) == [
        "demo.age",
        "demo.age",
        "judge_type",
    ]
    by_age = breakdown(frame, "demo.age", reps=20)
    assert list(by_age["pass_rate"]) == [0.5, 1.0]
    with pytest.raises(KeyError):
        expand_by(frame, ["shoe size"])


def test_wilson_interval_covers_at_its_nominal_rate() -> None:
    rng = np.random.default_rng(1)
    n, p = 40, 0.3
    hits = rng.binomial(n, p, size=2000)
    covered = [lo <= p <= hi for lo, hi in (stats.wilson(k, n) for k in hits)]
    assert 0.93 <= np.mean(covered) <= 0.975


def test_cluster_bootstrap_covers_the_pair_averaged_rate() -> None:
    """Pairs differ in difficulty and judges in skill; the two-way bootstrap's 95 %
    interval should hold the true pair-averaged proportion correct about 95 % of the
    time (a plain binomial interval would be far too narrow here)."""
    rng = np.random.default_rng(7)
    n_pairs, n_judges, sims = 30, 12, 120
    truth = 0.6
    covered = []
    for sim in range(sims):
        pair_logit = rng.normal(0, 1.0, n_pairs)
        judge_logit = rng.normal(0, 0.5, n_judges)
        base = np.log(truth / (1 - truth))
        p = 1 / (1 + np.exp(-(base + pair_logit[:, None] + judge_logit[None, :])))
        correct = (rng.random((n_pairs, n_judges)) < p).astype(float).ravel()
        pairs = np.repeat(np.arange(n_pairs), n_judges)
        judges = np.tile(np.arange(n_judges), n_pairs)
        averaged, _ = stats.cluster_bootstrap(pairs, judges, correct, reps=300, seed=sim)
        low, high = stats.percentile_interval(averaged)
        # The population pair-averaged rate for these logits, by Monte Carlo.
        draws = rng.normal(0, 1.0, (4000, 1)) + rng.normal(0, 0.5, (1, 40))
        target = float(np.mean(1 / (1 + np.exp(-(base + draws)))))
        covered.append(low <= target <= high)
    assert 0.85 <= np.mean(covered) <= 1.0


def test_bootstrap_of_unequal_pairs_weighs_pairs_not_judgements() -> None:
    # One pair with 20 correct judges, nine with one wrong judge each.
    pairs = np.array([0] * 20 + list(range(1, 10)))
    judges = np.arange(29)
    correct = np.array([1.0] * 20 + [0.0] * 9)
    averaged, pooled = stats.cluster_bootstrap(pairs, judges, correct, reps=400, seed=3)
    # Point values 0.1 (pair-averaged) and 0.69 (pooled); the replicates centre near them.
    assert np.nanmean(averaged) < 0.25
    assert np.nanmean(pooled) > 2 * np.nanmean(averaged)


def test_each_interval_in_the_terminal_sits_beside_the_rate_it_is_of(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Nine pairs with one judge each, all fooled; one pair with 30 judges, none fooled:
    # pair-averaged pass rate 90%, pooled 9 of 39 = 23.1%.
    records = [judgement(f"p{i}", f"j{i}", False) for i in range(9)]
    records += [judgement("p9", f"k{i}", True) for i in range(30)]
    path = tmp_path / "judgements.jsonl"
    write_judgements(path, records)
    monkeypatch.setenv("COLUMNS", "300")
    assert main(["score", str(path), "--bootstrap", "300"]) == 0
    out = capsys.readouterr().out
    header, row = [
        [cell.strip() for cell in line.split("\u2503" if "\u2503" in line else "\u2502")[1:-1]]
        for line in out.splitlines()
        if ("pass rate" in line and "\u2503" in line) or "90.0%" in line
    ][:2]
    shown = dict(zip(header, row, strict=True))
    assert shown["pass rate"] == "90.0%" and shown["pooled"] == "23.1%"
    low, high = (float(v.strip("%")) for v in shown["its 95% CI"].strip("[]").split(", "))
    assert low <= 90.0 <= high
    wilson = proportion_confint(9, 39, alpha=0.05, method="wilson")
    assert shown["pooled 95% CI (Wilson)"] == f"[{100 * wilson[0]:.1f}%, {100 * wilson[1]:.1f}%]"
    assert shown["CI method"] in ("cluster bootstrap", "Wilson, effective n 10.0")
    assert "percentile two-way cluster bootstrap" in " ".join(out.split())
