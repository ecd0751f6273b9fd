"""Generic CSV and JSONL chat tables with a column mapping."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from sdtt.errors import InputError
from sdtt.personas.importers.options import parse_columns

from .helpers import FIXTURES, find, run_import, texts

CSV = FIXTURES / "tabular" / "chat.csv"
JSONL = FIXTURES / "tabular" / "chat.jsonl"
MAPPING = "sender=author,text=body,time=ts,conversation=chat"


def test_csv_with_mapping_conversation_column_and_quoted_lines() -> None:
    result = run_import(
        "csv", CSV, "--me", "Ann Smith", "--columns", MAPPING, "--merge-others", "--no-scrub"
    )
    persona = result.persona
    assert "two\nlines" in texts(persona, "response")
    # ISO times with an offset are converted to --timezone (UTC by default).
    assert find(persona, "two\nlines").time == datetime(2024, 4, 13, 7, 6, tzinfo=UTC)
    assert result.report.dropped == {"empty": 1}
    # The conversation column separates chats that are only seconds apart.
    assert [len(c.messages) for c in persona.conversations] == [4, 2]


def test_csv_missing_column_lists_the_header() -> None:
    with pytest.raises(InputError) as caught:
        run_import("csv", CSV, "--me", "Ann Smith")
    assert "'author'" in str(caught.value) and caught.value.field == "--columns"


def test_csv_bad_time_names_the_line(tmp_path: Path) -> None:
    table = tmp_path / "chat.csv"
    table.write_text('sender,text,time\nA,"one\ntwo",2024-04-13T09:00:00\nB,hi,not a time\n')
    with pytest.raises(InputError) as caught:
        run_import("csv", table, "--me", "A")
    assert caught.value.line == 4 and caught.value.field == "time"


def test_csv_strptime_format(tmp_path: Path) -> None:
    table = tmp_path / "chat.csv"
    table.write_text("sender\ttext\ttime\nA\thi\t13/04/2024 21:05\nB\tho\t13/04/2024 21:06\n")
    persona = run_import(
        "csv", table, "--me", "B", "--time-format", "%d/%m/%Y %H:%M", "--no-scrub"
    ).persona
    assert find(persona, "ho").time == datetime(2024, 4, 13, 21, 6, tzinfo=UTC)


def test_jsonl_dotted_columns_and_epoch_ms() -> None:
    persona = run_import(
        "jsonl",
        JSONL,
        "--me",
        "Ann Smith",
        "--columns",
        "sender=author.name,text=body,time=ts",
        "--time-format",
        "epoch_ms",
        "--no-scrub",
    ).persona
    assert texts(persona, "response") == [
        "yes! mail me at ann.smith@example.com",
        "follow @annsmith99",
    ]
    assert find(persona, "follow @annsmith99").time == datetime(2024, 4, 13, 9, 26, tzinfo=UTC)


def test_jsonl_errors_name_the_line(tmp_path: Path) -> None:
    lines = tmp_path / "chat.jsonl"
    lines.write_text('{"sender": "A", "text": "x", "time": "2024-04-13T09:00:00"}\n[1]\n')
    with pytest.raises(InputError, match="not an object") as caught:
        run_import("jsonl", lines, "--me", "A")
    assert caught.value.line == 2
    lines.write_text('{"sender": "A", "text": "x", "time": 1713000000}\n')
    with pytest.raises(InputError, match="--time-format epoch"):
        run_import("jsonl", lines, "--me", "A")


@pytest.mark.parametrize("text", ["sender", "who=author", "sender=", "sender=a,time"])
def test_bad_column_mapping(text: str) -> None:
    with pytest.raises(InputError, match="--columns"):
        parse_columns(text)


def test_bad_time_format() -> None:
    with pytest.raises(InputError, match="--time-format"):
        run_import("csv", CSV, "--me", "Ann Smith", "--columns", MAPPING, "--time-format", "dd/mm")
