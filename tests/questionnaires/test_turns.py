"""Turn N+X: answer keys carry N, X and the total turn index; studies ask for totals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sdtt.cli import main
from sdtt.dialogue.message import Transcript
from sdtt.dialogue.store import write_transcripts
from sdtt.errors import InputError
from sdtt.questionnaires.build import build_questionnaire
from sdtt.questionnaires.pairing import Pairing
from sdtt.questionnaires.pipeline import build_study
from sdtt.tasks.questionnaire import questionnaire_json
from sdtt.tasks.study import PairSpec, StudySpec
from tests.questionnaires.helpers import conversation

TOPIC = "Mozart or Beethoven?"
META = {"model": "openai/gpt-4o", "persona": "chitchat-5e1f9a7b", "mode": "burst"}


def bot(name: str, live: int, n: int | None, **extra: Any) -> Transcript:
    meta: dict[str, Any] = {**META, **extra}
    if n is not None:
        meta |= {"pseudo_turns": n, "live_turns": live}
    return conversation(name, TOPIC, live, tag=name, meta=meta)


def human(name: str, turns: int = 12) -> Transcript:
    return conversation(name, TOPIC, turns, tag=name)


def test_key_and_judgements_carry_n_x_and_the_turn_shown_but_judges_do_not() -> None:
    pairing = Pairing(bot("b1", 12, 100), "b.jsonl", human("h1"), "h.jsonl")
    built = build_questionnaire(StudySpec(x_turns=[3], catch_pairs=1), [pairing])
    (item,) = [i for i in built.key.items.values() if i.kind == "test"]
    # The last 3 of 12 live turns after 100 pseudo turns: turns 110 to 112 are shown.
    assert (item.pseudo_turns, item.x_turns, item.live_from, item.live_to) == (100, 3, 10, 12)
    assert item.total_turns == 112 and item.view == "last"
    assert item.shown().live_to == 12
    shown = questionnaire_json(built.questionnaire)
    for word in ("pseudo_turns", "total_turns", "live_to", "112"):
        assert word not in shown


def test_old_bot_files_still_build_with_a_warning() -> None:
    plain = Pairing(bot("b1", 4, None), None, human("h1"), None)
    with_pseudo = Pairing(bot("b2", 4, None, pseudo="chain.jsonl"), None, human("h2"), None)
    built = build_questionnaire(StudySpec(x_turns=[3], catch_pairs=0), [plain, with_pseudo])
    totals = {i.bot.id: i.total_turns for i in built.key.items.values()}
    assert totals == {"b1": 4, "b2": None}
    assert any("'b1'" in w and "N = 0 assumed" in w for w in built.warnings)
    assert any("'b2'" in w and "unknown" in w for w in built.warnings)


def test_chunk_turns_show_the_first_k_turns_of_the_same_chats() -> None:
    pairing = Pairing(bot("b1", 12, 0), None, human("h1"), None)
    spec = StudySpec(x_turns=[], chunk_turns=[3, 6], catch_pairs=0)
    built = build_questionnaire(spec, [pairing])
    items = sorted(built.key.items.values(), key=lambda i: i.x_turns)
    assert [(i.view, i.live_from, i.live_to, i.total_turns) for i in items] == [
        ("chunk", 1, 3, 3),
        ("chunk", 1, 6, 6),
    ]
    for item in built.questionnaire.items:
        truth = built.key.items[item.id]
        bot_lines = item.chats[truth.bot_position - 1]
        # The first turn of the bot chat opens the chunk.
        assert bot_lines[0].text == "b1 asks 0"


def _spec_files(tmp_path: Path, bots: list[Transcript]) -> StudySpec:
    write_transcripts(tmp_path / "bots.jsonl", bots)
    write_transcripts(tmp_path / "humans.jsonl", [human(f"h{n}") for n in range(6)])
    return StudySpec(
        total_turns=[3, 10, 110],
        catch_pairs=0,
        pairs=[PairSpec(bot=str(tmp_path / "bots.jsonl"), human=str(tmp_path / "humans.jsonl"))],
    )


def test_total_turns_builds_the_papers_design_from_matching_chats(tmp_path: Path) -> None:
    chats = [bot("c3", 3, 0), bot("c10", 10, 0), bot("c110", 10, 100), bot("c5", 5, 0)]
    built = build_study(_spec_files(tmp_path, chats))
    shown = sorted(
        (i.total_turns or 0, i.pseudo_turns, i.x_turns, i.view, i.bot.id)
        for i in built.key.items.values()
    )
    assert shown == [
        (3, 0, 3, "whole", "c3"),
        (10, 0, 10, "whole", "c10"),
        (110, 100, 10, "whole", "c110"),
    ]
    assert any("'c5'" in note and "5 total turns" in note for note in built.notes)


def test_total_turns_names_the_missing_chats_and_the_commands_that_make_them(
    tmp_path: Path,
) -> None:
    spec = _spec_files(tmp_path, [bot("c3", 3, 0), bot("c10", 10, 0)])
    with pytest.raises(InputError) as caught:
        build_study(spec)
    text = str(caught.value)
    assert "1 conversation(s) the study asks for are missing" in text
    assert (
        "model openai/gpt-4o, persona chitchat-5e1f9a7b, mode burst, topic "
        "'Mozart or Beethoven?', 110 total turns" in text
    )
    assert (
        "sdtt generate --persona chitchat-5e1f9a7b --model openai/gpt-4o --mode burst "
        "--turns 100" in text
    )
    assert "--topic 'Mozart or Beethoven?' --turns 10 --pseudo" in text
    # --skip-invalid builds what there is and keeps the gap on record.
    built = build_study(spec, skip_invalid=True)
    assert any("missing" in problem and "110" in problem for problem in built.key.problems)


def test_cli_total_turns_flag_and_its_error_is_one_clean_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _spec_files(tmp_path, [bot("c3", 3, 0), bot("c10", 10, 0), bot("c110", 10, 100)])
    args = ["questionnaire", "build", "--bot", str(tmp_path / "bots.jsonl")]
    args += ["--human", str(tmp_path / "humans.jsonl"), "--catch", "0"]
    args += ["--total-turns", "3", "--total-turns", "10", "--total-turns", "110"]
    assert main([*args, "--out", str(tmp_path / "study")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "3 pair(s) (turn 3 (X=3): 1, turn 10 (X=10): 1, turn 110 (X=10): 1)" in out
    key = json.loads((tmp_path / "study" / "answer-key.json").read_text())
    assert sorted(i["total_turns"] for i in key["items"].values()) == [3, 10, 110]
    assert main([*args, "--total-turns", "24", "--out", str(tmp_path / "s2")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "24 total turns" in err
    assert main([*args, "--x", "3", "--out", str(tmp_path / "s3")]) == 2
    assert "choose one" in capsys.readouterr().err
