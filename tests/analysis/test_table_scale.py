"""Judgement files of millions: each record checked as pydantic would, little kept a row.

``sdtt score`` reads records without pydantic when their shape and values show pydantic
would keep them as they are (:mod:`sdtt.dialogue.plain_check`); what a record's shape
settles is worked out once per shape. These tests hold that reading to pydantic's
verdict record by record, and the table it builds to a small, fixed cost a row.
"""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sdtt.analysis.table import table_of_fields
from sdtt.errors import InputError
from sdtt.tasks.judgements import Judgement, iter_judgement_fields, read_judgements


def _record(**changes: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "version": 1,
        "study": "s",
        "judge_id": "llm-paired:mock/chatty#run-1",
        "judge_type": "llm",
        "judge_model": "mock/chatty",
        "pair_id": "p1",
        "pair_kind": "test",
        "choice": "A",
        "bot_position": 1,
        "correct": True,
        "response_time_s": 2.5,
        "demographics": {"age": "30"},
        "excluded": False,
        "exclusion_reason": None,
        "source": "llm:mock/chatty",
        "condition": {"bot_conversation": "b1", "order": "original"},
    }
    record.update(changes)
    return record


# Each comes after three valid records of the same keys (and mostly the same types), so
# a check settled once per shape would let it through if it were wrong.
VARIANTS = {
    "negative time": _record(response_time_s=-1.0),
    "a number as a demographic answer": _record(demographics={"age": 30}),
    "a number as the judge id": _record(judge_id=5),
    "one for true": _record(excluded=1),
    "a whole number of seconds": _record(response_time_s=3),
    "no choice but correct": _record(choice=None),
    "a bot position of 3": _record(bot_position=3),
    "an unknown field": {**_record(), "mood": "fine"},
    "a missing source": {k: v for k, v in _record().items() if k != "source"},
    "a list as the condition": _record(condition=["b1"]),
    "the same again": _record(),
}


@pytest.mark.parametrize("variant", list(VARIANTS), ids=list(VARIANTS))
def test_every_record_is_read_as_pydantic_reads_it(variant: str, tmp_path: Path) -> None:
    path = tmp_path / "judgements.jsonl"
    records = [_record(pair_id=f"p{i}") for i in range(3)] + [VARIANTS[variant]]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    try:
        expected: list[dict[str, Any]] | str = [j.model_dump() for j in read_judgements(path)]
    except InputError as error:
        expected = str(error)
    try:
        found: list[dict[str, Any]] | str = list(iter_judgement_fields(path))
    except InputError as error:
        found = str(error)
    assert found == expected


def _judgements(count: int) -> Iterator[dict[str, Any]]:
    for index in range(count):
        yield Judgement(
            study="s",
            judge_id="llm-paired:mock/chatty#run-1",
            judge_type="llm",
            judge_model="mock/chatty",
            pair_id=f"p{index}",
            pair_kind="test",
            choice="A",
            bot_position=1,
            correct=True,
            source="llm:mock/chatty",
            condition={
                "bot_conversation": f"bot-conv-{index}",
                "human_conversation": f"human-conv-{index}",
                "view": "last",
                "live_from": 1,
                "live_to": 3,
                "bot_condition": {"persona": "p", "model": "mock/chatty", "mode": "burst"},
                "topic": "the weather",
            },
        ).model_dump()


def test_a_table_of_many_conditions_costs_little_a_row() -> None:
    # A condition per pair, as a study of thousands of pairs has: the cache of each
    # condition's columns held orjson's bytes as its keys, which keep the room orjson
    # wrote them in, kilobytes each (4.9 KB a row here; 200 MB for 50,000 conditions).
    count = 20_000
    records = list(_judgements(count))
    tracemalloc.start()
    try:
        frame = table_of_fields(iter(records))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(frame) == count
    assert peak / count < 2_000, f"{peak / count:.0f} bytes a row at the peak"
