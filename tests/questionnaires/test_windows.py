"""The human window sits at the bot's place: both from an opening, neither with a goodbye
the other lacks, and the build says which turns it showed."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from sdtt.cli import main
from sdtt.dialogue.message import Message, Transcript
from sdtt.dialogue.store import write_transcripts
from sdtt.questionnaires.build import build_questionnaire
from sdtt.questionnaires.pairing import Pairing
from sdtt.tasks.study import StudySpec
from tests.questionnaires.helpers import conversation

TOPIC = "What's your favorite smell?"
META = {"model": "mock/chatty", "persona": "chitchat-32b20fa3", "mode": "burst"}


def live_chat(name: str, turns: int, n: int = 0) -> Transcript:
    return conversation(
        name, TOPIC, turns, tag=name, meta={**META, "pseudo_turns": n, "live_turns": turns}
    )


def human_chat(name: str, turns: int) -> Transcript:
    """A human chat that opens with a greeting and ends in a goodbye, as real ones do."""
    talk = conversation(name, TOPIC, turns, tag=name)
    messages = list(talk.messages)
    messages[0] = messages[0].model_copy(update={"text": "hey there!"})
    last = messages[-1].time
    messages += [
        Message(side="user", text="Good talk!", time=last + timedelta(seconds=30)),
        Message(side="response", text="see ya!", time=last + timedelta(seconds=50)),
    ]
    return talk.model_copy(update={"messages": messages})


def human_lines(spec: StudySpec, pairing: Pairing) -> list[list[str]]:
    built = build_questionnaire(spec, [pairing])
    lines = []
    for item in built.questionnaire.items:
        truth = built.key.items[item.id]
        if truth.kind == "test":
            lines.append([line.text for line in item.chats[2 - truth.bot_position]])
    return lines


def test_a_whole_live_chat_is_shown_beside_the_opening_turns_of_a_longer_human_chat() -> None:
    pairing = Pairing(live_chat("bot", 10, n=100), None, human_chat("human", 24), None)
    built = build_questionnaire(StudySpec(total_turns=[110], catch_pairs=0), [pairing])
    (item,) = built.questionnaire.items
    truth = built.key.items[item.id]
    human = [line.text for line in item.chats[2 - truth.bot_position]]
    # Turns 1..10 of the human chat, like the bot's live turns 1..10: from its opening,
    # never its goodbye.
    assert human[0] == "hey there!"
    assert "see ya!" not in human and "Good talk!" not in human
    assert human[-1] == "human replies 9"
    assert (truth.live_from, truth.live_to, truth.human_from, truth.human_to) == (1, 10, 1, 10)
    assert built.windows == [
        "1 pair(s): the bot's live turns 1-10 (the whole live chat) beside the human chat's "
        "turns 1-10 (both from the opening)"
    ]
    assert not any("last turn" in warning for warning in built.warnings)


def test_the_last_x_turns_are_the_same_turn_numbers_of_the_human_chat() -> None:
    pairing = Pairing(live_chat("bot", 12), None, human_chat("human", 20), None)
    built = build_questionnaire(StudySpec(x_turns=[3], catch_pairs=0), [pairing])
    (truth,) = built.key.items.values()
    assert (truth.live_from, truth.live_to, truth.human_from, truth.human_to) == (10, 12, 10, 12)
    (item,) = built.questionnaire.items
    human = [line.text for line in item.chats[2 - truth.bot_position]]
    assert human[0] == "human asks 9" and human[-1] == "human replies 11"


def test_a_human_chat_too_short_for_the_bots_place_is_a_problem_not_a_late_window() -> None:
    pairing = Pairing(live_chat("bot", 12), None, human_chat("human", 6), None)
    with pytest.raises(Exception, match="the human window sits at the bot's place, turns 10-12"):
        build_questionnaire(StudySpec(x_turns=[3], catch_pairs=0), [pairing])


def test_a_human_window_that_reaches_its_goodbye_is_warned_about() -> None:
    # Ten turns and then the goodbye turn: a window of 11 turns holds it.
    pairing = Pairing(live_chat("bot", 11), None, human_chat("human", 10), None)
    built = build_questionnaire(StudySpec(x_turns=[11], catch_pairs=0), [pairing])
    (warning,) = [w for w in built.warnings if "up to their last turn" in w]
    assert "'human'" in warning and "goodbye" in warning


def test_a_pool_prefers_human_chats_that_go_on_past_the_window(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_transcripts(tmp_path / "bots.jsonl", [live_chat("bot", 10)])
    # One chat ends right at turn 10 with its goodbye; the other goes on to turn 30.
    write_transcripts(tmp_path / "humans.jsonl", [human_chat("ends", 9), human_chat("goes-on", 30)])
    for seed in range(4):
        out = tmp_path / f"s{seed}"
        args = ["questionnaire", "build", "--bot", str(tmp_path / "bots.jsonl"), "--human"]
        args += [str(tmp_path / "humans.jsonl"), "--x", "10", "--catch", "0"]
        assert main([*args, "--seed", str(seed), "--out", str(out)]) == 0
        printed = " ".join(capsys.readouterr().out.split())
        key = json.loads((out / "answer-key.json").read_text())
        assert [item["human"]["id"] for item in key["items"].values()] == ["goes-on"]
        assert (
            "window: 1 pair(s): the bot's live turns 1-10 (the last live turns) beside the "
            "human chat's turns 1-10 (both from the opening)" in printed
        )
