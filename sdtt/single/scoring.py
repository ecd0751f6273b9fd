"""Scoring a single-item study per class (HH, HM, MH, MM) and per cut, as the papers do.

Every answer becomes one trial per scored speaker: the truth (human or machine) and what
the judge said. Attention as theirs: a judge who picked the right topic for fewer than
``min_topic_share`` of the items with a topic check (15 of 20 in the papers) is left
out, and so is every trial whose topic the judge got wrong (LLM judges are not asked the
topic). Catch items are scored apart (their obvious machine should be called a machine)
and never enter the main figures.

For each group of trials: p(H|H) and p(M|M) with Wilson intervals, imitation
detectability ``(p(H|H) + p(M|M)) / 2`` (NaN when the group has only humans or only
machines) with a percentile bootstrap interval over judges (over items for a single LLM
judge, whose tests below are over items too), and the papers' tests: a
one-sample Wilcoxon signed-rank test of per-judge p(H|H) and p(M|M) against 0.5, a
Mann-Whitney U test of how often HH and MM chats are called human (per judge), and
permutation tests of accuracy between every two cuts with Bonferroni correction.
Human and LLM judges are scored apart, never pooled.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from sdtt.analysis.metrics import Confusion
from sdtt.analysis.stats import percentile_interval, wilson
from sdtt.seeds import seeded_generator
from sdtt.single.build import SingleKey
from sdtt.single.significance import (
    Significance,
    bonferroni,
    mann_whitney,
    permutation_test,
    wilcoxon_one_sample,
)
from sdtt.single.tally import add_verdict
from sdtt.tasks.single_task import SingleAnswer

NAN = float("nan")
MIN_TOPIC_SHARE = 0.75
"""The papers kept judges with at least 15 of 20 topics right."""
CLASSES = ("HH", "HM", "MH", "MM")
ALL = "all"


@dataclass(frozen=True)
class Trial:
    """One verdict on one speaker, with its truth."""

    judge: str
    group: str
    item: str
    source: str
    klass: str
    cut: int | None
    speaker: str
    truth: str
    said: str

    @property
    def correct(self) -> bool:
        """Whether the verdict is the truth."""
        return self.truth == self.said


@dataclass
class Row:
    """The figures of one group of trials."""

    group: str
    klass: str
    cut: str
    trials: int
    judges: int
    p_hh: float
    p_hh_interval: tuple[float, float]
    p_mm: float
    p_mm_interval: tuple[float, float]
    detectability: float
    detectability_interval: tuple[float, float]


@dataclass
class Attention:
    """What the attention checks removed, and how the catch items were answered."""

    judges_out: dict[str, float] = field(default_factory=dict)
    """Judges left out, with their share of topics right."""
    wrong_topic_trials: int = 0
    unanswered: int = 0
    excluded_answers: int = 0
    catch: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Per judge group: catch items' obvious machines called a machine, and all of them."""


@dataclass
class Scores:
    """Every row and test of a scored study."""

    rows: list[Row]
    tests: list[tuple[str, str, Significance, float | None]]
    """(judge group, what was tested, result, Bonferroni-corrected p or None)."""
    attention: Attention


def judge_group(answer: SingleAnswer) -> str:
    """Human judges form one group; each LLM judge (model and prompt kind) its own."""
    if answer.judge_type == "human":
        return "human"
    return f"llm {answer.judge_model} {answer.judge_kind or ''}".rstrip()


def trials_of(
    answers: Iterable[SingleAnswer], key: SingleKey, *, min_topic_share: float = MIN_TOPIC_SHARE
) -> tuple[list[Trial], list[Trial], Attention]:
    """The usable trials, the catch trials and what attention removed."""
    attention = Attention()
    answers = list(answers)
    topic_right: dict[str, list[bool]] = defaultdict(list)
    for answer in answers:
        entry = key.entry(answer.item)
        # LLM judges are not asked the topic: the check is for people.
        checked = answer.judge_type == "human" and entry.catch is None
        if entry.topic is not None and checked and answer.exclusion_reason is None:
            topic_right[answer.judge_id].append(answer.topic == entry.topic)
    for judge, marks in topic_right.items():
        share = sum(marks) / len(marks)
        if share < min_topic_share:
            attention.judges_out[judge] = share
    trials: list[Trial] = []
    catch: list[Trial] = []
    for answer in answers:
        if answer.exclusion_reason is not None:
            attention.excluded_answers += 1
            continue
        if answer.judge_id in attention.judges_out:
            continue
        entry = key.entry(answer.item)
        human = answer.judge_type == "human"
        if (
            human
            and entry.catch is None
            and entry.topic is not None
            and answer.topic != entry.topic
        ):
            attention.wrong_topic_trials += 1
            continue
        for speaker, truth in entry.truth.items():
            said = answer.verdicts.get(speaker)
            if said is None:
                attention.unanswered += 1
                continue
            trial = Trial(
                judge=answer.judge_id,
                group=judge_group(answer),
                item=entry.id,
                source=entry.source,
                klass=entry.klass,
                cut=entry.cut,
                speaker=speaker,
                truth=truth,
                said=said,
            )
            (catch if entry.catch else trials).append(trial)
    for group in sorted({trial.group for trial in catch}):
        mine = [trial for trial in catch if trial.group == group]
        attention.catch[group] = (sum(t.said == "machine" for t in mine), len(mine))
    return trials, catch, attention


def confusion_of(trials: Iterable[Trial]) -> Confusion:
    """Verdict counts by truth."""
    counts = Confusion()
    for trial in trials:
        add_verdict(counts, trial.said, trial.truth)
    return counts


def judge_bootstrap(
    trials: Sequence[Trial], *, reps: int = 2000, seed: int = 0, confidence: float = 0.95
) -> tuple[float, float]:
    """Percentile interval of detectability over judges drawn with replacement (a judge's
    trials go together, as they are not independent); over items when one judge (an
    LLM) made every trial."""
    by_judge: dict[str, list[Trial]] = defaultdict(list)
    single = len({trial.judge for trial in trials}) == 1
    for trial in trials:
        by_judge[trial.item if single else trial.judge].append(trial)
    judges = sorted(by_judge)
    if not judges or reps <= 0:
        return NAN, NAN
    # Per judge: [H said of humans, humans, M said of machines, machines].
    counts = np.array(
        [
            [
                sum(1 for t in by_judge[j] if t.truth == "human" and t.said == "human"),
                sum(1 for t in by_judge[j] if t.truth == "human"),
                sum(1 for t in by_judge[j] if t.truth == "machine" and t.said == "machine"),
                sum(1 for t in by_judge[j] if t.truth == "machine"),
            ]
            for j in judges
        ],
        dtype=float,
    )
    rng = seeded_generator(seed)
    draws = rng.integers(0, len(judges), size=(reps, len(judges)))
    totals = counts[draws].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        values = (totals[:, 0] / totals[:, 1] + totals[:, 2] / totals[:, 3]) / 2
    return percentile_interval(values, confidence)


def _row(group: str, klass: str, cut: str, trials: Sequence[Trial], reps: int, seed: int) -> Row:
    counts = confusion_of(trials)
    humans = counts.hh + counts.mh
    machines = counts.hm + counts.mm
    detect = counts.detectability
    interval = (
        judge_bootstrap(trials, reps=reps, seed=seed) if not math.isnan(detect) else (NAN, NAN)
    )
    return Row(
        group=group,
        klass=klass,
        cut=cut,
        trials=len(trials),
        judges=len({t.judge for t in trials}),
        p_hh=counts.rate("H", "H"),
        p_hh_interval=wilson(counts.hh, humans),
        p_mm=counts.rate("M", "M"),
        p_mm_interval=wilson(counts.mm, machines),
        detectability=detect,
        detectability_interval=interval,
    )


def per_unit_share(trials: Iterable[Trial], said: str, unit: Callable[[Trial], str]) -> list[float]:
    """Each unit's (judge's, or item's) share of verdicts ``said`` over ``trials``."""
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for trial in trials:
        tally[unit(trial)][0] += trial.said == said
        tally[unit(trial)][1] += 1
    return [hits / total for hits, total in tally.values()]


def _cut_label(cut: int | None) -> str:
    return "-" if cut is None else str(cut)


def score_single(
    answers: Iterable[SingleAnswer],
    key: SingleKey,
    *,
    min_topic_share: float = MIN_TOPIC_SHARE,
    reps: int = 2000,
    seed: int = 0,
) -> Scores:
    """Rows per judge group x class x cut (with ``all`` rows pooled over classes and over
    cuts), and the tests."""
    trials, _, attention = trials_of(answers, key, min_topic_share=min_topic_share)
    rows: list[Row] = []
    tests: list[tuple[str, str, Significance, float | None]] = []
    groups = sorted({t.group for t in trials}, key=lambda g: (g != "human", g))
    for group in groups:
        mine = [t for t in trials if t.group == group]
        klasses = [k for k in CLASSES if any(t.klass == k for t in mine)]
        klasses += sorted({t.klass for t in mine} - set(klasses))
        cuts = sorted({t.cut for t in mine}, key=lambda c: (c is None, c or 0))
        rows.append(_row(group, ALL, ALL, mine, reps, seed))
        for klass in klasses:
            of_class = [t for t in mine if t.klass == klass]
            rows.append(_row(group, klass, ALL, of_class, reps, seed))
            # Items without cuts (a cue and association, a caption): the class row says it all.
            for cut in [] if cuts == [None] else cuts:
                cell = [t for t in of_class if t.cut == cut]
                if cell:
                    rows.append(_row(group, klass, _cut_label(cut), cell, reps, seed))
        if len(cuts) > 1:
            for cut in cuts:
                cell = [t for t in mine if t.cut == cut]
                rows.append(_row(group, ALL, _cut_label(cut), cell, reps, seed))
        # The papers' tests, over judges; a group of one judge (an LLM) over its items.
        several = len({t.judge for t in mine}) > 1
        unit = (lambda t: t.judge) if several else (lambda t: t.item)
        per = "per judge" if several else "per item"
        for truth, name in (("human", "p(H|H)"), ("machine", "p(M|M)")):
            rates = per_unit_share([t for t in mine if t.truth == truth], truth, unit)
            if rates:
                tests.append(
                    (group, f"{name} vs 0.5 (Wilcoxon, {per})", wilcoxon_one_sample(rates), None)
                )
        called_human = {
            klass: per_unit_share([t for t in mine if t.klass == klass], "human", unit)
            for klass in ("HH", "MM")
        }
        if called_human["HH"] and called_human["MM"]:
            tests.append(
                (
                    group,
                    f"called human: HH vs MM (Mann-Whitney, {per})",
                    mann_whitney(called_human["HH"], called_human["MM"]),
                    None,
                )
            )
        comparisons = []
        for index, first in enumerate(cuts):
            for second in cuts[index + 1 :]:
                x = [float(t.correct) for t in mine if t.cut == first]
                y = [float(t.correct) for t in mine if t.cut == second]
                comparisons.append(
                    (
                        f"accuracy cut {_cut_label(first)} vs {_cut_label(second)} (permutation)",
                        permutation_test(x, y, seed=seed),
                    )
                )
        corrected = bonferroni([result.p for _, result in comparisons])
        tests += [
            (group, name, result, p)
            for (name, result), p in zip(comparisons, corrected, strict=True)
        ]
    return Scores(rows=rows, tests=tests, attention=attention)
