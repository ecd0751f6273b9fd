from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from sdtt.errors import InputError
from sdtt.personas.corpus import Corpus, load_corpus, mountain_time
from tests.personas.synthetic import chat, raw_conversation

A, B, C = "aaaaaaaa-1111", "bbbbbbbb-2222", "cccccccc-3333"


def corpus_of(**conversations: dict[str, object]) -> Corpus:
    return Corpus.from_raw(conversations)


def test_single_and_many_speaker_conversations_are_dropped() -> None:
    corpus = corpus_of(
        solo=raw_conversation([(A, "hello?"), (A, "anyone?")]),
        trio=raw_conversation([(A, "hi"), (B, "hey"), (C, "yo")]),
        duo=raw_conversation([(A, "hi"), (B, "hey")]),
    )
    assert [t.id for t in corpus.conversations()] == ["duo"]
    assert corpus.report.dropped == {"single_speaker": 1, "many_speakers": 1}
    assert (corpus.report.conversations, corpus.report.kept) == (3, 1)


def test_empty_messages_are_removed_and_an_empty_conversation_dropped() -> None:
    corpus = corpus_of(
        c1=raw_conversation([(A, "hi"), (A, "   "), (B, ""), (B, "hey")]),
        c2=raw_conversation([(A, " "), (B, "")]),
    )
    (transcript,) = corpus.conversations()
    assert [m.text for m in transcript.messages] == ["hi", "hey"]
    assert corpus.report.empty_messages == 4
    assert corpus.report.dropped == {"no_messages": 1}


def burst(sender: str, count: int, tag: str) -> list[tuple[str, str]]:
    return [(sender, f"{tag} line {index}") for index in range(count)]


def test_a_burst_of_more_than_100_messages_is_spam_but_100_is_not() -> None:
    corpus = corpus_of(
        ok=raw_conversation([(A, "tell me"), *burst(B, 100, "story"), (A, "wow")]),
        spam=raw_conversation([(A, "tell me"), *burst(B, 101, "story"), (A, "wow")]),
    )
    assert [t.id for t in corpus.conversations()] == ["ok"]
    assert corpus.report.dropped == {"long_burst": 1}


def test_twenty_messages_sent_faster_than_one_a_second_are_a_flood() -> None:
    flood = raw_conversation([(A, "hi"), *burst(B, 20, "x"), (A, "?")], gap=0.9)
    human = raw_conversation([(A, "hi"), *burst(B, 20, "x"), (A, "?")], gap=1.0)
    short = raw_conversation([(A, "hi"), *burst(B, 19, "x"), (A, "?")], gap=0.0)
    corpus = corpus_of(flood=flood, human=human, short=short)
    assert sorted(t.id for t in corpus.conversations()) == ["human", "short"]
    assert corpus.report.dropped == {"flood": 1}


def test_mostly_repeated_messages_are_spam() -> None:
    # 30 messages; "k" repeated: 10 repeats > 30 % of 30 -> spam; 9 repeats -> kept.
    def with_repeats(repeats: int) -> dict[str, object]:
        distinct = [
            (A, f"unique {i}") if i % 2 else (B, f"unique {i}") for i in range(29 - repeats)
        ]
        mash = [(B, "K" if i % 2 else " k ") for i in range(repeats + 1)]
        return raw_conversation(distinct + mash)

    corpus = corpus_of(spam=with_repeats(10), fine=with_repeats(9))
    assert [t.id for t in corpus.conversations()] == ["fine"]
    assert corpus.report.dropped == {"repetition": 1}


def test_times_become_mountain_time_with_an_offset() -> None:
    corpus = corpus_of(c=raw_conversation([(A, "hi"), (B, "hey")]))
    first = corpus.conversations()[0].messages[0].time
    assert first.isoformat() == "2018-05-02T13:00:00-06:00"
    # The end of daylight saving time, 4 November 2018 at 08:00 UTC.
    before = datetime(2018, 11, 4, 7, 59, 59, tzinfo=UTC)
    assert mountain_time(before).isoformat() == "2018-11-04T01:59:59-06:00"
    assert mountain_time(before + timedelta(seconds=1)).isoformat() == "2018-11-04T01:00:00-07:00"


def test_mountain_time_agrees_with_the_time_zone_database() -> None:
    zoneinfo = pytest.importorskip("zoneinfo")
    try:
        denver = zoneinfo.ZoneInfo("America/Denver")
    except zoneinfo.ZoneInfoNotFoundError:
        pytest.skip("no time zone database on this machine")
    moment = datetime(2018, 1, 1, tzinfo=UTC)
    while moment.year == 2018:
        assert mountain_time(moment).utcoffset() == moment.astimezone(denver).utcoffset()
        moment += timedelta(minutes=30)


def test_first_writer_is_side_user_unless_a_persona_sender_is_given() -> None:
    corpus = corpus_of(c=raw_conversation([(A, "hi"), (B, "hey"), (B, "sup")]))
    (plain,) = corpus.conversations()
    assert [m.side for m in plain.messages] == ["user", "response", "response"]
    assert plain.meta["senders"] == {"user": A, "response": B}
    assert plain.meta["conversation_id"] == "c"
    (as_a,) = corpus.conversations(persona_sender=A)
    assert [m.side for m in as_a.messages] == ["response", "user", "user"]


def test_topic_filter_min_turns_and_exclusions() -> None:
    corpus = corpus_of(
        short=raw_conversation(chat(A, B, 2), prompt="Mozart or Beethoven?"),
        long=raw_conversation(chat(C, B, 5), prompt="  mozart   or beethoven?", start=100),
        other=raw_conversation(chat(A, C, 5), prompt="What if pigs could fly?", start=200),
        none=raw_conversation(chat(A, C, 5), prompt="", start=300),
    )
    assert [t.id for t in corpus.conversations("MOZART OR BEETHOVEN?")] == ["short", "long"]
    assert [t.id for t in corpus.conversations("Mozart or Beethoven?", min_turns=3)] == ["long"]
    assert [t.id for t in corpus.conversations(exclude_senders=[B])] == ["other", "none"]
    assert corpus.conversations(exclude_senders=[B])[1].topic is None
    assert corpus.topics() == ["Mozart or Beethoven?", "What if pigs could fly?"]


def test_senders_count_messages_of_clean_conversations_only() -> None:
    corpus = corpus_of(
        c1=raw_conversation(chat(A, B, 3)),
        c2=raw_conversation(chat(C, B, 1), start=100),
        solo=raw_conversation([(C, f"alone {i}") for i in range(50)], start=200),
    )
    assert corpus.senders() == [(B, 8), (A, 3), (C, 1)]
    assert corpus.senders(min_messages=3) == [(B, 8), (A, 3)]


def test_persona_keeps_the_most_recent_whole_conversations() -> None:
    corpus = corpus_of(
        old=raw_conversation(chat(A, B, 4), start=0),
        mid=raw_conversation(chat(C, B, 3), start=1000),
        new=raw_conversation(chat(A, B, 2), start=2000),
    )
    everything = corpus.persona("bbbbbbbb")
    assert everything.name == "chitchat-bbbbbbbb"
    assert [c.id for c in everything.conversations] == ["old", "mid", "new"]
    assert {m.side for c in everything.conversations for m in c.messages if "answer" in m.text} == {
        "response"
    }
    # 2 turns in "new" are not enough for 4; adding "mid" (3 turns) is.
    recent = corpus.persona(B, history_turns=4)
    assert [c.id for c in recent.conversations] == ["mid", "new"]
    assert recent.info.license == "MIT"
    assert "github.com/BYU-PCCL/chitchat-dataset" in recent.info.attribution
    assert recent.info.extra["sender"] == B


def test_unknown_or_ambiguous_sender_is_an_input_error() -> None:
    corpus = corpus_of(c=raw_conversation([("ab-1", "hi"), ("ab-2", "hey")]))
    with pytest.raises(InputError, match="'zz' matches no sender"):
        corpus.persona("zz")
    with pytest.raises(InputError, match="'ab' matches 2 senders"):
        corpus.persona("ab")


def test_a_malformed_raw_corpus_names_the_conversation_and_field() -> None:
    raw = raw_conversation([(A, "hi"), (B, "hey")])
    del raw["messages"][1][0]["timestamp"]
    with pytest.raises(InputError, match=r"field 'c7\.messages\[1\]\[0\]\.timestamp'"):
        Corpus.from_raw({"c7": raw})
    raw = raw_conversation([(A, "hi"), (B, "hey")])
    raw["messages"][0][0]["timestamp"] = "yesterday"
    with pytest.raises(InputError, match="'yesterday' is not an ISO 8601 time"):
        Corpus.from_raw({"c7": raw})


def test_load_corpus_reads_a_file_once_and_reports_bad_json(tmp_path: Path) -> None:
    good = tmp_path / "small.json"
    good.write_text(json.dumps({"c": raw_conversation([(A, "hi"), (B, "hey")])}))
    first = load_corpus(good)
    assert load_corpus(good) is first
    assert len(first) == 1
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(InputError, match=r"bad\.json: cannot read the corpus"):
        load_corpus(bad)


def test_the_real_corpus_cleans_to_4003_conversations_on_34_topics() -> None:
    corpus = load_corpus()
    assert len(corpus) == 4003
    assert corpus.report.dropped["single_speaker"] == 3151
    listed = Path(__file__).parents[2].joinpath("topics", "chitchat.txt").read_text()
    assert corpus.topics() == listed.splitlines()
    assert len(corpus.senders(min_messages=300)) >= 100
    mozart = corpus.conversations("Mozart or Beethoven?", min_turns=10)
    assert len(mozart) > 40
    assert all(len({m.side for m in t.messages}) == 2 for t in mozart)
