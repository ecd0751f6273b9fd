"""A scrubbed persona holds none of the personal data planted in the fixtures."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sdtt.personas.store import save_persona

from .helpers import FIXTURES, run_import, zip_folder

PLANTED = [
    "ann.smith@example.com",
    "bob.jones@example.com",
    "zoe@example.com",
    "7700 900123",
    "900123",
    "010-4477",
    "example.org",
    "example.net",
    "https://",
    "www.",
    "annsmith99",
    "@ann",
]
NAMES = [
    "Ann",
    "Smith",
    "Bob",
    "Bobby",
    "Jones",
    "Cleo",
    "Park",
    "Dee",
    "Zoë",
    "Zoe",
    "Müller",
    "annie",
]

CASES = [
    ("whatsapp", [FIXTURES / "whatsapp" / "android_eu.txt", "--me", "Ann Smith"]),
    ("whatsapp", [FIXTURES / "whatsapp" / "android_us.txt", "--me", "Ann Smith"]),
    ("whatsapp", [FIXTURES / "whatsapp" / "ios.txt", "--me", "Ann Smith"]),
    ("whatsapp", [FIXTURES / "whatsapp" / "group.txt", "--me", "Ann Smith", "--merge-others"]),
    ("telegram", [FIXTURES / "telegram" / "result.json", "--me", "Ann Smith"]),
    ("discord", [FIXTURES / "discord" / "dm.json", "--me", "annsmith"]),
    ("slack", ["ZIP", "--me", "ann.smith", "--channel", "ann-bob"]),
    ("messenger", [FIXTURES / "messenger" / "inbox" / "bobjones_12345", "--me", "Zoë Müller"]),
    ("messenger", [FIXTURES / "messenger" / "e2ee_export.json", "--me", "Zoë Müller"]),
    (
        "csv",
        [
            FIXTURES / "tabular" / "chat.csv",
            "--me",
            "Ann Smith",
            "--merge-others",
            "--columns",
            "sender=author,text=body,time=ts,conversation=chat",
        ],
    ),
    (
        "jsonl",
        [
            FIXTURES / "tabular" / "chat.jsonl",
            "--me",
            "Ann Smith",
            "--columns",
            "sender=author.name,text=body,time=ts",
            "--time-format",
            "epoch_ms",
        ],
    ),
]


@pytest.mark.parametrize(
    ("fmt", "argv"), CASES, ids=[f"{fmt}-{i}" for i, (fmt, _) in enumerate(CASES)]
)
def test_scrubbed_persona_file_has_no_planted_values(
    tmp_path: Path, fmt: str, argv: list[object]
) -> None:
    if argv[0] == "ZIP":
        argv = [zip_folder(FIXTURES / "slack" / "export", tmp_path / "slack.zip"), *argv[1:]]
    unscrubbed = run_import(fmt, *argv, "--no-scrub").persona
    result = run_import(fmt, *argv)
    file = save_persona(result.persona, tmp_path / "persona.jsonl")
    content = file.read_text(encoding="utf-8")

    raw = "\n".join(m.text for m in unscrubbed.messages)
    planted_here = [value for value in PLANTED if value.lower() in raw.lower()]
    names_here = [name for name in NAMES if re.search(rf"(?<!\w){name}(?!\w)", raw, re.IGNORECASE)]
    assert planted_here or names_here, "the fixture plants nothing: the test would prove nothing"
    for value in planted_here:
        assert value.lower() not in content.lower()
    for name in NAMES:
        assert not re.search(rf"(?<!\w){re.escape(name)}(?!\w)", content, re.IGNORECASE), name
    # Times and years are not mistaken for phone numbers.
    for safe in ("10:30", "2019-2021"):
        if safe in raw:
            assert safe in content
    assert result.persona.info.scrubbed is True
    assert len(result.persona.messages) == len(unscrubbed.messages)
