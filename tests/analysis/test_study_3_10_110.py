"""A 3/10/110-turn study end to end: scripted bots, fabricated human answers in two survey
formats, a report that pools nothing unless asked, and a tells table that sdtt's own
construction leaves clean.

The bots replay a real person's side of a corpus chat (a perfect imitator, run on the
burst engine like any model), and each is paired with a copy of that chat: whatever the
tells table then finds, sdtt put there itself, as the last X turns of a longer human chat
once did (a goodbye in 13 of 27 human windows, none in the bots').
"""

from __future__ import annotations

import csv
import json
import random
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sdtt.analysis.tells import condition_warnings, study_tells
from sdtt.cli import main
from sdtt.dialogue.condition import Condition
from sdtt.dialogue.message import Transcript, segment_turns
from sdtt.dialogue.store import write_transcripts
from sdtt.engine.interrogator import ScriptInterrogator
from sdtt.engine.session import SessionSettings
from sdtt.engine.simulate import run_on_virtual_clock, run_simulated_chat
from sdtt.personas.corpus import load_corpus
from sdtt.tasks.questionnaire import load_key, load_questionnaire

TOPIC = "Can computers fall in love?"
# Each side waits long after the other's first unread line, so bursts come whole.
PATIENT = SessionSettings(t1=900.0, seed=1)


def real_chat() -> Transcript:
    """A corpus chat on the topic with more than 10 turns, each side writing bursts."""
    for chat in load_corpus().conversations(TOPIC, min_turns=12):
        turns = segment_turns(chat.messages)
        if len(turns) >= 12 and all(turn.response for turn in turns):
            return chat
    raise AssertionError("the corpus has no long chat on the topic")


def replay(chat: Transcript, live: int, pseudo: int, start: str, out: Path) -> None:
    turns = segment_turns(chat.messages)[:live]
    bot = ScriptInterrogator([[m.text for m in turn.response] for turn in turns])
    asker = ScriptInterrogator([[m.text for m in turn.user] for turn in turns])
    condition = Condition(
        model="mock/replay",
        persona="chitchat-replay",
        interrogator="script",
        pseudo_turns=pseudo,
        live_turns=live,
    )
    result = run_on_virtual_clock(
        lambda: run_simulated_chat(
            bot,
            asker,
            turns=live,
            bot_settings=PATIENT,
            interrogator_settings=PATIENT,
            out_dir=out,
            topic=TOPIC,
            condition=condition,
            started=datetime.fromisoformat(start).replace(tzinfo=UTC),
        )
    )
    assert result.turns == live


def fabricate(study: Path, judges: int, seed: int) -> list[dict[str, str]]:
    """Answers of ``judges`` people: right on catch pairs and topics, a coin on the rest."""
    questionnaire = load_questionnaire(study)
    key = load_key(study, questionnaire)
    rng = random.Random(seed)
    people = []
    for number in range(judges):
        said = {"PROLIFIC_PID": f"P{seed}-{number}"}
        for item in questionnaire.items:
            truth = key.items[item.id]
            other = "B" if truth.correct_choice == "A" else "A"
            said[item.id] = truth.correct_choice if truth.kind == "catch" else rng.choice("AB")
            if truth.kind == "test" and rng.random() < 0.5:
                said[item.id] = other
            if item.topic is not None and truth.topic_value is not None:
                said[item.topic.name] = truth.topic_value
        people.append(said)
    return people


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("turns")
    chat = real_chat()
    chats = root / "chats"
    replay(chat, 3, 0, "2025-01-01T12:00", chats)
    replay(chat, 10, 0, "2025-01-01T13:00", chats)
    replay(chat, 10, 100, "2025-01-01T14:00", chats)
    copies = [chat.model_copy(update={"id": f"human-{n}"}) for n in range(3)]
    write_transcripts(root / "humans.jsonl", copies)
    build = ["questionnaire", "build", "--human", str(root / "humans.jsonl")]
    for path in sorted(chats.glob("chat-*[0-9a-f].jsonl")):
        build += ["--bot", str(path)]
    for total in ("3", "10", "110"):
        build += ["--total-turns", total]
    assert main([*build, "--seed", "4", "--out", str(root / "study")]) == 0
    surveyjs = fabricate(root / "study", 8, 1)
    (root / "surveyjs.json").write_text(json.dumps(surveyjs))
    with (root / "answers.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["judge_id", "question", "answer"])
        for person in fabricate(root / "study", 8, 2):
            judge = person.pop("PROLIFIC_PID")
            writer.writerows([judge, question, answer] for question, answer in person.items())
    for name, fmt in (("surveyjs.json", "surveyjs"), ("answers.csv", "csv")):
        imported = ["responses", "import", str(root / name), "--study", str(root / "study")]
        out = str(root / f"{fmt}.jsonl")
        assert main([*imported, "--format", fmt, "--out", out]) == 0
    return root


def test_the_tells_table_of_a_perfect_imitator_is_clean(study: Path) -> None:
    questionnaire = load_questionnaire(study / "study")
    tells = study_tells(questionnaire, load_key(study / "study", questionnaire))
    assert len(tells) == 3  # one per condition: turns 3, 10 and 110
    assert condition_warnings(tells) == []
    for rows in tells.values():
        # Both sides; the windows start and end at the same place in both chats. (The
        # engine may let User A's next line in before the bot's burst is done, so counts
        # can differ a little, well within what is not a warning.)
        assert {row.side for row in rows} == {"A", "B"}
        placed = [row for row in rows if row.name in ("opening", "closing")]
        assert len(placed) == 4 and all(row.difference == 0 for row in placed), placed


def test_the_report_pools_nothing_unless_asked(
    study: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    judgements = [str(study / "surveyjs.jsonl"), str(study / "csv.jsonl")]
    report = ["report", *judgements, "--study", str(study / "study"), "--bootstrap", "20"]
    assert main([*report, "--out", str(study / "r")]) == 0
    printed = capsys.readouterr().out
    assert "warning:" not in printed.replace("simulated User A", "")
    markdown = (study / "r" / "report.md").read_text()
    head = markdown.split("\n## ")[0]
    assert "![Pass rate against turns](pass-rate.png)" in head
    assert sum(line.startswith("- mock/replay") for line in head.splitlines()) == 3
    assert "pooled over" not in markdown and "(--pool)" not in markdown
    for total, n in (("3", "0"), ("10", "0"), ("110", "100")):
        assert f"mock/replay, burst, turn {total} (N={n}, X=" in markdown
    assert main([*report, "--out", str(study / "p"), "--pool"]) == 0
    pooled = (study / "p" / "report.md").read_text()
    assert "## All judgements, pooled (--pool)" in pooled
    assert "pooled over every judge type and bot model (--pool)" in pooled
    scored = ["score", *judgements, "--by", "turns", "--bootstrap", "20"]
    assert main(scored) == 0
    out = capsys.readouterr().out
    # "pooled" also names the decision-pooled rate's column and its note; no table pools.
    assert "By turns: Human judges, bot mock/replay" in out
    assert "pooled over" not in out and "(--pool)" not in out and "All test judgements" not in out
