"""Nothing but the words tells the chats apart: modes match and real times never show."""

from __future__ import annotations

import itertools
import json
import random
from datetime import datetime
from pathlib import Path

import pytest

from sdtt.cli import main
from sdtt.dialogue.condition import Condition
from sdtt.dialogue.store import write_transcripts
from sdtt.errors import InputError
from sdtt.questionnaires.build import build_questionnaire
from sdtt.questionnaires.comparable import differences
from sdtt.questionnaires.pairing import FilePool, match_pairs, parse_source
from sdtt.questionnaires.pairing_topics import in_pool, live_topic
from sdtt.questionnaires.pipeline import build_study
from sdtt.tasks.questionnaire import Line
from sdtt.tasks.study import PairSpec, StudySpec
from tests.questionnaires.helpers import FakeCorpus, bots, conversation, humans, pairings

PINGPONG = {"mode": "pingpong", "model": "mock/x"}


def pingpong_bots() -> list:
    """Bot conversations recorded in ping-pong mode (no bursts of their own)."""
    return [
        bot.model_copy(
            update={
                "condition": (bot.condition or Condition()).model_copy(update=PINGPONG),
                "messages": [
                    m for m in bot.messages if not m.text.startswith(("b0 adds", "b1 adds"))
                ],
            }
        )
        for bot in bots()
    ]


def runs(lines: list[Line]) -> int:
    return sum(1 for a, b in itertools.pairwise(lines) if a.speaker == b.speaker)


def test_a_pingpong_bot_chat_is_shown_next_to_a_pingpong_human_chat(tmp_path: Path) -> None:
    write_transcripts(tmp_path / "bots.jsonl", pingpong_bots())
    write_transcripts(tmp_path / "humans.jsonl", humans())
    spec = StudySpec(
        name="t",
        seed=3,
        x_turns=[10],
        catch_pairs=0,
        pairs=[PairSpec(bot="bots.jsonl", human="humans.jsonl")],
    )
    built = build_study(spec, base=tmp_path)
    for item in built.questionnaire.items:
        assert [runs(chat) for chat in item.chats] == [0, 0]
    for truth in built.key.items.values():
        assert truth.human.meta["converted_from"] == "burst"
        assert truth.human.meta["pingpong_removed_messages"] == 1
    assert any("2 human conversation(s) converted to ping-pong" in note for note in built.notes)
    # The same humans next to burst bots keep their bursts.
    write_transcripts(tmp_path / "burst.jsonl", bots())
    # (X=11: the window then holds turn 2, where both chats have a burst.)
    burst = build_study(
        spec.model_copy(
            update={"pairs": [PairSpec(bot="burst.jsonl", human="humans.jsonl")], "x_turns": [11]}
        ),
        base=tmp_path,
    )
    assert any(runs(chat) for item in burst.questionnaire.items for chat in item.chats)


def test_a_burst_bot_chat_is_never_paired_with_a_pingpong_human_chat(tmp_path: Path) -> None:
    human = conversation("pp-human", "What's your favorite smell?", 11, tag="h", meta=PINGPONG)
    write_transcripts(tmp_path / "humans.jsonl", [human])
    bot = bots()[0]
    found, _ = match_pairs(
        [(bot, None)],
        parse_source(f"{tmp_path / 'humans.jsonl'}#pp-human"),
        pool=FilePool([]),
        min_turns=3,
        rng=random.Random(0),
    )
    with pytest.raises(
        InputError, match="burst chat but human conversation 'pp-human' is ping-pong"
    ):
        build_questionnaire(StudySpec(name="t", x_turns=[3]), found)
    skipped = build_questionnaire(
        StudySpec(name="t", x_turns=[3]), [*found, pairings()[1]], skip_invalid=True
    )
    assert [i.human.id for i in skipped.key.items.values() if i.kind == "test"] == ["human-conv-2"]
    assert any("is ping-pong" in note for note in skipped.notes)
    # Drawn from a pool, a ping-pong human chat is simply not a candidate.
    burst_human = conversation("burst-human", "What's your favorite smell?", 11, tag="g")
    for seed in range(5):
        drawn, problems = match_pairs(
            [(bot, None)],
            parse_source("humans.jsonl"),
            pool=FilePool([human, burst_human]),
            min_turns=3,
            rng=random.Random(seed),
        )
        assert not problems and drawn[0].human.id == "burst-human"


def test_the_filter_of_meaningless_turns_is_reported_by_the_build_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    human = conversation("h", "What's your favorite smell?", 14, tag="h")
    messages = list(human.messages)
    messages[2] = messages[2].model_copy(update={"text": "??"})
    write_transcripts(tmp_path / "humans.jsonl", [human.model_copy(update={"messages": messages})])
    write_transcripts(tmp_path / "bots.jsonl", pingpong_bots()[:1])
    monkeypatch.chdir(tmp_path)
    args = ["questionnaire", "build", "--bot", "bots.jsonl", "--human", "humans.jsonl", "--x", "3"]
    assert main([*args, "--drop-meaningless", "--out", "s"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "1 human conversation(s) converted to ping-pong" in out
    assert "1 later message(s) of runs left out, 1 meaningless turn(s) filtered" in out
    key = json.loads((tmp_path / "s" / "answer-key.json").read_text())
    human_meta = [i["human"]["meta"] for i in key["items"].values() if i["kind"] == "test"]
    assert human_meta[0]["pingpong_filtered_turns"] == 1


def shown(mode: str, seed: int = 1) -> list[tuple[list[Line], list[Line]]]:
    spec = StudySpec(name="t", seed=seed, x_turns=[3], catch_pairs=1, timestamps=mode)
    return [item.chats for item in build_questionnaire(spec, pairings()).questionnaire.items]


def test_by_default_judges_see_no_times() -> None:
    assert StudySpec().timestamps == "hidden"
    assert all(
        line.time is None for chats in shown(StudySpec().timestamps) for c in chats for line in c
    )


def test_relative_times_count_from_each_chats_first_line() -> None:
    for first, second in shown("relative"):
        assert first[0].time == second[0].time == "+0:00"
        assert all(line.time is not None and line.time.startswith("+") for line in first + second)
    # Gaps survive: the fixture's replies come 40 s after each question.
    assert shown("relative")[0][0][1].time == "+0:40"


def test_clock_times_put_both_chats_on_one_made_up_day_and_hour() -> None:
    starts = set()
    for first, second in shown("datetime"):
        begin = [
            datetime.strptime(chat[0].time or "", "%Y-%m-%d %H:%M:%S") for chat in (first, second)
        ]
        assert begin[0] == begin[1]
        assert begin[0].year == 2023 and 9 <= begin[0].hour <= 20
        later = datetime.strptime(first[1].time or "", "%Y-%m-%d %H:%M:%S")
        assert later > begin[0]
        starts.add(begin[0])
    assert len(starts) > 1, "each pair gets its own made-up moment"
    for first, second in shown("time"):
        assert first[0].time == second[0].time


def test_no_export_shows_the_real_dates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_transcripts(tmp_path / "bots.jsonl", bots())
    write_transcripts(tmp_path / "humans.jsonl", humans())
    monkeypatch.chdir(tmp_path)
    build = ["questionnaire", "build", "--bot", "bots.jsonl", "--human", "humans.jsonl", "--x", "3"]
    assert main([*build, "--timestamps", "datetime", "--out", "s"]) == 0
    assert main(["questionnaire", "export", "s"]) == 0
    files = [tmp_path / "s" / "questionnaire.json", *(tmp_path / "s" / "export").iterdir()]
    for path in files:
        text = path.read_text(encoding="utf-8")
        # The bots chatted in 2025, the humans in 2019; judges only see the made-up 2023.
        assert "2025-03" not in text and "2019-" not in text and "18:30:" not in text, path.name
    assert "2023-" in (tmp_path / "s" / "questionnaire.json").read_text()


def test_differences_beyond_the_words_are_found() -> None:
    bot = conversation("b", "t", 3, tag="b").messages
    assert differences(bot, bot, bot_mode="burst", human_mode="burst", timestamps="time") == []
    chatty = [
        m.model_copy(update={"text": f"{m.text} {n}"})
        for m in conversation("h", "t", 3, tag="h").messages
        for n in range(1 if m.side == "user" else 6)
    ]
    found = differences(bot, chatty, bot_mode="burst", human_mode="pingpong", timestamps="hidden")
    assert found == ["7 messages against 27", "a burst chat against a pingpong one"]
    minutes = [m.model_copy(update={"time": m.time.replace(second=0)}) for m in bot]
    assert (
        differences(bot, minutes, bot_mode="burst", human_mode="burst", timestamps="hidden") == []
    )
    clock = differences(bot, minutes, bot_mode="burst", human_mode="burst", timestamps="relative")
    assert clock == ["the times of one chat are whole minutes, the other's have seconds"]
    assert differences(bot[:4], bot, bot_mode="burst", human_mode="burst", timestamps="hidden") == [
        "2 turns against 3"
    ]


def test_build_names_the_pair_that_is_not_comparable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    talky = conversation("talky-human", "What's your favorite smell?", 14, tag="h")
    messages = []
    for message in talky.messages:
        messages.append(message)
        if message.side == "response":
            messages += [
                message.model_copy(update={"text": f"{message.text} again {n}"}) for n in range(6)
            ]
    write_transcripts(
        tmp_path / "humans.jsonl", [talky.model_copy(update={"messages": messages}), *humans()[1:]]
    )
    write_transcripts(tmp_path / "bots.jsonl", bots())
    monkeypatch.chdir(tmp_path)
    args = ["questionnaire", "build", "--bot", "bots.jsonl", "--human", "humans.jsonl", "--x", "3"]
    assert main([*args, "--out", "s"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert (
        "X=3: bot conversation 'bot-conv-1' and human conversation 'talky-human' are not comparable"
        in err
    )
    assert "--skip-invalid" in err and "Traceback" not in err
    assert not (tmp_path / "s").exists()
    assert main([*args, "--skip-invalid", "--out", "s"]) == 0
    key = json.loads((tmp_path / "s" / "answer-key.json").read_text())
    assert [i["human"]["id"] for i in key["items"].values() if i["kind"] == "test"] == [
        "human-conv-2"
    ]


def test_a_pool_draws_a_comparable_human_chat_when_it_has_one() -> None:
    talky = conversation("talky", "What's your favorite smell?", 11, tag="t")
    messages = []
    for message in talky.messages:
        messages.append(message)
        if message.side == "response":
            messages += [
                message.model_copy(update={"text": f"{message.text} {n}"}) for n in range(6)
            ]
    pool = FilePool([talky.model_copy(update={"messages": messages}), humans()[0]])
    for seed in range(6):
        drawn, _ = match_pairs(
            [(bots()[0], None)],
            parse_source("h.jsonl"),
            pool=pool,
            min_turns=3,
            rng=random.Random(seed),
        )
        assert drawn[0].human.id == "human-conv-1"


def test_the_live_topic_is_drawn_from_the_pairing_pool_by_seed() -> None:
    talks = [conversation(f"c{n}", topic, 3, tag="c") for n, topic in enumerate(["Cats?", "Dogs?"])]
    corpus = FakeCorpus(talks, {})
    drawn = {live_topic(seed, lambda: corpus) for seed in range(12)}
    assert drawn == {"Cats?", "Dogs?"}
    assert live_topic(3, lambda: corpus) == live_topic(3, lambda: corpus)
    assert in_pool("cats", lambda: corpus) and not in_pool("birds", lambda: corpus)
