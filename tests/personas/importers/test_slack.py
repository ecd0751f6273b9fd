"""Slack export zips."""

from __future__ import annotations

import json
import re
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

import sdtt.personas.importers.file_importer as base
from sdtt.errors import InputError
from sdtt.personas.importers.build import PreparedImport
from sdtt.personas.importers.file_importer import FileImporter
from sdtt.personas.importers.options import ImportOptions
from sdtt.personas.importers.slack import SlackImporter
from tests.memory import command_peak

from .helpers import FIXTURES, run_import, texts, zip_folder

SLACK = FIXTURES / "slack" / "export"


@pytest.fixture
def export(tmp_path: Path) -> Path:
    return zip_folder(SLACK, tmp_path / "workspace.zip")


def test_channel_is_required_when_there_are_several(export: Path) -> None:
    with pytest.raises(InputError) as caught:
        run_import("slack", export, "--me", "ann.smith")
    assert caught.value.field == "--channel"
    assert "ann-bob" in str(caught.value) and "general" in str(caught.value)


def test_channel_messages_in_plain_text(export: Path) -> None:
    result = run_import("slack", export, "--me", "annie", "--channel", "#ann-bob", "--no-scrub")
    persona = result.persona
    assert texts(persona, "user")[0] == (
        "hey @ann.smith, party at 10:30? details: https://example.org/party?id=7"
    )
    assert "yes! mail me at ann.smith@example.com" in texts(persona, "response")
    assert "ring me: +44 7700 900123 & say hi to #general" in texts(persona, "user")
    assert "ok Bob, will do <3" in texts(persona, "response")
    assert result.report.dropped == {"system": 1, "bot": 1, "media": 1}
    assert len(persona.conversations) == 2  # two days, far apart


def test_export_inside_a_top_folder(tmp_path: Path) -> None:
    archive = tmp_path / "nested.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        for file in sorted(SLACK.rglob("*.json")):
            handle.write(file, "My Workspace Export/" + file.relative_to(SLACK).as_posix())
    persona = run_import("slack", archive, "--me", "ann.smith", "--channel", "general").persona
    assert len(persona.messages) == 2


def test_not_a_zip(tmp_path: Path) -> None:
    bogus = tmp_path / "export.zip"
    bogus.write_text("users.json")
    with pytest.raises(InputError, match="not a readable zip"):
        run_import("slack", bogus, "--me", "ann")


def test_zip_without_users(tmp_path: Path) -> None:
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr("general/2024-04-13.json", "[]")
    with pytest.raises(InputError, match=r"users\.json"):
        run_import("slack", archive, "--me", "ann")


def test_broken_day_file_is_named(tmp_path: Path) -> None:
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.write(SLACK / "users.json", "users.json")
        handle.writestr(
            "general/2024-04-13.json", '[{"type": "message", "user": "U0ANN", "ts": "soon"}]'
        )
    with pytest.raises(InputError) as caught:
        run_import("slack", archive, "--me", "ann")
    assert "general/2024-04-13.json" in str(caught.value)
    assert caught.value.field == "[0].ts"


def test_a_thread_is_a_conversation_of_its_own(tmp_path: Path) -> None:
    # Slack's export: the first message carries thread_ts = its ts and reply_count, its
    # replies carry thread_ts and parent_user_id; channel messages between them are
    # not part of the thread. One edited reply, a bot, a file without comment.
    export = zip_folder(FIXTURES / "slack" / "threads", tmp_path / "ws.zip")
    result = run_import(
        "slack", export, "--me", "Maya Chen", "--with", "Jordan Lee,Sam Ortiz", "--no-scrub"
    )
    by_text = {
        tuple(m.text for m in conversation.messages)
        for conversation in result.persona.conversations
    }
    assert (
        "who wants to plan the autumn trip?",
        "me! mountains this time",
        "I'll make a list",
    ) in by_text
    assert ("lunch anyone?", "sure, 12:30") in by_text
    assert result.report.dropped == {"bot": 1, "media": 1}


def test_the_zip_is_read_where_it_lies_not_whole_into_memory(
    export: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = ("--me", "annie", "--channel", "#ann-bob")
    monkeypatch.setattr(SlackImporter, "load", FileImporter.load)  # as before: bytes first
    read_whole = run_import("slack", export, *argv)
    monkeypatch.undo()

    def refused(path: Path) -> bytes:
        raise AssertionError(f"{path} was read whole")

    monkeypatch.setattr(base, "read_bytes", refused)
    result = run_import("slack", export, *argv)
    assert result.persona.conversations == read_whole.persona.conversations
    assert result.persona.info.extra == read_whole.persona.info.extra  # the same person


def write_export(folder: Path, days: int, per_day: int, *, threads: bool = False) -> Path:
    """A Slack export zip of one channel, ``days`` day files of ``per_day`` messages:
    two people (one also a display name), a bot, a file without comment, an edit and,
    with ``threads``, replies in threads."""
    folder.mkdir(parents=True, exist_ok=True)
    users = [
        {"id": "U1", "name": "ann.smith", "real_name": "Ann Smith", "profile": {}},
        {"id": "U2", "name": "bob", "real_name": "Bob Jones", "profile": {"display_name": "bj"}},
    ]
    start = 1_700_000_000
    members: dict[str, object] = {"users.json": users, "channels.json": [{"name": "general"}]}
    for day in range(days):
        messages: list[dict[str, object]] = []
        for index in range(per_day):
            number = day * per_day + index
            ts = start + day * 86_400 + index * 45 + (index // 20) * 7_200
            message: dict[str, object] = {
                "type": "message",
                "user": "U1" if number % 3 else "U2",
                "text": f"message {number} for <@U2>, mail ann{number % 7}@example.com",
                "ts": f"{ts}.{number % 1000:06d}",
            }
            if number % 17 == 4:
                message = {"type": "message", "subtype": "bot_message", "bot_id": "B1",
                           "text": "deploy done", "ts": message["ts"]}  # fmt: skip
            elif number % 19 == 5:
                message["text"] = ""
                message["files"] = [{"name": "photo.png"}]
            elif number % 23 == 6:
                message["edited"] = {"user": "U1", "ts": message["ts"]}
            elif threads and number % 11 == 7:
                message["thread_ts"] = messages[-1]["ts"] if messages else message["ts"]
            messages.append(message)
        date = datetime.fromtimestamp(start + day * 86_400, UTC).strftime("%Y-%m-%d")
        members[f"general/{date}.json"] = messages
    archive = folder / f"slack-{days}-{per_day}-{threads}.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for name, value in members.items():
            out.writestr(name, json.dumps(value))
    return archive


@pytest.mark.parametrize("threads", [False, True])
@pytest.mark.parametrize("keep_media", [False, True])
def test_a_channel_streams_to_the_persona_of_the_channel_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threads: bool, keep_media: bool
) -> None:
    export = write_export(tmp_path, days=4, per_day=60, threads=threads)
    options = ImportOptions(me="Ann Smith", name="ann", keep_media=keep_media)
    importer = SlackImporter()
    whole = PreparedImport(importer.run(export, options)).write(tmp_path / "whole.jsonl")
    held_whole: list[Path] = []
    run = importer.run
    monkeypatch.setattr(
        importer, "run", lambda path, options: held_whole.append(path) or run(path, options)
    )
    streamed = importer.prepare(export, options).write(tmp_path / "streamed.jsonl")
    # A thread is a conversation of its own, and streams as the channel's flow does.
    assert not held_whole
    created = re.compile(rb'"created":"[^"]*"')
    assert created.sub(b"", streamed.path.read_bytes()) == created.sub(b"", whole.path.read_bytes())
    assert streamed.report == whole.report
    assert streamed.scrub_mapping == whole.scrub_mapping


@pytest.mark.parametrize("threads", [False, True])
def test_a_long_channel_holds_a_day_file_not_the_messages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threads: bool
) -> None:
    monkeypatch.chdir(tmp_path)  # no ./personas/ to look through

    def peak(days: int) -> int:
        export = write_export(tmp_path, days=days, per_day=400, threads=threads)
        argv = ["persona", "import", "slack", str(export), "--me", "Ann Smith"]
        return command_peak([*argv, "--out", str(tmp_path), "--name", f"ann-{days}"])

    peak(2)  # name lists and patterns load once, outside the count
    small, large = peak(4), peak(16)
    # Before: every message held (parsed, then the persona's); now a day file at a time,
    # a time and a position each, and one conversation.
    per_message = (large - small) / (12 * 400)
    assert per_message < 250, f"{per_message:.0f} bytes of peak memory per message"
