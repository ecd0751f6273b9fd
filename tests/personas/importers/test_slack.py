"""Slack export zips."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

import sdtt.personas.importers.base as base
from sdtt.errors import InputError
from sdtt.personas.importers.base import FileImporter
from sdtt.personas.importers.slack import SlackImporter

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
