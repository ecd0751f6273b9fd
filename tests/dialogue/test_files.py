from __future__ import annotations

import os
from pathlib import Path

import pytest

from sdtt.dialogue.message import Message, Transcript
from sdtt.dialogue.store import TranscriptWriter, read_transcripts, write_transcripts
from sdtt.errors import InputError
from sdtt.jsonl import JsonlWriter, read_jsonl
from tests.dialogue.strategies import START


def sample(conversation_id: str = "c1") -> Transcript:
    return Transcript(
        id=conversation_id,
        topic="weekend plans",
        messages=[
            Message(side="user", text="any plans?", time=START),
            Message(side="response", text="hiking 🥾\nmaybe", time=START.replace(minute=31)),
        ],
        meta={"model": "mock/chatty"},
    )


def test_transcripts_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write_transcripts(path, [sample("a"), sample("b")])
    assert read_transcripts(path) == [sample("a"), sample("b")]


def test_live_writer_appends_each_message_and_resumes(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    writer = TranscriptWriter(path, Transcript(id="x"))
    writer.add(sample().messages[0])
    # Before any close, the record is on disk already: a crash here would keep it.
    assert read_transcripts(path)[0].messages == sample().messages[:1]
    writer.close()
    resumed = TranscriptWriter(path, Transcript(id="x"))
    resumed.add(sample().messages[1])
    resumed.close()
    assert read_transcripts(path)[0].messages == sample().messages


def test_a_record_cut_off_by_a_crash_is_skipped_then_repaired(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl"
    with JsonlWriter(path) as writer:
        writer.write({"n": 1})
    with path.open("a") as handle:
        handle.write('{"n": 2, "tex')
    assert [record for _, record in read_jsonl(path)] == [{"n": 1}]
    with JsonlWriter(path) as writer:
        writer.write({"n": 3})
    assert [record for _, record in read_jsonl(path)] == [{"n": 1}, {"n": 3}]


def test_a_complete_last_record_without_its_newline_is_kept_by_reader_and_writer(
    tmp_path: Path,
) -> None:
    # What a kill between a record and its newline used to leave behind.
    path = tmp_path / "judgements.jsonl"
    path.write_text('{"n": 1}\n{"n": 2, "text": "' + "x" * 9000 + '"}', encoding="utf-8")
    assert [record["n"] for _, record in read_jsonl(path)] == [1, 2]
    with JsonlWriter(path) as writer:
        writer.write({"n": 3})
    assert [record["n"] for _, record in read_jsonl(path)] == [1, 2, 3]
    assert path.read_bytes().endswith(b'\n{"n":3}\n')


def test_a_fragment_cut_inside_a_character_is_skipped_then_repaired(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl"
    with JsonlWriter(path) as writer:
        writer.write({"n": 1})
    line = '{"n": 2, "text": "hiking 🥾"}'.encode()
    with path.open("ab") as handle:
        handle.write(line[: line.index("🥾".encode()) + 2])
    assert [record for _, record in read_jsonl(path)] == [{"n": 1}]
    with JsonlWriter(path) as writer:
        writer.write({"n": 3})
    assert [record for _, record in read_jsonl(path)] == [{"n": 1}, {"n": 3}]


def test_every_record_reaches_the_file_in_one_system_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sdtt.jsonl as jsonl

    calls: list[bytes] = []
    real_write = os.write

    def counting_write(fd: int, data: bytes) -> int:
        calls.append(bytes(data))
        return real_write(fd, data)

    monkeypatch.setattr(jsonl.os, "write", counting_write)
    path = tmp_path / "big.jsonl"
    records = [{"n": 1, "text": "é" * 50_000}, {"n": 2}]
    with JsonlWriter(path) as writer:
        for record in records:
            writer.write(record)
    assert len(calls) == 2
    assert all(call.endswith(b"\n") and call.count(b"\n") == 1 for call in calls)
    assert [record for _, record in read_jsonl(path)] == records


def test_malformed_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"n": 1}\n\n{"n": 2,,}\n{"n": 3}\n')
    with pytest.raises(InputError, match=r"bad\.jsonl:3: is not valid JSON"):
        list(read_jsonl(path))


def test_non_object_and_bad_encoding(tmp_path: Path) -> None:
    listed = tmp_path / "list.jsonl"
    listed.write_text("[1, 2]\n")
    with pytest.raises(InputError, match=r"list\.jsonl:1: holds a JSON list"):
        list(read_jsonl(listed))
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"a": 1}\n{"a": "caf\xe9"}\n')
    with pytest.raises(InputError, match=r"latin\.jsonl:2: is not valid UTF-8"):
        list(read_jsonl(latin))


def test_bad_message_field_is_located(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(
        '{"type": "transcript", "version": 1, "id": "c"}\n'
        '{"type": "message", "conversation": "c", "side": "user", "text": "hi",'
        ' "time": "2024-03-01T09:30:00"}\n'
    )
    with pytest.raises(InputError, match=r"t\.jsonl:2 field 'time': .*timezone"):
        read_transcripts(path)


def test_message_of_unknown_conversation_and_newer_version(tmp_path: Path) -> None:
    orphan = tmp_path / "o.jsonl"
    orphan.write_text(
        '{"type": "message", "conversation": "zz", "side": "user", "text": "hi",'
        ' "time": "2024-03-01T09:30:00Z"}\n'
    )
    with pytest.raises(InputError, match=r"o\.jsonl:1 field 'conversation'"):
        read_transcripts(orphan)
    newer = tmp_path / "n.jsonl"
    newer.write_text('{"type": "transcript", "version": 99, "id": "c"}\n')
    with pytest.raises(InputError, match="newer sdtt"):
        read_transcripts(newer)
