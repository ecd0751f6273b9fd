"""Live chats that can be judged: ping-pong all the way, a pairable topic, bot times from
the typing-delay model."""

from __future__ import annotations

import itertools
import json
import shlex
from pathlib import Path

import pytest

from sdtt.cli import main
from sdtt.dialogue.pingpong import has_runs
from sdtt.dialogue.store import read_transcripts
from sdtt.engine.events import MessageSent, ReplyPlanned, read_event_log
from sdtt.personas.corpus import load_corpus
from sdtt.questionnaires.pairing_topics import in_pool, live_topic


def generate_burst_chain(tmp_path: Path) -> Path:
    topics = tmp_path / "topics.txt"
    topics.write_text("weekend plans\nnew phones\n")
    args = ["generate", "--model", "mock/chatty", "--topics", str(topics), "--turns", "4"]
    assert (
        main(
            [
                *args,
                "--turns-per-topic",
                "2",
                "--history-turns",
                "10",
                "--out",
                str(tmp_path / "pseudo"),
            ]
        )
        == 0
    )
    (chain,) = (tmp_path / "pseudo").glob("*.jsonl")
    return chain


def test_the_next_command_of_generate_names_a_corpus_topic(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    generate_burst_chain(tmp_path)
    printed = " ".join(capsys.readouterr().out.split())
    topic = live_topic(0)
    assert f"--topic {shlex.quote(topic)}" in printed
    assert in_pool(topic) and not in_pool("what you did last weekend")


def test_pingpong_simulate_converts_a_burst_chain_and_pairs_with_the_corpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    chain = generate_burst_chain(tmp_path)
    capsys.readouterr()
    script = tmp_path / "script.txt"
    script.write_text("hey\n\nso what do you think\n\nreally?\n")
    monkeypatch.chdir(tmp_path)
    args = ["simulate", "--model", "mock/chatty", "--script", str(script), "--turns", "3"]
    code = main(
        [*args, "--mode", "pingpong", "--pseudo", str(chain), "--virtual-clock", "--out", "t"]
    )
    assert code == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert "is a burst pseudo-dialogue; converted to ping-pong" in printed
    assert "topic (from the chitchat corpus, --seed 0)" in printed
    (path,) = [p for p in (tmp_path / "t").glob("*.jsonl") if ".events" not in p.name]
    (chat,) = read_transcripts(path)
    assert chat.topic == live_topic(0)
    assert chat.meta["pseudo_removed_messages"] > 0
    assert (
        chat.meta["pseudo_messages"] + chat.meta["pseudo_removed_messages"]
        == chat.meta["pseudo_original_messages"]
    )
    assert not has_runs(chat.messages)
    # The default topic is in the pairing pool: the chat pairs with a real ping-pong chat.
    build = ["questionnaire", "build", "--bot", str(path), "--x", "2", "--catch", "0"]
    assert main([*build, "--out", "study"]) == 0
    key = json.loads((tmp_path / "study" / "answer-key.json").read_text())
    (item,) = key["items"].values()
    assert item["human"]["condition"]["mode"] == "pingpong"
    questionnaire = json.loads((tmp_path / "study" / "questionnaire.json").read_text())
    for chat_lines in questionnaire["items"][0]["chats"]:
        speakers = [line["speaker"] for line in chat_lines]
        assert all(a != b for a, b in itertools.pairwise(speakers))


def test_an_explicit_topic_outside_the_corpus_gets_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "script.txt"
    script.write_text("hey\n")
    args = ["simulate", "--model", "mock/chatty", "--script", str(script), "--turns", "1"]
    assert (
        main(
            [
                *args,
                "--topic",
                "what you did last weekend",
                "--virtual-clock",
                "--quiet",
                "--out",
                str(tmp_path / "t"),
            ]
        )
        == 0
    )
    assert "no chitchat corpus chat is on this topic" in " ".join(capsys.readouterr().out.split())
    assert load_corpus().topics()


@pytest.mark.parametrize("mode", ["burst", "pingpong"])
def test_bot_times_on_the_virtual_clock_follow_the_typing_delay_model(
    tmp_path: Path, mode: str
) -> None:
    script = tmp_path / "script.txt"
    script.write_text("hey there\n\nwhat are you up to this weekend\n\nsounds fun honestly\n")
    args = ["simulate", "--model", "mock/chatty", "--script", str(script), "--turns", "3"]
    topic = ["--topic", "If money were no object, how would you spend your time?"]
    assert (
        main([*args, *topic, "--mode", mode, "--virtual-clock", "--quiet", "--out", str(tmp_path)])
        == 0
    )
    (log,) = tmp_path.glob("*.events.jsonl")
    replay = read_event_log(log)
    (chat,) = read_transcripts(log.with_name(log.name.replace(".events", "")))
    planned = {
        (event.call, record.index): record
        for event in replay.events
        if isinstance(event, ReplyPlanned)
        for record in event.messages
    }
    sent = [event for event in replay.events if isinstance(event, MessageSent)]
    assert sent
    bot_times = [m.time for m in chat.messages if m.side == "response"]
    assert bot_times == [event.time for event in sent]
    for event in sent:
        plan = planned[(event.call, event.index)]
        # Sent when planned, and never faster than 0.1 s per character of typing.
        assert event.clock == pytest.approx(plan.send_at)
        assert plan.send_at - plan.typing_at >= 0.1 * len(event.text)
        written = (event.time - replay.header.started).total_seconds()
        assert abs(written - event.clock) < 1
