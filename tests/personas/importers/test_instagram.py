"""Instagram's JSON export: Messenger's shape under another name."""

from __future__ import annotations

from datetime import UTC, datetime

from .helpers import FIXTURES, find, run_import, texts

CHAT = FIXTURES / "instagram" / "inbox" / "jordanlee_987654321"


def test_instagram_inbox_folder() -> None:
    result = run_import("instagram", CHAT, "--me", "Maya Chen", "--no-scrub")
    persona = result.persona
    # UTF-8 written as Latin-1 escapes is read back: accents and emoji.
    assert texts(persona, "response") == ["hey!", "see you at the café 😂"]
    assert texts(persona, "user") == ["où es-tu? 🏔️"]
    # Newest first in the file, oldest first in the persona.
    assert find(persona, "hey!").time == datetime(2024, 5, 4, 10, 55, tzinfo=UTC)
    # "Liked a message" is a reaction; the shared reel and the photo are media.
    assert result.report.dropped == {"system": 1, "media": 2}
    # The repair is reported (text changed on the way in): café, où, "Lée sent...".
    assert result.report.detected["text encoding"].startswith("3 messages' text")


def test_the_sender_name_with_an_accent_is_found() -> None:
    result = run_import("instagram", CHAT, "--me", "Jordan Lée", "--no-scrub", "--keep-media")
    assert texts(result.persona, "response") == ["où es-tu? 🏔️", "[media]"]
