"""Judgement files read a block at a time with Arrow give what the per-record path gives:
the same table, or the same error on the same line."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdtt.analysis.table import TABLE_GROUPS, read_judgement_table, table_of_fields
from sdtt.dialogue import record_blocks
from sdtt.errors import InputError
from sdtt.tasks.judgements import iter_judgement_fields, judgement_blocks


def _record(index: int) -> dict[str, Any]:
    return {
        "version": 1,
        "study": "s",
        "judge_id": f"judge-{index % 3}",
        "judge_type": "llm",
        "judge_model": "mock/m",
        "pair_id": f"p{index % 5}",
        "choice": "AB"[index % 2],
        "bot_position": 1 + index % 2,
        "correct": index % 3 == 0,
        "witness": None,
        "verdict": None,
        "response_time_s": None,
        "demographics": {},
        "excluded": False,
        "exclusion_reason": None,
        "source": "llm:mock",
        "notes": None,
        "shown": {
            "bot_conversation": f"b{index % 4}",
            "bot": {"persona": "x", "model": "mock/m", "mode": "burst", "seed": None},
            "live_from": 1,
            "live_to": 3,
            "order": "original",
        },
    }


# Each damage is a function of a record's JSON line (bytes) to the line written.
_DAMAGES: list[Any] = [
    lambda line: line,
    lambda line: line.replace(b'"choice":"A",', b""),  # a required field missing
    lambda line: line.replace(b'"choice":"A"', b'"choice":null'),
    lambda line: line.replace(b'"bot_position":1', b'"bot_position":1.0'),
    lambda line: line.replace(b'"bot_position":2', b'"bot_position":"2"'),
    lambda line: line.replace(b'"correct":true', b'"correct":1'),
    lambda line: line.replace(b'"response_time_s":null', b'"response_time_s":2.5'),
    lambda line: line.replace(b'"response_time_s":null', b'"response_time_s":3'),
    lambda line: line.replace(b'"response_time_s":null', b'"response_time_s":-1'),
    lambda line: line.replace(b'"response_time_s":null', b'"response_time_s":1e400'),
    lambda line: line.replace(b'"response_time_s":null', b'"response_time_s":NaN'),
    lambda line: line.replace(
        b'"response_time_s":null', b'"response_time_s":123456789012345678901'
    ),
    lambda line: line.replace(b'"live_to":3', b'"live_to":3.5'),
    lambda line: line.replace(b'"live_to":3', b'"live_to":99999999999999999999'),
    lambda line: line.replace(b',"seed":null', b""),  # a nested null left out
    lambda line: line.replace(b'"seed":null', b'"seed":7'),
    lambda line: line.replace(b'"live_from":1', b'"live_from":null'),  # a nested null written
    lambda line: line.replace(b',"order":"original"', b""),
    lambda line: line.replace(
        b'"bot":{"persona":"x","model":"mock/m","mode":"burst","seed":null}', b'"bot":null'
    ),
    lambda line: line.replace(b'"witness":null,', b""),
    lambda line: line.replace(b'"excluded":false', b'"excluded":null'),
    lambda line: line.replace(b'"excluded":false', b'"excluded":true'),
    lambda line: line.replace(b'"demographics":{}', b'"demographics":{"age":"30"}'),
    lambda line: line.replace(b'"demographics":{}', b'"demographics":{"age":null}'),
    lambda line: line.replace(b'"demographics":{}', b'"demographics":{"age":30}'),
    lambda line: line.replace(b'"source"', b'"extra":1,"source"'),
    lambda line: line.replace(b'"source"', b'"x_turns":3,"source"'),  # an old form
    # The record as written before 'shown': the grouping 'condition', the bot inside.
    lambda line: line.replace(b'"shown":{', b'"condition":{').replace(
        b'"bot":{', b'"bot_condition":{'
    ),
    lambda line: line.replace(b'"notes":null', b'"notes":{"raw_answers":["x"]}'),
    lambda line: line.replace(b'"notes":null,', b""),
    lambda line: line.replace(b'"study":"s"', b'"study":"s\\ud83d"'),
    lambda line: line.replace(b'"study":"s"', b'"study":"s\\u0000"'),
    lambda line: line.replace(b'"study":"s"', b'"study":"s\x00"'),
    lambda line: line.replace(b'"study":"s"', b'"study":"s\xff"'),
    lambda line: line.replace(b'"study":"s"', b'"study":"\\u00e9"'),
    lambda line: line.replace(b'"study":"s"', b'"study" : "s"'),
    lambda line: line.replace(b'"study":"s"', b'"study":"s","study":"t"'),
    lambda line: line.replace(b'"version":1', b'"version":2'),
    lambda line: line.replace(b'"version":1', b'"version":true'),
    lambda line: line + b" " + line,
    lambda line: b"",  # a blank line
    lambda line: b"[1]",
    lambda line: line[: len(line) // 2],
]


def _outcome(read: Any) -> tuple[str, Any, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            found: Any = read()
            kind = "table"
        except InputError as error:
            found, kind = str(error), "error"
    return kind, found, sorted({str(warning.message) for warning in caught})


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    damages=st.lists(st.integers(0, len(_DAMAGES) - 1), min_size=1, max_size=12),
    clean=st.integers(0, 6),
    tail=st.booleans(),
    block=st.sampled_from([64, 700, 3000, 1 << 20]),
)
def test_blocks_read_as_records_do(
    tmp_path: Path, damages: list[int], clean: int, tail: bool, block: int
) -> None:
    lines = [orjson.dumps(_record(index)) for index in range(clean)]
    lines += [_DAMAGES[d](orjson.dumps(_record(i + clean))) for i, d in enumerate(damages)]
    path = tmp_path / "j.jsonl"
    path.write_bytes(b"\n".join(lines) + (b"" if tail else b"\n"))
    slow = _outcome(lambda: table_of_fields(iter_judgement_fields(path)))
    fast = _outcome(lambda: read_judgement_table([path], block_size=block))
    assert fast[0] == slow[0], (fast[1], slow[1])
    if slow[0] == "table":
        pd.testing.assert_frame_equal(fast[1], slow[1])
    else:
        assert fast[1] == slow[1]
    assert fast[2] == slow[2]


def test_a_plain_valid_file_is_read_by_arrow_in_every_block(tmp_path: Path) -> None:
    """The fast path is really taken: a valid file split in several blocks never falls
    back to reading record by record."""
    path = tmp_path / "j.jsonl"
    path.write_bytes(b"".join(orjson.dumps(_record(i)) + b"\n" for i in range(200)))
    reader = judgement_blocks(TABLE_GROUPS)
    blocks = list(reader.read(path, block_size=4096))
    assert reader.fast_blocks == len(blocks) > 5
    assert reader.slow_blocks == 0
    frame = read_judgement_table([path], block_size=4096)
    pd.testing.assert_frame_equal(frame, table_of_fields(iter_judgement_fields(path)))


def test_nesting_thousands_deep_is_an_error_line_not_a_crash(tmp_path: Path) -> None:
    # Arrow's parser recurses: 100,000 levels ended the process (a segmentation fault).
    # A string of closing brackets first must not hide the depth from the check.
    for prefix in ("", '"a":"' + "}" * 100 + '",'):
        path = tmp_path / "deep.jsonl"
        path.write_text("{" + prefix + '"b":' + '{"a":' * 100_000 + "1" + "}" * 100_001 + "\n")
        try:
            read_judgement_table([path])
        except InputError as error:
            assert "nested too deeply" in str(error)
        else:
            raise AssertionError("a 100,000-deep record was accepted")


@pytest.mark.parametrize("limit", [2, 50, 1 << 62])
def test_many_distinct_shown_values_group_as_records_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    # Each leaf of 'shown' takes many values in one block, so the block's combined code
    # is renumbered between leaves (every leaf, at the small limits) before it overflows.
    monkeypatch.setattr(record_blocks, "_COMBINED_LIMIT", limit)
    lines = []
    for index in range(400):
        record = _record(index)
        record["shown"].update(
            bot_conversation=f"b{index % 397}",
            live_from=index % 7,
            live_to=7 + index % 389,
            topic=f"t{index % 383}",
            human_conversation=f"h{index % 379}",
        )
        record["shown"]["bot"].update(persona=f"p{index % 373}", seed=index % 367)
        lines.append(orjson.dumps(record))
    path = tmp_path / "j.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    reader = judgement_blocks(TABLE_GROUPS)
    list(reader.read(path, block_size=1 << 20))
    assert reader.fast_blocks == 1 and reader.slow_blocks == 0  # the grouping ran
    slow = table_of_fields(iter_judgement_fields(path))
    fast = read_judgement_table([path], block_size=1 << 20)
    pd.testing.assert_frame_equal(fast, slow)
