"""Facebook Messenger JSON exports, including their Latin-1 mojibake."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sdtt.errors import InputError
from sdtt.personas.importers import messenger
from sdtt.personas.importers.messenger import fix_mojibake
from sdtt.personas.importers.options import ImportOptions

from .helpers import FIXTURES, find, run_import, texts

FOLDER = FIXTURES / "messenger" / "inbox" / "bobjones_12345"


def test_mojibake_is_decoded() -> None:
    assert fix_mojibake("caf\u00c3\u00a9 \u00e2\u0098\u0095") == "café ☕"
    assert fix_mojibake("café") == "café"  # proper text stays as it is
    assert fix_mojibake("日本") == "日本"


def test_conversation_folder_in_time_order() -> None:
    result = run_import("messenger", FOLDER, "--me", "Zoë Müller", "--no-scrub")
    persona = result.persona
    assert texts(persona) == [
        "hey Zoë, ça va?",
        "très bien, Bob! 😀 https://example.org/party?id=7",
        "call me +44 7700 900123",
        "see you at the café ☕ ann.smith@example.com",
    ]
    assert find(persona, "hey Zoë, ça va?").time == datetime(2024, 4, 13, 9, 21, 40, tzinfo=UTC)
    assert result.report.dropped == {"deleted": 1, "system": 2, "media": 2}


def test_single_file_and_loose_name() -> None:
    persona = run_import(
        "messenger", FOLDER / "message_2.json", "--me", "zoe müller", "--no-scrub"
    ).persona
    assert texts(persona, "response") == ["très bien, Bob! 😀 https://example.org/party?id=7"]


def test_end_to_end_encrypted_export() -> None:
    result = run_import(
        "messenger", FIXTURES / "messenger" / "e2ee_export.json", "--me", "Zoë Müller", "--no-scrub"
    )
    assert texts(result.persona) == ["hey Zoë", "salut! écris-moi: zoe@example.com"]
    assert result.report.dropped == {"deleted": 1, "media": 1}


def test_empty_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"message_N\.json"):
        run_import("messenger", tmp_path, "--me", "Zoë Müller")


def test_bad_timestamp_is_named(tmp_path: Path) -> None:
    target = tmp_path / "message_1.json"
    target.write_text(
        '{"participants": [], "messages": '
        '[{"sender_name": "A", "timestamp_ms": "noon", "content": "x"}]}'
    )
    with pytest.raises(InputError) as caught:
        run_import("messenger", target, "--me", "A")
    assert caught.value.field == "messages[0].timestamp_ms"


def test_a_folder_is_read_a_file_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[str] = []
    parsed_after: list[int] = []  # how many files were read when each was parsed
    real_read, real_json = messenger.read_bytes, messenger.load_json

    def reading(path: Path) -> bytes:
        read.append(path.name)
        return real_read(path)

    def parsing(data: bytes, path: Path) -> object:
        parsed_after.append(len(read))
        return real_json(data, path)

    monkeypatch.setattr(messenger, "read_bytes", reading)
    monkeypatch.setattr(messenger, "load_json", parsing)
    chat, digest = messenger.IMPORTER.load(FOLDER, ImportOptions(me="Zoë Müller"))
    assert read == ["message_1.json", "message_2.json"]
    assert parsed_after == [1, 2]  # before: every file was read before the first was parsed
    whole = b"".join((FOLDER / name).read_bytes() for name in read)
    assert digest == hashlib.sha256(whole).hexdigest()  # the same person as before
    assert len(chat.messages) == 6  # media kept as such until the persona is built
