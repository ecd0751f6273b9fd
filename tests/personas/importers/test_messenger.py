"""Facebook Messenger JSON exports, including their Latin-1 mojibake."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sdtt.errors import InputError
from sdtt.personas.importers import messenger
from sdtt.personas.importers.build import PreparedImport
from sdtt.personas.importers.messenger import fix_mojibake
from sdtt.personas.importers.options import ImportOptions
from tests.memory import command_peak

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


def _mojibake(text: str) -> str:
    return text.encode("utf-8").decode("latin-1")


def write_conversation(
    folder: Path, files: int, per_file: int, *, newest_first: bool = True
) -> Path:
    """A conversation folder as Facebook writes it: ``message_1.json`` holds the newest
    messages, each file newest first; every 7th message a photo, some unsent, a system
    line, conversations an hour apart, and messages of one time across two files."""
    folder.mkdir(parents=True, exist_ok=True)
    start = 1_700_000_000_000
    total = files * per_file
    records: list[dict[str, object]] = []
    stamp = start
    for index in range(total):
        sender = "Zoë Müller" if index % 3 else "Bob Jones"
        # A pause of an hour every 25 messages; the first of each file shares its time
        # with the last of the file before.
        if index % per_file or not index:
            stamp = start + index * 60_000 + (index // 25) * 3_600_000
        record: dict[str, object] = {
            "sender_name": _mojibake(sender),
            "timestamp_ms": stamp,
            "content": _mojibake(f"message {index} café, mail zoe{index % 10}@example.com"),
        }
        if index % 7 == 3:
            record["content"] = _mojibake(f"{sender} sent a photo.")
            record["photos"] = [{"uri": "photo.jpg"}]
        elif index % 11 == 5:
            record["content"] = _mojibake(f"{sender} unsent a message.")
        elif index % 13 == 6:
            record["content"] = "You are now connected on Messenger"
        records.append(record)
    chunks = [records[part * per_file : (part + 1) * per_file] for part in range(files)]
    if newest_first:
        chunks = [list(reversed(chunk)) for chunk in reversed(chunks)]
    for number, chunk in enumerate(chunks, start=1):
        document = {
            "participants": [{"name": _mojibake("Zoë Müller")}, {"name": "Bob Jones"}],
            "messages": chunk,
            "title": "Bob Jones",
        }
        (folder / f"message_{number}.json").write_text(json.dumps(document), encoding="utf-8")
    return folder


@pytest.mark.parametrize("newest_first", [True, False])
@pytest.mark.parametrize("extra", [[], ["--keep-media"], ["--no-scrub"]])
def test_a_folder_streams_to_the_persona_of_the_folder_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, newest_first: bool, extra: list[str]
) -> None:
    folder = write_conversation(tmp_path / "chat", files=4, per_file=60, newest_first=newest_first)
    options = ImportOptions(me="Zoë Müller", name="zoe", keep_media="--keep-media" in extra)
    if "--no-scrub" in extra:
        options = dataclasses.replace(options, scrub=False)
    whole = PreparedImport(messenger.IMPORTER.run(folder, options)).write(tmp_path / "whole.jsonl")
    held_whole: list[Path] = []
    monkeypatch.setattr(messenger.IMPORTER, "run", lambda path, options: held_whole.append(path))
    prepared = messenger.IMPORTER.prepare(folder, options)
    streamed = prepared.write(tmp_path / "streamed.jsonl")
    assert not held_whole, "the conversation was read whole"
    created = re.compile(rb'"created":"[^"]*"')
    assert created.sub(b"", streamed.path.read_bytes()) == created.sub(b"", whole.path.read_bytes())
    assert streamed.report == whole.report
    assert streamed.scrub_mapping == whole.scrub_mapping


def _import_peak(folder: Path, files: int) -> int:
    write_conversation(folder / f"chat-{files}", files=files, per_file=500)
    argv = ["persona", "import", "messenger", str(folder / f"chat-{files}"), "--me", "Zoë Müller"]
    argv += ["--out", str(folder), "--name", f"zoe-{files}"]
    return command_peak(argv)


def test_a_long_conversation_holds_one_file_not_the_messages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no ./personas/ to look through
    _import_peak(tmp_path, 2)  # name lists and patterns load once, outside the count
    small, large = _import_peak(tmp_path, 4), _import_peak(tmp_path, 16)
    # Before: every message held (parsed, then the persona's), some 670 bytes each; now
    # a file of them at a time, a time and a position each, and one conversation.
    per_message = (large - small) / (12 * 500)
    assert per_message < 250, f"{per_message:.0f} bytes of peak memory per message"
