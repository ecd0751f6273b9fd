"""What a judge was shown is read by attribute: only the migration reads old keys."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sdtt.dialogue.condition import Condition
from sdtt.dialogue.shown import Shown, migrate_answer
from sdtt.tasks.judgements import Judgement

SDTT = Path(__file__).parents[2] / "sdtt"
MIGRATION = SDTT / "dialogue" / "shown.py"
STRING_KEY_READS = re.compile(
    r"""\.condition\.get\(|\.condition\[|\.shown\.get\(|\.shown\[|["']bot_condition["']"""
    r"""|["']bot_meta["']|\brecord_condition\b|\bmigrate_shown\b|\bshown_turns\("""
)
"""Reads of an answer record's grouping by string key, and the helpers that did them."""


def string_key_reads(root: Path, skip: Path | None = None) -> list[str]:
    """``file:line`` of every string-key read of an answer record under ``root``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if path == skip:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if STRING_KEY_READS.search(line):
                found.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    return found


def test_no_module_but_the_migration_reads_answer_records_by_string_key() -> None:
    assert string_key_reads(SDTT, skip=MIGRATION) == []


def test_the_check_finds_the_reads_of_before() -> None:
    old = 'order = judgement.condition.get("order")\nbot = grouping.get("bot_meta")\n'
    folder = MIGRATION.parent
    assert STRING_KEY_READS.search(old.splitlines()[0])
    assert STRING_KEY_READS.search(old.splitlines()[1])
    assert string_key_reads(folder) != []  # the migration itself reads them


def fields(**changes: object) -> dict[str, object]:
    record: dict[str, object] = {
        "study": "s",
        "judge_id": "j",
        "judge_type": "human",
        "pair_id": "p1",
        "choice": "A",
        "bot_position": 1,
        "correct": True,
        "source": "test",
    }
    record.update(changes)
    return record


def test_an_old_records_grouping_becomes_shown_and_notes_once() -> None:
    old = fields(
        condition={
            "bot_meta": {"model": "m/x", "persona": "p", "pseudo_turns": 4, "source": "f"},
            "bot_id": "b1",
            "human_id": "h1",
            "live_from": 2,
            "live_to": 3,
            "order": "swapped",
            "raw_answers": ["??"],
            "confidence": 80,
            "colour": "blue",
        }
    )
    record = Judgement.model_validate(old)
    bot = Condition(model="m/x", persona="p", pseudo_turns=4)
    assert record.shown == Shown(
        bot=bot,
        bot_conversation="b1",
        human_conversation="h1",
        live_from=2,
        live_to=3,
        order="swapped",
    )
    assert record.notes is not None and record.notes.raw_answers == ["??"]
    assert record.notes.confidence == 80 and record.notes.other == {"colour": "blue"}
    assert (record.x_turns, record.pseudo_turns, record.total_turns) == (2, 4, 7)
    again = Judgement.model_validate_json(record.model_dump_json())
    assert again == record
    assert "condition" not in record.model_dump() and "bot_meta" not in record.model_dump_json()


def test_a_record_of_today_is_left_as_it_is() -> None:
    today = fields(shown={"order": "original"})
    assert migrate_answer(today) is today


@pytest.mark.parametrize("order", [3, ["a"]])
def test_an_order_that_is_not_text_counts_as_none(order: object) -> None:
    record = Judgement.model_validate(fields(condition={"order": order}))
    assert record.shown.order is None
    assert record.notes is not None and record.notes.other == {"order": order}
