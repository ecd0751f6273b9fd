"""Telegram Desktop result.json exports."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sdtt.errors import InputError

from .helpers import FIXTURES, find, run_import, texts

TG = FIXTURES / "telegram"


def test_single_chat_export() -> None:
    result = run_import("telegram", TG / "result.json", "--me", "Ann Smith", "--no-scrub")
    persona = result.persona
    # Entity lists are joined into the plain text.
    assert "mail me at ann.smith@example.com or look at https://example.org/party?id=7" in texts(
        persona, "response"
    )
    assert "ok see you Bob" in texts(persona, "response")
    assert find(persona, "hey Ann, party at 10:30?").time == datetime(
        2024, 4, 13, 9, 5, 12, tzinfo=UTC
    )
    assert "breaking: it rains" not in texts(persona)  # forwarded: someone else wrote it
    assert result.report.dropped == {"system": 1, "forwarded": 1, "media": 2}


def test_full_export_needs_chat_choice() -> None:
    with pytest.raises(InputError) as caught:
        run_import("telegram", TG / "full_export.json", "--me", "Ann Smith")
    assert "'Bob Jones'" in str(caught.value) and "'Cleo Park'" in str(caught.value)
    assert caught.value.field == "--chat"
    persona = run_import(
        "telegram",
        TG / "full_export.json",
        "--me",
        "Ann Smith",
        "--chat",
        "cleo park",
        "--no-scrub",
    ).persona
    assert texts(persona) == ["hi", "hello"]


def test_date_without_zone_gets_timezone() -> None:
    persona = run_import(
        "telegram",
        TG / "result.json",
        "--me",
        "Ann Smith",
        "--no-scrub",
        "--timezone",
        "Asia/Tokyo",
    ).persona
    message = find(persona, "follow @annsmith99")
    assert message.time.isoformat() == "2024-04-13T09:09:00+09:00"


def _edited(tmp_path: Path, change: object) -> Path:
    document = json.loads((TG / "result.json").read_text(encoding="utf-8"))
    change(document)  # type: ignore[operator]
    target = tmp_path / "result.json"
    target.write_text(json.dumps(document), encoding="utf-8")
    return target


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda d: d["messages"][1].update(text=42), "messages[1].text"),
        (lambda d: d["messages"][2]["text"].append(7), "messages[2].text[4]"),
        (lambda d: d["messages"][1].update(date="yesterday"), "messages[1].date"),
        (lambda d: d.update(messages={"a": 1}), "messages"),
        (lambda d: d["messages"].append("oops"), "messages[9]"),
    ],
)
def test_wrong_shapes_name_the_json_path(tmp_path: Path, change: object, field: str) -> None:
    with pytest.raises(InputError) as caught:
        run_import("telegram", _edited(tmp_path, change), "--me", "Ann Smith")
    assert caught.value.field == field


def test_not_json(tmp_path: Path) -> None:
    bad = tmp_path / "result.json"
    bad.write_text('{"messages": [\n  {"id": 1,,}\n]}')
    with pytest.raises(InputError, match="not valid JSON") as caught:
        run_import("telegram", bad, "--me", "Ann Smith")
    assert caught.value.line == 2


def test_unix_time_in_other_digits_is_no_date(tmp_path: Path) -> None:
    def change(document: dict[str, object]) -> None:
        message = document["messages"][1]  # type: ignore[index]
        del message["date"]
        message["date_unixtime"] = "\u00b2"  # "²" passes str.isdigit but is no number

    with pytest.raises(InputError, match="has no 'date'") as caught:
        run_import("telegram", _edited(tmp_path, change), "--me", "Ann Smith")
    assert caught.value.field == "messages[1]"


def test_export_before_2021_with_numeric_ids_edits_and_a_hidden_forward() -> None:
    # Telegram Desktop wrote from_id as a number before 2021; a forward from a sender who
    # hides their account has "forwarded_from": null.
    result = run_import(
        "telegram", FIXTURES / "telegram" / "old_export.json", "--me", "Jordan Lee", "--no-scrub"
    )
    persona = result.persona
    # The edited message holds its last text, entities joined, no edit note.
    assert texts(persona, "response") == ["yes, meet at the north gate at 8"]
    assert "Jordan perfect, see you" in texts(persona, "user")
    assert all("24°C" not in text for text in texts(persona))
    assert result.report.dropped == {"system": 2, "forwarded": 1}


def test_current_export_with_text_entities_and_custom_emoji() -> None:
    result = run_import(
        "telegram",
        FIXTURES / "telegram" / "current_export.json",
        "--me",
        "Jordan Lee",
        "--no-scrub",
    )
    assert texts(result.persona, "response") == ["morning ☀️ coffee?"]
    assert texts(result.persona, "user") == ["morning!", "yes please"]
    assert result.report.dropped == {"system": 1, "forwarded": 1}
