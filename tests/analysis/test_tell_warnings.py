"""The tells table warns when something other than the words separates bot and human."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from sdtt.analysis.tells import Side, compare, study_sides, tell_warnings, transcript_side
from sdtt.cli import main
from sdtt.dialogue.message import Message
from sdtt.questionnaires.build import build_questionnaire
from sdtt.questionnaires.pairing import Pairing
from sdtt.tasks.judgements import write_judgements
from sdtt.tasks.questionnaire import save_study
from sdtt.tasks.study import StudySpec
from tests.analysis.helpers import judgement
from tests.questionnaires.helpers import fixture_study, pairings


def chat(start: datetime, delay: int, replies: int) -> list[Message]:
    messages = [Message(side="user", text="so what did you do", time=start)]
    for index in range(replies):
        at = start + timedelta(seconds=delay + 5 * index)
        messages.append(Message(side="response", text="went out with friends", time=at))
    return messages


def test_latency_hour_and_message_count_are_flagged_but_words_are_not() -> None:
    night = datetime(2026, 1, 5, 1, 10, tzinfo=UTC)
    afternoon = datetime(2018, 5, 2, 14, 0, tzinfo=UTC)
    bot = transcript_side([chat(night, 2, 3), chat(night, 3, 3)])
    human = transcript_side([chat(afternoon, 52, 1), chat(afternoon, 60, 1)])
    warned = " ".join(tell_warnings(compare(bot, human)))
    assert "median reply latency" in warned
    assert "hour of day" in warned
    assert "messages per chat" in warned
    assert "emoji" not in warned and "words per message" not in warned
    same = transcript_side([chat(afternoon, 50, 1)])
    assert tell_warnings(compare(same, same)) == []
    assert tell_warnings(compare(Side((), ()), Side((), ()))) == []


def test_relative_times_shown_to_judges_still_give_latencies() -> None:
    spec = StudySpec(name="fixture", seed=11, x_turns=[3], catch_pairs=1, timestamps="relative")
    study = fixture_study(spec)
    bot, _human = study_sides(study.questionnaire, study.key)
    assert bot.latencies and all(latency == 40 for latency in bot.latencies)
    assert bot.hours == () and len(bot.per_chat) == 2


def instant(pairing: Pairing) -> Pairing:
    """The pairing with a bot that answers in the same second."""
    messages: list[Message] = []
    for message in pairing.bot.messages:
        if message.side == "response" and messages:
            message = message.model_copy(update={"time": messages[-1].time})
        messages.append(message)
    bot = pairing.bot.model_copy(update={"messages": messages})
    return Pairing(bot, pairing.bot_path, pairing.human, pairing.human_path)


def test_report_prints_the_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = StudySpec(name="fixture", seed=11, x_turns=[3], catch_pairs=1, timestamps="time")
    study = build_questionnaire(spec, [instant(p) for p in pairings()])
    save_study(tmp_path / "study", study.questionnaire, study.key)
    path = tmp_path / "j.jsonl"
    write_judgements(path, [judgement("p1", "j1", True), judgement("p1", "j2", False)])
    study_dir, out_dir = str(tmp_path / "study"), str(tmp_path / "r")
    args = ["report", str(path), "--study", study_dir, "--out", out_dir, "--bootstrap", "20"]
    assert main(args) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert (
        "warning: openai/gpt-4o-2024-08-06, burst, turn 12 (N=0, X=3), simulated User A "
        "(anthropic/claude-sonnet-4-5), side B median reply latency (s): bot 0.0, human 40.0"
    ) in out
    assert "tells outside the words" in (tmp_path / "r" / "report.md").read_text()
