"""Their judges' trials scored against the class labels: per speaker, p(H|H), p(M|M) and
detectability, for every class of conversation (HH, HAI, AIH, AIAI) and overall.

Each trial judges two speakers, so it adds two verdicts: the class the judge chose says
what they took speaker A and speaker B for, the label says what each was. The label is
the trial's own ``trueLabel`` when their task recorded one, else the class labels given.
Catch trials (``isCatch``) are left out of every class and tallied apart, as their
papers report them (Table S3: p(M|M) on the catch trials). Detectability is their
``(p(H|H) + p(M|M)) / 2`` over speakers. This is the minimal tally their papers report;
sdtt's single-item scoring adds intervals and tests.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from sdtt.analysis.metrics import Confusion
from sdtt.errors import InputError
from sdtt.single.tally import add_verdict
from sdtt.single.theirdata.pages import CLASSES
from sdtt.single.theirdata.psiturk import KreimanTrial


@dataclass
class TrialScores:
    """Per class of conversation (and ``all``), the speakers' confusion counts."""

    by_class: dict[str, Confusion] = field(default_factory=dict)
    unlabelled: int = 0
    """Trials whose conversation has no label (left out)."""
    by_judge: dict[str, Confusion] = field(default_factory=dict)
    """Each judge's speakers over every class (catch trials left out)."""
    catch: Confusion = field(default_factory=Confusion)
    """The speakers of the catch trials (never in ``by_class`` or ``by_judge``)."""
    catch_trials: int = 0

    def judge_mean(self) -> tuple[float, float, int]:
        """Mean and standard deviation of the judges' own detectabilities, and how many
        judges had both a human and a machine speaker to score (the others are left out)."""
        values = [d for d in (c.detectability for c in self.by_judge.values()) if d == d]
        if not values:
            return math.nan, math.nan, 0
        mean = sum(values) / len(values)
        spread = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
        return mean, spread, len(values)


def label_of(conversation: str, labels: Mapping[str, str]) -> str | None:
    """The class of a conversation cut (``conv22_len18``), by its name or by ``conv22``."""
    return labels.get(conversation) or labels.get(conversation.split("_len", 1)[0])


def labels_from_trials(trials: Iterable[KreimanTrial], *, source: str = "") -> dict[str, str]:
    """The class of every conversation (``conv22``) the trials recorded a ``trueLabel``
    for: a later run of the same conversations labels an earlier run's (their first
    collection recorded none). Catch trials are left out (their numbers are their own);
    a conversation given two classes is an :class:`InputError` naming both."""
    labels: dict[str, str] = {}
    for trial in trials:
        if trial.true_label is None or trial.is_catch:
            continue
        name = trial.conversation.split("_len", 1)[0]
        known = labels.setdefault(name, trial.true_label)
        if known != trial.true_label:
            raise InputError(
                f"{name} is labelled {known} and {trial.true_label} by different trials, "
                "so its class is not known.",
                path=source or None,
                field="trueLabel",
                hint="Give the conversations' classes with --labels.",
            )
    return labels


def judged_human(tally: Confusion) -> float:
    """The share of speakers the judges took for human, whatever they were."""
    total = tally.hh + tally.mh + tally.hm + tally.mm
    return (tally.hh + tally.hm) / total if total else math.nan


def score_trials(
    trials: Iterable[KreimanTrial], labels: Mapping[str, str] | None = None
) -> TrialScores:
    """Tally every trial's two speaker verdicts against its label."""
    scores = TrialScores()
    for trial in trials:
        label = trial.true_label or label_of(trial.conversation, labels or {})
        if label is None:
            scores.unlabelled += 1
            continue
        if trial.is_catch:
            scores.catch_trials += 1
            tallies = [scores.catch]
        else:
            tallies = [scores.by_class.setdefault(name, Confusion()) for name in (label, "all")]
            tallies.append(scores.by_judge.setdefault(trial.worker, Confusion()))
        for tally in tallies:
            for said, truth in zip((trial.said_a, trial.said_b), CLASSES[label], strict=True):
                add_verdict(tally, said, truth)
    return scores
