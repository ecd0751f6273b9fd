"""Scoring per class and cut, attention checks and catch items, figures checked against
counts made independently here (pandas) and intervals against statsmodels and SciPy."""

from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from sdtt.single.build import SingleKey, StudySettings, build_study
from sdtt.single.catch import catch_items
from sdtt.single.items import cut_items
from sdtt.single.scoring import judge_bootstrap, score_single, trials_of
from sdtt.tasks.single_task import SingleAnswer, SingleTask
from tests.single.helpers import corpus


@pytest.fixture(scope="module")
def study() -> tuple[SingleTask, SingleKey]:
    items, _ = cut_items(corpus(3, 12), (3, 6, 12))
    catch = catch_items(items, 6, seed=1)
    settings = StudySettings(forms=12, per_form=8, catch_per_form=1, seed=2)
    return build_study(items, settings, catch=catch)


def fabricate(
    task: SingleTask, key: SingleKey, *, skill: float, topic_skill: float, seed: int
) -> list[SingleAnswer]:
    """One judge per form: right about a speaker with probability ``skill``, right about
    the topic with probability ``topic_skill``."""
    rng = random.Random(seed)
    answers = []
    for number, form in enumerate(task.forms, start=1):
        for item_id in form:
            entry = key.entry(item_id)
            view = task.item(item_id)
            verdicts = {}
            for judged in view.judged:
                truth = entry.truth.get(judged.key, "human")
                other = "machine" if truth == "human" else "human"
                verdicts[judged.key] = truth if rng.random() < skill else other
            wrong = (
                [c.value for c in view.topic.choices or [] if c.value != entry.topic]
                if view.topic
                else []
            )
            topic = entry.topic if rng.random() < topic_skill or not wrong else rng.choice(wrong)
            answers.append(
                SingleAnswer(
                    task=task.id,
                    judge_id=f"j{number}",
                    item=item_id,
                    verdicts=verdicts,
                    topic=topic,
                )
            )
    return answers


def expected_table(answers: list[SingleAnswer], key: SingleKey) -> pd.DataFrame:
    """One row per scored speaker, written without sdtt's scoring."""
    rows = []
    for answer in answers:
        entry = key.entry(answer.item)
        if entry.catch:
            continue
        if entry.topic is not None and answer.topic != entry.topic:
            continue
        for speaker, truth in entry.truth.items():
            rows.append(
                {
                    "judge": answer.judge_id,
                    "klass": entry.klass,
                    "cut": str(entry.cut),
                    "truth": truth,
                    "said": answer.verdicts[speaker],
                }
            )
    return pd.DataFrame(rows)


def test_rates_per_class_and_cut_match_an_independent_count(
    study: tuple[SingleTask, SingleKey],
) -> None:
    task, key = study
    answers = fabricate(task, key, skill=0.7, topic_skill=0.95, seed=1)
    scores = score_single(answers, key, min_topic_share=0.0, reps=200)
    frame = expected_table(answers, key)
    rows = {(r.klass, r.cut): r for r in scores.rows if r.group == "human"}
    for (klass, cut), cell in frame.groupby(["klass", "cut"]):
        row = rows[klass, cut]
        humans = cell[cell.truth == "human"]
        machines = cell[cell.truth == "machine"]
        assert row.trials == len(cell)
        if len(humans):
            assert row.p_hh == pytest.approx((humans.said == "human").mean())
            low, high = proportion_confint(
                (humans.said == "human").sum(), len(humans), method="wilson"
            )
            assert row.p_hh_interval == pytest.approx((low, high))
        else:
            assert np.isnan(row.p_hh)
        if len(machines):
            assert row.p_mm == pytest.approx((machines.said == "machine").mean())
        if len(humans) and len(machines):
            assert row.detectability == pytest.approx(
                ((humans.said == "human").mean() + (machines.said == "machine").mean()) / 2
            )
        else:
            assert np.isnan(row.detectability)
    overall = rows["all", "all"]
    assert overall.trials == len(frame)
    assert {k for k, _ in rows} == {"all", "HH", "HM", "MH", "MM"}


def test_a_skilled_judge_pool_is_detected_and_a_guessing_one_is_not(
    study: tuple[SingleTask, SingleKey],
) -> None:
    task, key = study
    skilled = score_single(fabricate(task, key, skill=0.95, topic_skill=1, seed=3), key, reps=300)
    guessing = score_single(fabricate(task, key, skill=0.5, topic_skill=1, seed=3), key, reps=300)
    top = next(r for r in skilled.rows if r.klass == "all" and r.cut == "all")
    assert top.detectability > 0.85
    low, high = top.detectability_interval
    assert low <= top.detectability <= high
    tests = {name: result for _, name, result, _ in skilled.tests}
    assert tests["p(H|H) vs 0.5 (Wilcoxon, per judge)"].p < 0.01
    assert tests["p(H|H) vs 0.5 (Wilcoxon, per judge)"].z > 0
    guess = next(r for r in guessing.rows if r.klass == "all" and r.cut == "all")
    assert guess.detectability_interval[0] < 0.5 + 0.1
    corrected = [p for _, name, _, p in skilled.tests if "permutation" in name]
    assert len(corrected) == 3 and all(p is not None for p in corrected)


def test_inattentive_judges_and_wrong_topic_trials_are_left_out(
    study: tuple[SingleTask, SingleKey],
) -> None:
    task, key = study
    careful = fabricate(task, key, skill=0.8, topic_skill=1.0, seed=4)
    careless = [a.model_copy(update={"judge_id": "careless", "topic": None}) for a in careful[:8]]
    slip = careful[0].model_copy(update={"judge_id": "slip"})
    slips = [slip] + [a.model_copy(update={"judge_id": "slip"}) for a in careful[1:8]]
    wrong_item = next(a for a in slips if key.entry(a.item).topic and not key.entry(a.item).catch)
    slips = [a.model_copy(update={"topic": "t9"}) if a is wrong_item else a for a in slips]
    trials, catch, attention = trials_of([*careful, *careless, *slips], key)
    assert "careless" in attention.judges_out and "slip" not in attention.judges_out
    assert attention.wrong_topic_trials == 1
    assert not any(t.judge == "careless" for t in trials)
    assert not any(t.judge == "slip" and t.item == wrong_item.item for t in trials)
    # Catch items are scored apart: their one obvious machine each.
    catch_answers = [a for a in [*careful, *slips] if key.entry(a.item).catch]
    assert len(catch) == len(catch_answers) and all(t.truth == "machine" for t in catch)


def test_llm_judges_are_scored_apart_and_not_asked_the_topic(
    study: tuple[SingleTask, SingleKey],
) -> None:
    task, key = study
    people = fabricate(task, key, skill=0.6, topic_skill=1, seed=5)
    llm = [
        SingleAnswer(
            task=task.id,
            judge_id="llm:mock/x:zero-shot",
            judge_type="llm",
            judge_model="mock/x",
            judge_kind="zero-shot",
            item=item.id,
            verdicts={j.key: "machine" for j in item.judged},
        )
        for item in task.items
    ]
    scores = score_single([*people, *llm], key, reps=100)
    groups = {r.group for r in scores.rows}
    assert groups == {"human", "llm mock/x zero-shot"}
    machine_only = next(
        r for r in scores.rows if r.group != "human" and r.klass == "all" and r.cut == "all"
    )
    assert (
        machine_only.p_hh == 0.0 and machine_only.p_mm == 1.0 and machine_only.detectability == 0.5
    )
    assert not scores.attention.judges_out


def test_judge_bootstrap_agrees_with_scipy_bootstrap(study: tuple[SingleTask, SingleKey]) -> None:
    task, key = study
    trials, _, _ = trials_of(fabricate(task, key, skill=0.7, topic_skill=1, seed=6), key)
    judges = sorted({t.judge for t in trials})
    ours = judge_bootstrap(trials, reps=4000, seed=1)

    # Per judge: humans called human, humans, machines called machine, machines.
    counts = np.array(
        [
            [
                sum(t.truth == t.said == "human" for t in trials if t.judge == judge),
                sum(t.truth == "human" for t in trials if t.judge == judge),
                sum(t.truth == t.said == "machine" for t in trials if t.judge == judge),
                sum(t.truth == "machine" for t in trials if t.judge == judge),
            ]
            for judge in judges
        ]
    )

    def detectability(indices: np.ndarray) -> float:
        total = counts[indices.astype(int)].sum(axis=0)
        return float((total[0] / total[1] + total[2] / total[3]) / 2)

    theirs = stats.bootstrap(
        (np.arange(len(judges)),), detectability, vectorized=False, n_resamples=1000,
        method="percentile", rng=np.random.default_rng(2),
    ).confidence_interval  # fmt: skip
    assert ours[0] == pytest.approx(theirs.low, abs=0.03)
    assert ours[1] == pytest.approx(theirs.high, abs=0.03)
