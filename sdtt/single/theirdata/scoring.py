"""Their judges' trials scored against the class labels: per speaker, p(H|H), p(M|M) and
detectability, for every class of conversation (HH, HAI, AIH, AIAI) and overall.

Each trial judges two speakers, so it adds two verdicts: the class the judge chose says
what they took speaker A and speaker B for, the label says what each was. This is the
minimal tally their papers report; sdtt's single-item scoring adds intervals and tests.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from sdtt.analysis.metrics import Confusion
from sdtt.single.tally import add_verdict
from sdtt.single.theirdata.conversations import CLASSES
from sdtt.single.theirdata.psiturk import KreimanTrial


@dataclass
class TrialScores:
    """Per class of conversation (and ``all``), the speakers' confusion counts."""

    by_class: dict[str, Confusion] = field(default_factory=dict)
    unlabelled: int = 0
    """Trials whose conversation has no label (left out)."""


def label_of(conversation: str, labels: Mapping[str, str]) -> str | None:
    """The class of a conversation cut (``conv22_len18``), by its name or by ``conv22``."""
    return labels.get(conversation) or labels.get(conversation.split("_len", 1)[0])


def score_trials(trials: Iterable[KreimanTrial], labels: Mapping[str, str]) -> TrialScores:
    """Tally every trial's two speaker verdicts against the labels."""
    scores = TrialScores()
    for trial in trials:
        label = label_of(trial.conversation, labels)
        if label is None:
            scores.unlabelled += 1
            continue
        for name in (label, "all"):
            tally = scores.by_class.setdefault(name, Confusion())
            for said, truth in zip((trial.said_a, trial.said_b), CLASSES[label], strict=True):
                add_verdict(tally, said, truth)
    return scores
