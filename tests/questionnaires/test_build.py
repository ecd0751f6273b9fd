from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from sdtt.dialogue.store import write_transcripts
from sdtt.errors import InputError
from sdtt.questionnaires.build import build_questionnaire
from sdtt.questionnaires.pairing import Pairing, PairProblem
from sdtt.questionnaires.pipeline import build_study
from sdtt.tasks.questionnaire import (
    load_key,
    load_questionnaire,
    questionnaire_json,
    save_study,
)
from sdtt.tasks.study import PairSpec, StudySpec
from tests.questionnaires.helpers import (
    SECRET_WORDS,
    FakeCorpus,
    bots,
    conversation,
    fixture_study,
    humans,
    pairings,
)


def test_questionnaire_holds_nothing_secret() -> None:
    text = questionnaire_json(fixture_study().questionnaire)
    for word in SECRET_WORDS:
        assert word.lower() not in text.lower()
    for field in ("bot_position", "correct_choice", "topic_value", "bot-conv"):
        assert field not in text


def test_key_tells_where_the_bot_is_and_matches_the_chats() -> None:
    study = fixture_study()
    for item in study.questionnaire.items:
        truth = study.key.items[item.id]
        bot_chat = item.chats[truth.bot_position - 1]
        if truth.kind == "test":
            # The bot conversations' messages are tagged b0/b1, the humans' h0/h1.
            assert all(line.text.startswith("b") for line in bot_chat)
            assert all(line.text.startswith("h") for line in item.chats[2 - truth.bot_position])
        assert truth.correct_choice == ("A" if truth.bot_position == 1 else "B")


def test_lines_are_numbered_across_both_chats_and_b_is_marked() -> None:
    item = fixture_study().questionnaire.items[1]
    numbers = [line.number for chat in item.chats for line in chat]
    assert numbers == list(range(1, len(numbers) + 1))
    for chat in item.chats:
        assert [line.speaker for line in chat][:2] == ["A", "B"]


def test_timestamps_are_shown_or_hidden_for_both_chats_alike() -> None:
    for mode, pattern in (("hidden", None), ("time", 8), ("datetime", 19)):
        spec = StudySpec(name="t", seed=1, x_turns=[3], catch_pairs=0, timestamps=mode)
        item = build_questionnaire(spec, pairings()).questionnaire.items[0]
        lengths = {None if line.time is None else len(line.time) for c in item.chats for line in c}
        assert lengths == {pattern}


def test_build_is_deterministic_and_the_seed_matters() -> None:
    first = questionnaire_json(fixture_study().questionnaire)
    assert first == questionnaire_json(fixture_study().questionnaire)
    other = StudySpec(name="fixture", seed=12, x_turns=[3], catch_pairs=1)
    assert questionnaire_json(fixture_study(other).questionnaire) != first


def test_bot_positions_are_balanced() -> None:
    many = [p for p in pairings() for _ in range(3)]
    spec = StudySpec(name="t", seed=5, x_turns=[1, 2, 3], catch_pairs=2)
    key = build_questionnaire(spec, many).key
    positions = Counter(item.bot_position for item in key.items.values())
    assert abs(positions[1] - positions[2]) <= 1
    assert len(key.items) == 6 * 3 + 2


def test_one_pair_per_x_and_catch_pairs_with_their_own_topics() -> None:
    spec = StudySpec(name="t", seed=2, x_turns=[3, 10], catch_pairs=2)
    study = build_questionnaire(spec, pairings())
    kinds = Counter((i.kind, i.x_turns) for i in study.key.items.values())
    assert kinds == {("test", 3): 2, ("test", 10): 2, ("catch", 3): 2}
    for item in study.questionnaire.items:
        truth = study.key.items[item.id]
        assert item.topic is not None
        right = item.topic.choice_for(truth.topic_value or "")
        assert right is not None and right.label == truth.topic
        assert len(item.topic.choices or []) == 4
        turns = sum(1 for line in item.chats[0] if line.speaker == "A")
        assert turns >= truth.x_turns or truth.kind == "catch"


def test_problems_are_reported_not_silently_used() -> None:
    short = Pairing(
        conversation("short-bot", "Mozart or Beethoven?", 2, tag="b"),
        None,
        humans()[1],
        None,
    )
    spec = StudySpec(name="t", seed=1, x_turns=[3], catch_pairs=0)
    with pytest.raises(InputError, match=r"(?s)short-bot' has 2 complete turns.*--skip-invalid"):
        build_questionnaire(spec, [*pairings(), short])
    built = build_questionnaire(spec, [*pairings(), short], skip_invalid=True)
    assert len(built.questionnaire.items) == 2
    assert any("short-bot" in note for note in built.key.problems)
    mismatched = Pairing(bots()[0], None, humans()[1], None)
    mismatched.problems.append(PairProblem("topic", "topics differ"))
    with pytest.raises(InputError, match="--allow-topic-mismatch"):
        build_questionnaire(spec, [mismatched])
    built = build_questionnaire(spec, [mismatched], allow_topic_mismatch=True)
    (truth,) = built.key.items.values()
    assert truth.notes == ["topics differ"]


def test_a_model_name_in_researcher_text_stops_the_build() -> None:
    spec = StudySpec(name="t", seed=1, x_turns=[3], title="Can you spot gpt-4o-2024-08-06?")
    with pytest.raises(InputError, match="title contains 'gpt-4o-2024-08-06'"):
        build_questionnaire(spec, pairings())


def test_a_model_name_in_chat_text_is_a_warning() -> None:
    pairing = pairings()[0]
    said = conversation("bot-conv-1", pairing.bot.topic, 12, tag="b")
    said.condition = pairing.bot.condition
    said.messages[-1] = said.messages[-1].model_copy(update={"text": "i am not gpt-4o-2024-08-06"})
    spec = StudySpec(name="t", seed=1, x_turns=[3], catch_pairs=0)
    built = build_questionnaire(spec, [Pairing(said, None, pairing.human, None)])
    assert any("mentions 'gpt-4o-2024-08-06'" in w for w in built.warnings)


def test_study_files_round_trip_and_key_must_match(tmp_path: Path) -> None:
    study = fixture_study()
    save_study(tmp_path / "s", study.questionnaire, study.key)
    loaded = load_questionnaire(tmp_path / "s")
    assert loaded == study.questionnaire
    key = load_key(tmp_path / "s", loaded)
    assert key.items == study.key.items
    other = fixture_study(StudySpec(name="fixture", seed=99, x_turns=[3]))
    with pytest.raises(InputError, match="belongs to questionnaire"):
        load_key(tmp_path / "s", other.questionnaire)
    raw = json.loads((tmp_path / "s" / "answer-key.json").read_text())
    assert raw["questionnaire_sha256"] != ""


def test_pipeline_pairs_files_and_warns_about_repeated_conversations(tmp_path: Path) -> None:
    write_transcripts(tmp_path / "bots.jsonl", bots())
    write_transcripts(tmp_path / "humans.jsonl", humans())
    spec = StudySpec(
        name="t",
        seed=3,
        x_turns=[3, 10],
        pairs=[PairSpec(bot="bots.jsonl", human="humans.jsonl")],
    )
    built = build_study(spec, base=tmp_path)
    assert len([i for i in built.key.items.values() if i.kind == "test"]) == 4
    assert any("more than once" in warning for warning in built.warnings)


def test_pipeline_uses_the_corpus_topics_for_distractors(tmp_path: Path) -> None:
    write_transcripts(tmp_path / "bots.jsonl", bots()[:1])
    corpus_talk = conversation("real-1", "What's your favorite smell?", 14, tag="r")
    corpus = FakeCorpus([corpus_talk], {"real-1": "abc"})
    spec = StudySpec(
        name="t",
        seed=3,
        x_turns=[3],
        catch_pairs=0,
        topic_options=2,
        pairs=[PairSpec(bot="bots.jsonl", human="corpus")],
    )
    built = build_study(spec, base=tmp_path, corpus_loader=lambda: corpus)
    (truth,) = built.key.items.values()
    assert truth.human.id == "real-1"


def test_without_topic_checks_the_instructions_do_not_announce_them() -> None:
    spec = StudySpec(name="t", seed=1, x_turns=[3], topic_check=False)
    built = build_questionnaire(spec, pairings()).questionnaire
    assert all(item.topic is None for item in built.items)
    assert "what the chats were about" not in built.intro
    assert "what the chats were about" in fixture_study().questionnaire.intro


def test_warning_says_why_conversations_repeat(tmp_path: Path) -> None:
    write_transcripts(tmp_path / "bots.jsonl", bots())
    write_transcripts(tmp_path / "humans.jsonl", humans())
    per_x = StudySpec(
        name="t", x_turns=[3, 10], pairs=[PairSpec(bot="bots.jsonl", human="humans.jsonl")]
    )
    (warning,) = [
        w for w in build_study(per_x, base=tmp_path).warnings if "more than one pair" in w
    ]
    assert "4 conversation(s) appear in more than one pair" in warning
    assert "cut at several X" in warning and "--x" in warning
    assert "paired with several bot" not in warning
    # One human conversation given for both bots: reuse, not "one per X".
    shared = StudySpec(
        name="t",
        x_turns=[3],
        pairs=[PairSpec(bot="bots.jsonl", human="humans.jsonl#human-conv-1")],
    )
    built = build_study(shared, base=tmp_path, allow_topic_mismatch=True)
    (warning,) = [w for w in built.warnings if "more than one pair" in w]
    assert "one per X" not in warning and "--x" not in warning
    assert "'human-conv-1' with 2" in warning
    assert "--pairs-per-judge" in warning
