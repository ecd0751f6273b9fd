from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from sdtt.errors import InputError
from sdtt.tasks.judgements import (
    Judgement,
    append_judgements,
    read_judgements,
    write_judgements,
)


def judgement(**changes: object) -> Judgement:
    fields: dict[str, object] = {
        "study": "s",
        "judge_id": "j1",
        "judge_type": "llm",
        "judge_model": "mock/judge",
        "pair_id": "pabc234",
        "condition": {"live_from": 1, "live_to": 3},
        "choice": "B",
        "bot_position": 2,
        "correct": True,
        "source": "llm-judge",
    }
    fields.update(changes)
    return Judgement.model_validate(fields)


def test_write_append_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    write_judgements(path, [judgement()])
    append_judgements(path, [judgement(judge_id="j2", excluded=True, exclusion_reason="why")])
    assert [j.judge_id for j in read_judgements(path)] == ["j1", "j2"]
    assert read_judgements(path)[1].exclusion_reason == "why"


def test_an_exclusion_needs_its_reason() -> None:
    with pytest.raises(ValidationError, match="exclusion_reason"):
        judgement(excluded=True)
    with pytest.raises(ValidationError, match="human judgement has no judge_model"):
        judgement(judge_type="human")


def test_bad_records_are_reported_with_their_line(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    write_judgements(path, [judgement()])
    with path.open("a") as handle:
        handle.write('{"version": 1, "study": "s"}\n')
    with pytest.raises(InputError, match=r"j.jsonl:2"):
        read_judgements(path)
    path.write_text('{"version": 99}\n')
    with pytest.raises(InputError, match="newer sdtt"):
        read_judgements(path)


def _old_record(**changes: object) -> dict[str, object]:
    """A judgement line as sdtt wrote it before: X, N and N + X also at the top level."""
    record: dict[str, object] = {
        "version": 1,
        "study": "s",
        "judge_id": "j1",
        "judge_type": "human",
        "pair_id": "pabc234",
        "x_turns": 3,
        "pseudo_turns": 100,
        "total_turns": 110,
        "choice": "A",
        "bot_position": 1,
        "correct": True,
        "source": "qualtrics:r.csv",
        "condition": {
            "bot_meta": {"model": "mock/x", "pseudo": "p.jsonl", "pseudo_turns": 100},
            "live_from": 8,
            "live_to": 10,
        },
    }
    record.update(changes)
    return record


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({}, (3, 100, 110)),
        # Older still: no window in the condition, and N not in the bot's metadata.
        ({"condition": {"bot_meta": {"model": "mock/x"}}}, (3, 100, 110)),
        # N unknown (a pseudo-dialogue of unrecorded length): no total either.
        (
            {"pseudo_turns": None, "total_turns": None, "condition": {"bot_meta": {"pseudo": "p"}}},
            (3, None, None),
        ),
    ],
)
def test_an_old_file_with_top_level_turn_counts_reads_and_rewrites_the_same(
    tmp_path: Path, changes: dict[str, object], expected: tuple[object, ...]
) -> None:
    old = tmp_path / "old.jsonl"
    old.write_text(json.dumps(_old_record(**changes)) + "\n", encoding="utf-8")
    [record] = read_judgements(old)
    assert (record.x_turns, record.pseudo_turns, record.total_turns) == expected
    new = tmp_path / "new.jsonl"
    write_judgements(new, [record])
    written = json.loads(new.read_text(encoding="utf-8"))
    assert not {"x_turns", "pseudo_turns", "total_turns"} & set(written)
    [again] = read_judgements(new)
    assert (again.x_turns, again.pseudo_turns, again.total_turns) == expected


def test_turn_counts_come_from_the_window_and_the_bot_condition() -> None:
    record = judgement(
        condition={"bot_condition": {"pseudo_turns": 100}, "live_from": 8, "live_to": 10}
    )
    assert (record.x_turns, record.pseudo_turns, record.total_turns) == (3, 100, 110)
    assert "x_turns" not in record.model_dump()
