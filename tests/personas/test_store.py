from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sdtt.errors import InputError
from sdtt.personas.store import (
    DEFAULT_PERSONA,
    SHIPPED_DIR,
    find_persona,
    list_personas,
    load_persona,
    locate_persona,
    persona_header,
    save_persona,
)
from tests.personas.synthetic import persona

REPO = Path(__file__).parents[2]


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def write_lines(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


@pytest.fixture
def good(tmp_path: Path) -> Path:
    return save_persona(persona(), tmp_path / "ada.jsonl")


def test_a_saved_persona_reads_back_equal(good: Path) -> None:
    assert load_persona(good) == persona()
    records = lines_of(good)
    assert [r["type"] for r in records] == ["persona", "transcript"] + ["message"] * 4
    assert records[0] == persona_header(persona().info)
    assert not good.with_name("ada.jsonl.partial").exists()


def test_malformed_json_names_file_and_line(good: Path) -> None:
    text = good.read_text().splitlines()
    text[3] = text[3][:-1] + ",,}"
    good.write_text("\n".join(text) + "\n")
    with pytest.raises(InputError, match=r"ada\.jsonl:4: is not valid JSON"):
        load_persona(good)


@pytest.mark.parametrize(
    ("line", "change", "expected"),
    [
        (4, {"time": "2024-03-01T18:00:30"}, r":4 field 'time': timestamp has no timezone"),
        (5, {"side": "bot"}, r":5 field 'side': Input should be 'user' or 'response'"),
        (3, {"conversation": "zz"}, r":3 field 'conversation': .*'zz'.* no 'transcript' record"),
        (1, {"license": None}, r":1 field 'license': Input should be a valid string"),
        (1, {"colour": "red"}, r":1 field 'colour': Extra inputs are not permitted"),
        (1, {"version": 2}, r":1 field 'version': .*version 2, newer than this sdtt"),
        (1, {"version": "one"}, r":1 field 'version': 'one' is not a format version"),
        (1, {"timing": {"seconds_per_char": -1}}, r":1 field 'timing\.seconds_per_char'"),
        (6, {"type": "mesage"}, r":6 field 'type': 'mesage' is not a record type"),
        (2, {"type": "persona"}, r":2 field 'type': a second 'persona' header"),
    ],
)
def test_a_bad_field_names_file_line_and_field(
    good: Path, line: int, change: dict[str, Any], expected: str
) -> None:
    records = lines_of(good)
    records[line - 1].update(change)
    write_lines(good, records)
    with pytest.raises(InputError, match=r"ada\.jsonl" + expected):
        load_persona(good)


def test_missing_name_and_missing_version(good: Path) -> None:
    records = lines_of(good)
    del records[0]["name"]
    write_lines(good, records)
    with pytest.raises(InputError, match=r"ada\.jsonl:1 field 'name': Field required"):
        load_persona(good)
    del records[0]["version"]
    write_lines(good, records)
    with pytest.raises(InputError, match=r":1 field 'version': is missing"):
        load_persona(good)


def test_missing_header(good: Path) -> None:
    write_lines(good, lines_of(good)[1:])
    with pytest.raises(InputError, match=r"ada\.jsonl:1: the first record is a 'transcript'"):
        load_persona(good)


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("\n")
    with pytest.raises(InputError, match=r"empty\.jsonl: is empty"):
        load_persona(path)


def test_a_persona_without_conversations(good: Path) -> None:
    write_lines(good, lines_of(good)[:1])
    with pytest.raises(InputError, match=r"ada\.jsonl: has no conversations"):
        load_persona(good)


def test_a_persona_without_messages_of_its_own(good: Path) -> None:
    records = [r for r in lines_of(good) if r.get("side") != "response"]
    write_lines(good, records)
    with pytest.raises(InputError, match=r"ada\.jsonl: has no messages by the persona"):
        load_persona(good)


def test_names_resolve_locally_then_in_the_shipped_examples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert locate_persona(DEFAULT_PERSONA) == SHIPPED_DIR / f"{DEFAULT_PERSONA}.jsonl"
    local = Path("personas")
    local.mkdir()
    save_persona(persona(DEFAULT_PERSONA), local / f"{DEFAULT_PERSONA}.jsonl")
    save_persona(persona("bob"), local / "file-with-another-name.jsonl")
    assert find_persona(DEFAULT_PERSONA).info.source == "test"
    assert find_persona("bob").name == "bob"
    assert find_persona("personas/file-with-another-name.jsonl").name == "bob"
    with pytest.raises(InputError, match=r"no persona named 'carol'.*Known personas: .*bob"):
        find_persona("carol")
    with pytest.raises(InputError, match=r"nowhere\.jsonl: persona file not found"):
        find_persona("nowhere.jsonl")


def test_listing_hides_shadowed_examples_and_shows_broken_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    local = Path("personas")
    local.mkdir()
    save_persona(persona(DEFAULT_PERSONA), local / f"{DEFAULT_PERSONA}.jsonl")
    (local / "broken.jsonl").write_text("{oops\n")
    entries = {entry.name: entry for entry in list_personas()}
    assert entries[DEFAULT_PERSONA].origin == "local"
    assert entries["broken"].persona is None
    assert entries["broken"].error is not None and "broken.jsonl:1" in entries["broken"].error
    assert len([e for e in entries.values() if e.origin == "shipped"]) == 2


def test_the_examples_ship_once_inside_the_package() -> None:
    shipped = sorted(path.name for path in SHIPPED_DIR.glob("*.jsonl"))
    assert len(shipped) == 3
    assert f"{DEFAULT_PERSONA}.jsonl" in shipped
    # ./personas/ is for the user's own personas: no second copy of an example to drift.
    assert sorted((REPO / "personas").glob("*.jsonl")) == []
    for name in shipped:
        example = load_persona(SHIPPED_DIR / name)
        assert example.info.license == "MIT"
        assert "chitchat-dataset" in example.info.attribution
        assert example.info.timing is not None
        turns = sum(len(c.turns) for c in example.conversations)
        assert 100 <= turns <= 160


def test_saved_records_are_the_record_builders_own_bytes(tmp_path: Path) -> None:
    # The file is written in large chunks with a shortcut for message records; what a
    # reader gets must be exactly the records the dialogue store defines, whatever the text.
    from datetime import UTC, datetime, timedelta, timezone

    from sdtt.dialogue.message import Message, Transcript
    from sdtt.dialogue.store import message_record, transcript_header
    from sdtt.jsonl import encode_record
    from sdtt.personas.persona import Persona, PersonaInfo
    from sdtt.personas.store import persona_header

    odd = 'ab\x01\t\n"\\ \u2028\u202e\u200b\ufeff\x7f é 😀 </script> \u0085'
    zone = timezone(timedelta(hours=5, minutes=30))
    conversations = [
        Transcript(
            id=f'c"{index}é',
            messages=[
                Message(
                    side="response", text=odd * (index % 7), time=datetime(2024, 1, 2, tzinfo=zone)
                ),
                Message(side="user", text="", time=datetime(2024, 1, 2, 3, 4, 5, 9, tzinfo=UTC)),
            ],
            meta={"source": "x", "n": 1.5},
        )
        for index in range(1, 3000)  # several write chunks
    ]
    info = PersonaInfo(name="odd", source="s", license="l", attribution="a")
    persona = Persona(info=info, conversations=conversations)
    path = save_persona(persona, tmp_path / "odd.jsonl")
    expected = [encode_record(persona_header(info))]
    for conversation in conversations:
        expected.append(encode_record(transcript_header(conversation)))
        expected += [
            encode_record(message_record(conversation.id, m)) for m in conversation.messages
        ]
    assert path.read_bytes() == b"".join(expected)
    assert load_persona(path) == persona
