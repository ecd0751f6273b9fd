"""The shared build path and the ``sdtt persona import`` command end to end."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from sdtt.cli import main
from sdtt.errors import InputError
from sdtt.personas.importers.options import parse_gap, parse_timezone
from sdtt.personas.importers.writing import write_scrub_report
from sdtt.personas.store import load_persona
from sdtt.personas.timing import TimingProfile

from .helpers import FIXTURES, run_import

EU = FIXTURES / "whatsapp" / "android_eu.txt"


def test_scrubbing_is_on_by_default_and_recorded() -> None:
    scrubbed = run_import("whatsapp", EU, "--me", "Ann Smith").persona
    assert scrubbed.info.scrubbed is True
    assert scrubbed.info.extra["scrub"]["replacements"]["EMAIL"] == 1
    # The default name must not carry the person's name.
    assert scrubbed.name.startswith("whatsapp-") and "ann" not in scrubbed.name
    plain = run_import("whatsapp", EU, "--me", "Ann Smith", "--no-scrub").persona
    assert plain.info.scrubbed is False
    assert "scrub" not in plain.info.extra
    assert plain.name == "ann-smith"


def test_scrub_names_and_placeholders_are_consistent() -> None:
    persona = run_import("whatsapp", EU, "--me", "Ann Smith", "--scrub-names", "saturday").persona
    texts = [m.text for m in persona.messages]
    assert texts[0] == "Hey [NAME_1]! are you coming on [NAME_2]?"
    assert "omg [NAME_3] those are great. say thanks to the [NAME_3] family" in texts


def test_timing_profile_is_stored() -> None:
    persona = run_import("whatsapp", EU, "--me", "Ann Smith").persona
    assert persona.info.timing is not None
    profile = TimingProfile.model_validate(persona.info.timing)
    assert any("minute resolution" in reason for reason in profile.fallback)


def test_gap_option_changes_the_split() -> None:
    one = run_import("whatsapp", EU, "--me", "Ann Smith", "--gap", "2d").persona
    many = run_import("whatsapp", EU, "--me", "Ann Smith", "--gap", "90s").persona
    assert len(one.conversations) == 1
    assert len(many.conversations) > 2
    assert all(
        any(m.side == "response" for m in conversation.messages)
        for conversation in many.conversations
    )
    assert many.info.extra["dropped"]["conversations without the persona"] >= 1


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("45s", timedelta(seconds=45)),
        ("30", timedelta(minutes=30)),
        ("1.5h", timedelta(minutes=90)),
    ],
)
def test_parse_gap(text: str, expected: timedelta) -> None:
    assert parse_gap(text) == expected


@pytest.mark.parametrize("text", ["", "0", "-5m", "soon", "5 parsecs"])
def test_parse_gap_errors(text: str) -> None:
    with pytest.raises(InputError, match="--gap"):
        parse_gap(text)


def test_parse_timezone() -> None:
    assert str(parse_timezone("Europe/Berlin")) == "Europe/Berlin"
    with pytest.raises(InputError, match="IANA"):
        parse_timezone("Nowhere/City")


def test_missing_file() -> None:
    with pytest.raises(InputError, match="file not found"):
        run_import("whatsapp", FIXTURES / "nope.txt", "--me", "Ann Smith")


def test_cli_import_writes_a_loadable_persona_and_prints_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "persona", "import", "whatsapp", str(FIXTURES / "whatsapp" / "ambiguous_dmy.txt"),
            "--me", "Ann Smith", "--out", str(tmp_path), "--name", "ann-test",
            "--scrub-report", str(tmp_path / "map.json"),
        ]
    )  # fmt: skip
    assert code == 0
    persona = load_persona(tmp_path / "ann-test.jsonl")
    assert persona.info.scrubbed and persona.info.timing is not None
    err = capsys.readouterr().err
    assert "warning:" in err and "--date-format" in err  # the guess is never silent
    assert "scrubbed:" in err
    mapping = json.loads((tmp_path / "map.json").read_text(encoding="utf-8"))
    assert "Keep it private" in mapping["warning"]

    assert main(["persona", "show", str(tmp_path / "ann-test.jsonl"), "--last", "0"]) == 0
    out = capsys.readouterr().out
    assert "Timing profile" in out and "typing speed" in out


def test_cli_error_is_one_paragraph(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["persona", "import", "whatsapp", str(EU), "--me", "Carol", "--out", str(tmp_path)])
    assert code == 2
    err = capsys.readouterr().err
    assert "nobody called 'Carol'" in err and "Traceback" not in err


def test_scrub_report_needs_scrubbing(tmp_path: Path) -> None:
    result = run_import("whatsapp", EU, "--me", "Ann Smith", "--no-scrub")
    with pytest.raises(InputError, match="--scrub-report"):
        write_scrub_report(result, tmp_path / "m")


def test_lower_case_first_names_by_the_persona_are_flagged_for_review(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chat = tmp_path / "chat.txt"
    chat.write_text(
        "13.04.24, 09:05 - Bob Jones: did you see emma?\n"
        "13.04.24, 09:06 - Ann Smith: yes, emma and oliver said hi\n"
        "13.04.24, 09:07 - Ann Smith: she was born on 12/03/1990 btw\n",
        encoding="utf-8",
    )
    code = main(
        [
            "persona", "import", "whatsapp", str(chat), "--me", "Ann Smith",
            "--out", str(tmp_path), "--name", "ann", "--scrub-report", str(tmp_path / "map.json"),
        ]
    )  # fmt: skip
    assert code == 0
    err = " ".join(capsys.readouterr().err.split())  # the report is wrapped to the terminal
    # Counted in the printed report (only Ann's own messages), never named there.
    assert "2 lower-case words in the persona's messages are first names" in err
    assert "emma" not in err and "oliver" not in err
    assert "1 date of birth" in err
    review = json.loads((tmp_path / "map.json").read_text(encoding="utf-8"))
    assert review["lower_case_first_names_to_review"] == {"emma": 1, "oliver": 1}
    texts = [m.text for m in load_persona(tmp_path / "ann.jsonl").messages]
    assert "she was born on [DOB_1] btw" in texts
