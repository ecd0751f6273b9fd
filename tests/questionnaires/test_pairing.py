from __future__ import annotations

import random
from pathlib import Path

import pytest

from sdtt.dialogue.store import write_transcripts
from sdtt.errors import InputError
from sdtt.questionnaires.pairing import (
    CorpusPool,
    FilePool,
    Pairing,
    check_length,
    cut_last_turns,
    load_source,
    match_pairs,
    parse_source,
    same_topic,
)
from tests.questionnaires.helpers import FakeCorpus, bots, conversation, humans


def test_cut_keeps_the_last_x_complete_turns() -> None:
    talk = conversation("c", "t", 5, tag="x")
    cut = cut_last_turns(talk.messages, 2)
    assert cut is not None
    assert [m.text for m in cut] == ["x asks 3", "x replies 3", "x asks 4", "x replies 4"]
    # Turn 1 is a burst (two replies): it stays whole.
    cut = cut_last_turns(talk.messages, 4)
    assert cut is not None and [m.text for m in cut][:4] == [
        "x asks 1",
        "x replies 1",
        "x adds 1",
        "x asks 2",
    ]


def test_a_trailing_unanswered_message_is_left_out() -> None:
    talk = conversation("c", "t", 3, tag="x", trailing_user=True)
    cut = cut_last_turns(talk.messages, 1)
    assert cut is not None
    assert [m.text for m in cut] == ["x asks 2", "x replies 2"]
    assert cut_last_turns(talk.messages, 4) is None


def test_topics_match_ignoring_case_spacing_and_final_punctuation() -> None:
    assert same_topic("What's your  favorite smell?", "what's your favorite smell")
    assert not same_topic("Mozart or Beethoven?", "Cats or dogs?")
    assert not same_topic(None, None)


def test_too_short_conversations_are_reported_per_x() -> None:
    pairing = Pairing(
        conversation("b", "t", 4, tag="b"), None, conversation("h", "t", 12, tag="h"), None
    )
    assert check_length(pairing, 3) is None
    problem = check_length(pairing, 10)
    assert problem is not None and problem.kind == "short" and problem.x_turns == 10
    assert "'b' has 4 complete turns, fewer than 10" in problem.message


def test_mismatched_topics_of_an_explicit_pair_are_reported(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    write_transcripts(path, humans())
    ref = parse_source(f"{path}#human-conv-2")
    pairings, problems = match_pairs(
        [(bots()[0], None)], ref, pool=FilePool([]), min_turns=3, rng=random.Random(1)
    )
    assert problems == []
    assert [p.kind for p in pairings[0].problems] == ["topic"]
    assert "is about" in pairings[0].problems[0].message


def test_each_human_conversation_is_used_once_and_shortage_is_reported() -> None:
    twins = [bots()[0], bots()[0].model_copy(update={"id": "bot-conv-1b"})]
    pool = FilePool(humans())
    pairings, problems = match_pairs(
        [(b, None) for b in twins],
        parse_source("humans.jsonl"),
        pool=pool,
        min_turns=3,
        rng=random.Random(1),
    )
    assert [p.human.id for p in pairings] == ["human-conv-1"]
    assert len(problems) == 1 and problems[0].kind == "unmatched"
    assert "bot-conv-1b" in problems[0].message


def test_topic_mismatch_allowed_picks_another_topic_and_says_so() -> None:
    bot = conversation("b", "Something nobody talked about", 5, tag="b")
    pairings, problems = match_pairs(
        [(bot, None)],
        parse_source("corpus"),
        pool=FilePool(humans()),
        min_turns=3,
        rng=random.Random(1),
        allow_topic_mismatch=True,
    )
    assert problems == []
    assert pairings[0].problems[0].kind == "topic"


def test_a_bot_conversation_without_topic_cannot_be_matched_by_topic() -> None:
    bot = conversation("b", None, 5, tag="b")
    _, problems = match_pairs(
        [(bot, None)],
        parse_source("corpus"),
        pool=FilePool(humans()),
        min_turns=3,
        rng=random.Random(1),
    )
    assert problems[0].kind == "unmatched" and "has no topic" in problems[0].message


def test_corpus_never_gives_the_persona_its_own_conversation() -> None:
    own = conversation("own", "Mozart or Beethoven?", 6, tag="o")
    other = conversation("other", "Mozart or Beethoven?", 6, tag="p")
    corpus = FakeCorpus([own, other], {"own": "5e1f9a7b-aaaa", "other": "77777777-bbbb"})
    bot = conversation(
        "b", "Mozart or Beethoven?", 6, tag="b", meta={"persona": "chitchat-5e1f9a7b"}
    )
    for seed in range(5):
        pairings, _ = match_pairs(
            [(bot, None)],
            parse_source("corpus"),
            pool=CorpusPool(lambda: corpus),
            min_turns=3,
            rng=random.Random(seed),
        )
        assert pairings[0].human.id == "other"


def test_source_references(tmp_path: Path) -> None:
    path = tmp_path / "b.jsonl"
    write_transcripts(path, bots())
    assert parse_source("Corpus").is_corpus
    assert [t.id for t in load_source(parse_source(str(path)))] == ["bot-conv-1", "bot-conv-2"]
    assert [t.id for t in load_source(parse_source(f"{path}#bot-conv-2"))] == ["bot-conv-2"]
    relative = parse_source("b.jsonl#bot-conv-1", base=tmp_path)
    assert relative.path == path and relative.conversation == "bot-conv-1"
    with pytest.raises(InputError, match=r"has no conversation 'nope'.*bot-conv-1"):
        load_source(parse_source(f"{path}#nope"))
