"""The SVM judges: grouped folds hold cues (or images) out, and the confusion matrix and
detectability agree with scikit-learn's own computation on the same folds."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score, confusion_matrix
from sklearn.model_selection import cross_val_predict
from sklearn.svm import LinearSVC

from sdtt.errors import InputError
from sdtt.judges.classifier import Examples, grouped_folds
from sdtt.single.response import SingleResponse, response_id
from sdtt.single.svm import association_features, caption_features, char_embed, svm_judge

HUMAN_WORDS = ["butter", "cold", "warm", "friend", "river", "tree", "green", "loud", "soft"]
MACHINE_WORDS = ["serenity", "tranquility", "abundance", "nourishment", "resilience"]


def response(task: str, stimulus: str, text: str, truth: str, agent: str) -> SingleResponse:
    return SingleResponse(
        task=task,  # type: ignore[arg-type]
        id=response_id(task, stimulus, text, agent, truth),
        stimulus=stimulus,
        response=text,
        truth=truth,  # type: ignore[arg-type]
        agent=agent,
        origin="test",
    )


def associations(cues: int = 30) -> list[SingleResponse]:
    rng = np.random.default_rng(4)
    found = []
    for index in range(cues):
        cue = f"cue{chr(97 + index % 26)}{index}"
        for person in range(2):
            found.append(
                response("wordassoc", cue, str(rng.choice(HUMAN_WORDS)), "human", f"p{person}")
            )
        agent = "mock/a" if index % 2 else "mock/b"
        found.append(response("wordassoc", cue, str(rng.choice(MACHINE_WORDS)), "machine", agent))
    return found


def test_association_judge_matches_sklearn_on_the_same_folds() -> None:
    records = associations()
    result = svm_judge(records, folds=5, seed=1)
    truth = np.asarray([int(r.truth == "machine") for r in records])
    said = np.asarray([int(v.said == "machine") for v in result.verdicts])
    # The reference: scikit-learn's cross_val_predict on the same features and folds.
    examples = Examples(
        tuple(r.id for r in records),
        tuple(int(t) for t in truth),
        tuple(f"cue:{r.stimulus}" for r in records),
    )
    splits = grouped_folds(examples, folds=5, seed=1)
    x = association_features(records, char_embed)
    reference = cross_val_predict(LinearSVC(class_weight="balanced"), x, truth, cv=splits)
    assert said.tolist() == reference.tolist()
    (hh, mh), (hm, mm) = confusion_matrix(truth, said, labels=[0, 1])
    c = result.confusion
    assert (c.hh, c.mh, c.hm, c.mm) == (hh, mh, hm, mm)
    assert result.detectability == pytest.approx(balanced_accuracy_score(truth, said))
    # Machine words of another vocabulary are easy to tell apart.
    assert result.detectability > 0.9
    assert result.folds == 5 and result.stimuli == 30


def test_no_cue_is_in_two_folds() -> None:
    records = associations()
    result = svm_judge(records, folds=10)
    fold_of_cue: dict[str, set[int]] = {}
    for record, verdict in zip(records, result.verdicts, strict=True):
        fold_of_cue.setdefault(record.stimulus, set()).add(verdict.fold)
    assert all(len(folds) == 1 for folds in fold_of_cue.values())
    assert len({v.fold for v in result.verdicts}) == 10


def test_per_agent_tallies_pair_each_agent_with_all_human_responses() -> None:
    records = associations()
    result = svm_judge(records, folds=5)
    humans = sum(r.truth == "human" for r in records)
    for agent, tally in result.by_agent.items():
        machines = sum(r.agent == agent for r in records)
        assert (tally.hh + tally.mh, tally.hm + tally.mm) == (humans, machines)


def test_caption_judge_holds_images_out_and_skips_excluded_responses() -> None:
    records = []
    for index in range(12):
        image = f"{index:04d}.jpg"
        records.append(response("caption", image, "a dog runs in the park lol", "human", "w"))
        records.append(
            response("caption", image, "A serene landscape showcases vibrant hues.", "machine", "m")
        )
    excluded = response("caption", "0000.jpg", "", "machine", "m").model_copy(
        update={"exclusion_reason": "empty"}
    )
    result = svm_judge([*records, excluded], folds=4)
    assert len(result.verdicts) == len(records)
    assert result.detectability == 1.0
    x = caption_features(records, char_embed)
    assert x.shape == (24, 4096)


def test_too_few_stimuli_or_mixed_tasks_are_refused() -> None:
    one_cue = [r for r in associations() if r.stimulus == associations()[0].stimulus]
    with pytest.raises(InputError, match="at least two cues each"):
        svm_judge(one_cue)
    mixed = [*associations()[:3], response("caption", "1.jpg", "x", "human", "w")]
    with pytest.raises(InputError, match="one task"):
        svm_judge(mixed)
    with pytest.raises(InputError, match="unknown embedding"):
        svm_judge(associations(), embedding="word2vec")
