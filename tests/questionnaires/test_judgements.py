from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from sdtt.errors import InputError
from sdtt.questionnaires.judgements import (
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
        "x_turns": 3,
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
