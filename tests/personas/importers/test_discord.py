"""DiscordChatExporter JSON exports."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sdtt.errors import InputError

from .helpers import FIXTURES, find, run_import, texts

DISCORD = FIXTURES / "discord" / "dm.json"


def test_dm_export() -> None:
    result = run_import("discord", DISCORD, "--me", "annsmith", "--no-scrub")
    persona = result.persona
    assert texts(persona, "response") == [
        "yes! mail me at ann.smith@example.com",
        "ok Bob! pics at https://example.org/party?id=7",
        "and follow @annsmith99",
    ]
    # The raw mention is written with the person's name.
    assert "hey @Ann Smith, party at 10:30?" in texts(persona, "user")
    assert find(persona, "and follow @annsmith99").time == datetime(
        2024, 4, 13, 9, 9, 5, tzinfo=UTC
    )
    assert result.report.dropped == {"system": 2, "bot": 1, "media": 1}


def test_me_by_nickname_and_zone_conversion() -> None:
    persona = run_import(
        "discord", DISCORD, "--me", "Ann Smith", "--no-scrub", "--timezone", "Europe/Berlin"
    ).persona
    first = find(persona, "yes! mail me at ann.smith@example.com")
    assert first.time.isoformat() == "2024-04-13T11:05:40+02:00"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda d: d["messages"][1].pop("author"), "messages[1].author"),
        (lambda d: d["messages"][1]["author"].update(name=None), "messages[1].author.name"),
        (lambda d: d["messages"][2].update(timestamp="13/04/2024"), "messages[2].timestamp"),
        (lambda d: d["messages"][2].update(mentions="x"), "messages[2].mentions"),
    ],
)
def test_wrong_shapes_name_the_json_path(tmp_path: Path, change: object, field: str) -> None:
    document = json.loads(DISCORD.read_text(encoding="utf-8"))
    change(document)  # type: ignore[operator]
    target = tmp_path / "dm.json"
    target.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        run_import("discord", target, "--me", "annsmith")
    assert caught.value.field == field


def test_other_json_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "x.json"
    target.write_text("[1, 2, 3]")
    with pytest.raises(InputError, match="should be an object"):
        run_import("discord", target, "--me", "a")


def test_current_schema_guild_export() -> None:
    # DiscordChatExporter's current JSON: author objects, offsets in timestamps,
    # components/inlineEmojis, replies with a reference, a forward, a slash-command
    # answer by a bot, a thread notice and a pin.
    result = run_import(
        "discord",
        FIXTURES / "discord" / "guild_current.json",
        "--me",
        "Maya Chen",
        "--timezone",
        "Europe/Berlin",
        "--no-scrub",
    )
    persona = result.persona
    assert texts(persona, "response") == [
        "who's driving saturday?",
        "great, see you at 7 :wave:",
    ]
    assert texts(persona, "user") == ["I can, 4 seats"]  # the reply, edited
    driving = find(persona, "who's driving saturday?")
    assert driving.time.isoformat() == "2024-05-04T09:01:00+02:00"
    assert all("Trail closed" not in text and "rolled" not in text for text in texts(persona))
    assert result.report.dropped == {"system": 2, "forwarded": 1, "bot": 1, "media": 1}
