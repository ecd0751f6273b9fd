"""WhatsApp .txt exports: Android and iOS layouts, date orders, clocks, odd lines."""

from __future__ import annotations

import zipfile
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from sdtt.errors import InputError
from sdtt.personas.importers.whatsapp import detect_date_order, parse_date_format

from .helpers import FIXTURES, find, run_import, texts

WA = FIXTURES / "whatsapp"


def test_android_eu_export_multiline_media_and_deleted() -> None:
    result = run_import("whatsapp", WA / "android_eu.txt", "--me", "Ann Smith", "--no-scrub")
    persona = result.persona
    assert result.report.warnings == []
    assert find(persona, "yes!!").time == datetime(2024, 4, 13, 9, 6, tzinfo=UTC)
    assert find(persona, "yes!!").side == "response"
    # A message continues over the lines without a header.
    assert "ok cool\nsee you there\nbring snacks 🍿" in texts(persona, "response")
    # The edit note is not part of what the person wrote.
    assert "call me on +44 7700 900123 if you get lost" in texts(persona)
    # A photo with a caption keeps the caption; without one it is left out.
    assert "the view from here" in texts(persona, "user")
    assert not any("omitted" in text or "deleted" in text for text in texts(persona))
    assert result.report.dropped["system"] == 1  # the encryption notice
    assert result.report.dropped["deleted"] == 1
    assert result.report.dropped["media"] == 1
    assert [len(c.messages) for c in persona.conversations] == [7, 3]  # split at the night


def test_android_us_twelve_hour_clock_with_narrow_spaces() -> None:
    persona = run_import(
        "whatsapp", WA / "android_us.txt", "--me", "Ann Smith", "--no-scrub"
    ).persona
    assert find(persona, "hiii").time == datetime(2024, 4, 13, 21, 6, tzinfo=UTC)
    assert find(persona, "nothing, call me at (555) 010-4477").time.hour == 23
    assert find(persona, "going to bed").time == datetime(2024, 4, 14, 0, 15, tzinfo=UTC)
    assert "You deleted this message" not in texts(persona)


def test_ios_export_marks_seconds_and_blank_lines() -> None:
    result = run_import(
        "whatsapp", WA / "ios.txt", "--me", "ann smith", "--no-scrub", "--timezone", "Europe/Berlin"
    )
    persona = result.persona
    heyyy = find(persona, "heyyy")
    # Wall-clock time as exported, labelled with the zone (CEST in April).
    assert heyyy.time.replace(tzinfo=None) == datetime(2024, 4, 13, 9, 5, 40)
    assert heyyy.time.utcoffset() == timedelta(hours=2)
    assert "first line\nsecond line\n\nfourth line" in texts(persona)
    assert result.report.dropped["system"] == 2  # encryption notice and missed call
    assert result.report.dropped["media"] == 2  # image omitted, <attached: ...>
    assert result.report.dropped["deleted"] == 1
    assert all("\u200e" not in text for text in texts(persona))


def test_iso_dates_are_year_first_without_warning() -> None:
    result = run_import("whatsapp", WA / "iso.txt", "--me", "Ann Smith", "--no-scrub")
    assert result.report.warnings == []
    assert find(result.persona, "hey").time == datetime(2024, 4, 3, 9, 6, tzinfo=UTC)


def test_ambiguous_day_month_24_hour_reads_day_first_and_warns() -> None:
    result = run_import("whatsapp", WA / "ambiguous_dmy.txt", "--me", "Ann Smith", "--no-scrub")
    assert find(result.persona, "hey").time.date() == datetime(2024, 4, 3).date()
    [warning] = result.report.warnings
    assert "day/month/year" in warning
    assert "--date-format MM/DD/YY" in warning
    # The user's answer settles it, and nothing is guessed any more.
    again = run_import(
        "whatsapp",
        WA / "ambiguous_dmy.txt",
        "--me",
        "Ann Smith",
        "--no-scrub",
        "--date-format",
        "MM.DD.YY",
    )
    assert again.report.warnings == []
    assert find(again.persona, "hey").time.date() == datetime(2024, 3, 4).date()


def test_ambiguous_month_day_12_hour_reads_month_first_and_warns() -> None:
    result = run_import("whatsapp", WA / "ambiguous_mdy.txt", "--me", "Ann Smith", "--no-scrub")
    assert find(result.persona, "hey").time == datetime(2024, 4, 3, 21, 6, tzinfo=UTC)
    [warning] = result.report.warnings
    assert "month/day/year" in warning and "--date-format DD/MM/YY" in warning
    again = run_import(
        "whatsapp",
        WA / "ambiguous_mdy.txt",
        "--me",
        "Ann Smith",
        "--no-scrub",
        "--date-format",
        "%d/%m/%y",
    )
    assert find(again.persona, "hey").time.date() == datetime(2024, 3, 4).date()


def test_time_order_decides_an_ambiguous_date_order() -> None:
    result = run_import("whatsapp", WA / "chronology.txt", "--me", "Ann Smith", "--no-scrub")
    assert find(result.persona, "already").time.date() == datetime(2024, 5, 1).date()
    [warning] = result.report.warnings
    assert "time order" in warning


def test_detect_date_order_rules() -> None:
    assert detect_date_order([("13", "04", "24")], us_clock=False) == ("dmy", None)
    assert detect_date_order([("4", "13", "24")], us_clock=True) == ("mdy", None)
    assert detect_date_order([("2024", "04", "03")], us_clock=False) == ("ymd", None)
    order, warning = detect_date_order([("03", "04", "24")], us_clock=False)
    assert order == "dmy" and warning is not None
    assert detect_date_order([("13", "04", "24"), ("4", "13", "24")], us_clock=False) == (
        None,
        None,
    )


def test_date_format_spellings() -> None:
    assert parse_date_format("DD/MM/YYYY") == "dmy"
    assert parse_date_format("%m/%d/%y") == "mdy"
    assert parse_date_format("yyyy-mm-dd") == "ymd"
    with pytest.raises(InputError, match="--date-format"):
        parse_date_format("DD/MM")


def test_group_chat_system_lines_and_tilde_names() -> None:
    result = run_import(
        "whatsapp", WA / "group.txt", "--me", "Ann Smith", "--no-scrub", "--merge-others"
    )
    persona = result.persona
    # "created group "Trip: Rome"" and the subject change hold ": " but are not messages.
    assert result.report.dropped["system"] == 3
    assert "hello all" in texts(persona, "user")
    assert result.persona.info.extra["participants"] == 4
    assert result.persona.info.extra["group"] is True


def test_group_chat_requires_a_choice(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        run_import("whatsapp", WA / "group.txt", "--me", "Ann Smith")
    message = str(caught.value)
    assert "group chat" in message and "--with" in message and "--merge-others" in message
    assert "'Dee'" in message  # the "~ " WhatsApp puts before unknown numbers is gone
    only_cleo = run_import(
        "whatsapp", WA / "group.txt", "--me", "Ann Smith", "--with", "cleo park", "--no-scrub"
    )
    assert texts(only_cleo.persona, "user") == ["me too!", "sure"]
    assert only_cleo.report.dropped["other participants"] == 2


def test_zip_exported_with_media(tmp_path: Path) -> None:
    archive = tmp_path / "WhatsApp Chat - Bob.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.write(WA / "android_eu.txt", "_chat.txt")
        handle.writestr("IMG-20240413-WA0003.jpg", b"\xff\xd8 not really a photo")
    from_zip = run_import("whatsapp", archive, "--me", "Ann Smith", "--no-scrub").persona
    from_txt = run_import(
        "whatsapp", WA / "android_eu.txt", "--me", "Ann Smith", "--no-scrub"
    ).persona
    assert from_zip.messages == from_txt.messages


def test_keep_media_keeps_a_marker() -> None:
    result = run_import(
        "whatsapp", WA / "ios.txt", "--me", "Ann Smith", "--no-scrub", "--keep-media"
    )
    assert texts(result.persona, "response").count("[media]") == 2
    assert "media" not in result.report.dropped


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"hello, this is not a chat\n", "no WhatsApp message lines"),
        (b"13/13/24, 09:05 - Ann: hi\n", "no date order reads every date"),
        (b"03/04/24, 25:05 - Ann: hi\n", "not a time of day"),
        (b"03/04/24, 13:05 PM - Ann: hi\n", "not a 12-hour time"),
        (b"03/04/24, 09:05 - Ann: hi\n03/04/24, 09:06 - Bob: caf\xe9\n", "not UTF-8"),
    ],
)
def test_malformed_files_name_the_problem(tmp_path: Path, content: bytes, expected: str) -> None:
    chat = tmp_path / "chat.txt"
    chat.write_bytes(content)
    with pytest.raises(InputError, match=expected) as caught:
        run_import("whatsapp", chat, "--me", "Ann Smith")
    assert str(chat) in str(caught.value)


def test_bad_line_is_named(tmp_path: Path) -> None:
    chat = tmp_path / "chat.txt"
    chat.write_text(
        "03/04/24, 09:05 - Ann: hi\n03/04/24, 09:06 - Bob: yo\n04/04/24, 61:00 - Bob: ?\n"
    )
    with pytest.raises(InputError) as caught:
        run_import("whatsapp", chat, "--me", "Ann Smith")
    assert caught.value.line == 3


def test_unknown_me_lists_participants() -> None:
    with pytest.raises(InputError) as caught:
        run_import("whatsapp", WA / "android_eu.txt", "--me", "Carol")
    assert "'Ann Smith' (6)" in str(caught.value) and "'Bob Jones'" in str(caught.value)


def test_timezone_must_exist() -> None:
    with pytest.raises(InputError, match="--timezone"):
        run_import("whatsapp", WA / "iso.txt", "--me", "Ann Smith", "--timezone", "Mars/Olympus")


def test_offset_zone_is_kept() -> None:
    persona = run_import(
        "whatsapp",
        WA / "iso.txt",
        "--me",
        "Ann Smith",
        "--no-scrub",
        "--timezone",
        "America/New_York",
    ).persona
    assert find(persona, "hey").time.utcoffset() == timezone(timedelta(hours=-4)).utcoffset(None)


def test_spanish_android_p_m_clock_reads_day_first_and_names_the_flag() -> None:
    # Android in Spanish: "1/12/23, 7:04 p. m." with U+202F before and U+00A0 inside the
    # marker; no day is above 12, and Spanish writes the day first.
    result = run_import("whatsapp", WA / "android_es.txt", "--me", "Maya Chen", "--no-scrub")
    persona = result.persona
    assert find(persona, "hola! ya saliste del trabajo?").time == datetime(
        2023, 12, 1, 19, 4, tzinfo=UTC
    )
    assert find(persona, "buenas noches").time == datetime(2023, 12, 2, 0, 3, tzinfo=UTC)
    assert find(persona, "dulces sueños").side == "response"
    assert find(persona, "buenos días").time == datetime(2023, 12, 2, 9, 15, tzinfo=UTC)
    [warning] = result.report.warnings
    assert "read them as day/month/year" in warning
    assert "--date-format MM/DD/YY" in warning
    assert result.report.dropped == {"system": 1, "deleted": 1, "media": 1}


def test_german_ios_nachm_clock_and_image_placeholder() -> None:
    result = run_import("whatsapp", WA / "ios_de.txt", "--me", "Maya Chen", "--no-scrub")
    persona = result.persona
    assert find(persona, "na, wie war der Tag?").time == datetime(
        2023, 12, 3, 19, 4, 40, tzinfo=UTC
    )
    assert find(persona, "guten Morgen").time == datetime(2023, 12, 4, 8, 30, tzinfo=UTC)
    assert result.report.dropped == {"system": 1, "media": 1}
    assert all("weggelassen" not in text for text in texts(persona))


def test_french_android_time_after_a() -> None:
    result = run_import("whatsapp", WA / "android_fr.txt", "--me", "Maya Chen", "--no-scrub")
    assert find(result.persona, "parfait").time == datetime(2023, 12, 14, 19, 11, tzinfo=UTC)
    assert result.report.warnings == []  # day 14: only day/month/year fits


def test_the_whole_file_decides_the_date_order_not_its_first_lines() -> None:
    # 01/02 and 05/02 read either way; 14/02 further down settles day first, silently.
    result = run_import("whatsapp", WA / "ios_late_decider.txt", "--me", "Maya Chen", "--no-scrub")
    assert result.report.warnings == []
    assert find(result.persona, "first day of the month").time.date() == datetime(2024, 2, 1).date()


def test_lowercase_pm_is_not_a_us_clock() -> None:
    # English (India, UK) writes "pm" in lower case and the day first.
    assert detect_date_order([("1", "12", "23")], us_clock=False)[0] == "dmy"
    assert detect_date_order([("1", "12", "23")], us_clock=True)[0] == "mdy"


def test_portuguese_android_without_comma_and_its_placeholders() -> None:
    result = run_import("whatsapp", WA / "android_pt.txt", "--me", "Maya Chen", "--no-scrub")
    assert find(result.persona, "bom dia!").time == datetime(2023, 12, 13, 8, 1, tzinfo=UTC)
    assert result.report.warnings == []  # day 13 further down settles the order
    assert result.report.dropped["media"] == 1 and result.report.dropped["deleted"] == 1


def test_ios_us_twelve_hour_clock_with_narrow_spaces() -> None:
    result = run_import("whatsapp", WA / "ios_us.txt", "--me", "Maya Chen", "--no-scrub")
    persona = result.persona
    assert find(persona, "almost midnight").time == datetime(2024, 4, 13, 23, 59, 59, tzinfo=UTC)
    assert find(persona, "happy sunday").time == datetime(2024, 4, 14, 0, 1, tzinfo=UTC)
    assert result.report.warnings == []  # day 13 and 14: month first
    assert result.report.dropped["deleted"] == 1 and result.report.dropped["media"] == 1
