from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from sdtt.analysis.metrics import summarise
from sdtt.analysis.table import judgement_table
from sdtt.beliefs.traces import (
    append_traces,
    judgements_from_traces,
    load_traces,
    read_traces,
    to_judgement,
    write_traces,
)
from sdtt.errors import InputError
from sdtt.tasks.reveal_turns import chat_turns, new_text, reveal_turns, revealed
from tests.beliefs.helpers import trace
from tests.questionnaires.helpers import fixture_study


def test_traces_round_trip_through_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    write_traces(path, [trace([40, 70])])
    append_traces(path, [trace([None, 20], judge_id="j2")])
    back = read_traces(path)
    assert [t.judge_id for t in back] == ["j1", "j2"]
    assert back[1].points[0].belief is None
    assert back[0].belief_at(1) == 40 and back[0].belief_at(5) == 70


def test_bad_trace_records_name_their_line(tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    write_traces(path, [trace([40])])
    with path.open("a") as handle:
        handle.write('{"version": 1, "study": "s", "points": [{"belief": 140}]}\n')
    with pytest.raises(InputError, match=r"traces.jsonl:2"):
        read_traces(path)


def test_beliefs_outside_0_100_are_refused() -> None:
    with pytest.raises(ValidationError):
        trace([101])


def test_final_belief_gives_the_ordinary_verdict() -> None:
    # Bot in chat 2, belief about chat 1 being human: high = right (option B).
    right = to_judgement(trace([20, 80]))
    assert (right.choice, right.correct, right.excluded) == ("B", True, False)
    wrong = to_judgement(trace([80, 10]))
    assert (wrong.choice, wrong.correct) == ("A", False)
    # The last given belief counts, even when a later step had no readable one.
    late = to_judgement(trace([90, None]))
    assert late.choice == "B"
    tie = to_judgement(trace([50]))
    assert tie.choice is None and tie.exclusion_reason == "tie: final belief 50"
    empty = to_judgement(trace([None, None]))
    assert empty.excluded and (empty.exclusion_reason or "").startswith("non_compliant")


def test_traces_score_through_the_pass_rate_code() -> None:
    traces = [trace([30, 90], judge_id="a"), trace([70, 20], judge_id="b")]
    summary = summarise(judgement_table(judgements_from_traces(traces)), reps=50)
    assert summary.judgements == 2 and summary.correct == 1
    assert summary.pass_rate == pytest.approx(0.5)


def test_single_chat_traces_have_no_pair_judgement_yet() -> None:
    single = trace([10], item_kind="single", bot_position=None, target="chat")
    with pytest.raises(ValueError, match="single"):
        to_judgement(single)
    assert judgements_from_traces([single]) == []


def test_load_keeps_one_trace_per_judge_and_item(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write_traces(path, [trace([10]), trace([90]), trace([40], judge_id="j2")])
    assert [t.final_belief for t in load_traces([path])] == [10, 40]


def test_reveal_steps_grow_both_chats_turn_by_turn() -> None:
    item = fixture_study().questionnaire.items[0]
    turns = reveal_turns(item)
    assert turns == max(len(chat_turns(chat)) for chat in item.chats) >= 3
    first = revealed(item, 1)
    for chat in first.chats:
        speakers = [line.speaker for line in chat]
        assert speakers[0] == "A" and "A" not in speakers[speakers.index("B") :]
    assert revealed(item, turns).chats == item.chats
    assert all(
        len(revealed(item, t).chats[0]) <= len(revealed(item, t + 1).chats[0])
        for t in range(1, turns)
    )
    assert "chat 1:" in new_text(item, 1)


def test_a_truth_that_contradicts_the_bot_position_is_refused_by_line(tmp_path: Path) -> None:
    # Scoring would read bot_position (chat 1 is the bot) and calibration target_human.
    with pytest.raises(ValidationError, match="target_human is true but bot_position is 1"):
        trace([80], bot_position=1, target_human=True)
    path = tmp_path / "traces.jsonl"
    record = trace([80]).model_dump(mode="json") | {"bot_position": 1}
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"traces.jsonl:1.*the bot is in chat 2"):
        read_traces(path)


def test_an_old_trace_with_top_level_turn_counts_reads_them_from_its_condition(
    tmp_path: Path,
) -> None:
    old = trace([40, 60]).model_dump(mode="json")
    del old["shown"], old["notes"]
    old["condition"] = {"bot_meta": {"model": "mock/a", "pseudo_turns": 10}}
    old |= {"x_turns": 2, "pseudo_turns": 10, "total_turns": 12}
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps(old) + "\n", encoding="utf-8")
    [read] = read_traces(path)
    assert (read.x_turns, read.pseudo_turns, read.total_turns) == (2, 10, 12)
    assert (to_judgement(read).x_turns, to_judgement(read).total_turns) == (2, 12)
    write_traces(path, [read])
    assert "x_turns" not in json.loads(path.read_text(encoding="utf-8"))
    assert read_traces(path)[0].total_turns == 12
