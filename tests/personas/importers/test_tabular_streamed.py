"""CSV and JSONL tables stream: the persona is written as the file is read a second
time, and the file, report and scrub mapping are the ones the import held whole made;
errors are the same errors, naming the same line."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdtt.errors import InputError
from sdtt.personas.importers.build import PreparedImport, WrittenImport
from sdtt.personas.importers.options import ImportOptions, parse_columns
from sdtt.personas.importers.tabular import CsvImporter, JsonlImporter
from tests.memory import command_peak

_CREATED = re.compile(rb'"created":"[^"]*"')
_MAPPING = parse_columns("sender=who,text=said,time=at,conversation=room")
_T0 = datetime(2024, 4, 13, 9, 0, tzinfo=UTC)

_ROW = st.tuples(
    st.sampled_from(["Ann Smith", "Bob Jones", "Cara Diaz"]),
    st.sampled_from(
        ["hi", "", "  ", "mail ann.smith@example.com", "two\nlines", 'a "quote", and; more', "ok"]
    ),
    st.sampled_from([0, 0, 1, 40, 200]),  # minutes after the row before: ties, silences
    st.sampled_from([None, "r1", "r2"]),
)


def _rows(draws: list[tuple[str, str, int, str | None]]) -> list[dict[str, str | None]]:
    minutes, rows = 0, []
    for who, said, step, room in draws:
        minutes += step
        at = (_T0 + timedelta(minutes=minutes)).isoformat()
        rows.append({"who": who, "said": said, "at": at, "room": room})
    return rows


def _write_csv(path: Path, rows: list[dict[str, str | None]], delimiter: str, end: str) -> None:
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, lineterminator=end)
    writer.writerow(["who", "said", "at", "room"])
    writer.writerows([[row["who"], row["said"], row["at"], row["room"] or ""] for row in rows])
    path.write_bytes(out.getvalue().encode("utf-8"))


def _write_jsonl(path: Path, rows: list[dict[str, str | None]], end: str) -> None:
    lines = [json.dumps({k: v for k, v in row.items() if v is not None}) for row in rows]
    path.write_bytes((end.join(lines) + end).encode("utf-8"))


def _write(path: Path, rows: list[dict[str, str | None]]) -> None:
    if path.suffix == ".csv":
        _write_csv(path, rows, ",", "\n")
    else:
        _write_jsonl(path, rows, "\n")


def _assert_same(whole: WrittenImport, streamed: WrittenImport) -> None:
    assert _CREATED.sub(b"", streamed.path.read_bytes()) == _CREATED.sub(
        b"", whole.path.read_bytes()
    )
    assert streamed.report == whole.report
    assert streamed.scrub_mapping == whole.scrub_mapping


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    draws=st.lists(_ROW, min_size=1, max_size=30),
    kind=st.sampled_from(["csv", "jsonl"]),
    delimiter=st.sampled_from([",", ";", "\t"]),
    end=st.sampled_from(["\n", "\r\n"]),
    scrub=st.booleans(),
)
def test_a_table_streams_to_the_persona_of_the_table_read_whole(
    tmp_path_factory: pytest.TempPathFactory,
    draws: list[tuple[str, str, int, str | None]],
    kind: str,
    delimiter: str,
    end: str,
    scrub: bool,
) -> None:
    folder = tmp_path_factory.mktemp("table")
    rows = _rows(draws)
    path = folder / f"chat.{kind}"
    importer: CsvImporter | JsonlImporter
    if kind == "csv":
        _write_csv(path, rows, delimiter, end)
        importer = CsvImporter()
    else:
        _write_jsonl(path, rows, end)
        importer = JsonlImporter()
    options = ImportOptions(me="Ann Smith", name="ann", columns=_MAPPING, scrub=scrub)
    try:
        whole = PreparedImport(importer.run(path, options)).write(folder / "whole.jsonl")
    except InputError as error:  # e.g. Ann never wrote: the streamed import says the same
        with pytest.raises(InputError) as caught:
            importer.prepare(path, options).write(folder / "streamed.jsonl")
        assert str(caught.value) == str(error)
        return
    _assert_same(whole, importer.prepare(path, options).write(folder / "streamed.jsonl"))


def test_a_table_is_read_twice_from_its_file_not_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "chat.csv"
    _write_csv(
        path,
        _rows(
            [
                ("Ann Smith", "hi", 1, "r1"),
                ("Bob Jones", "yo", 1, "r1"),
                ("Ann Smith", "ok", 1, None),
            ]
        ),
        ",",
        "\n",
    )
    importer = CsvImporter()
    monkeypatch.setattr(importer, "run", lambda *_: pytest.fail("read whole"))
    options = ImportOptions(me="Ann Smith", name="ann", columns=_MAPPING)
    assert importer.prepare(path, options).write(tmp_path / "ann.jsonl").conversations == 2


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data.replace(b"2024-04-13T09:03", b"yesterday at 9", 1),
        lambda data: data.replace(b"Bob Jones", b"Bob \xff Jones", 2),
        lambda data: (
            data + (b'{"who": 1' if data.startswith(b"{") else b'"' + b"x" * 200_000 + b'"\n')
        ),
    ],
    ids=["a bad time", "a bad byte", "a broken last row"],
)
def test_a_damaged_table_says_what_the_whole_read_says(
    tmp_path: Path, kind: str, damage: Callable[[bytes], bytes]
) -> None:
    path = tmp_path / f"chat.{kind}"
    rows = _rows([(name, "hi there", 1, "r1") for name in ["Bob Jones", "Ann Smith"] * 3])
    _write(path, rows)
    path.write_bytes(damage(path.read_bytes()))
    importer = CsvImporter() if kind == "csv" else JsonlImporter()
    options = ImportOptions(me="Ann Smith", name="ann", columns=_MAPPING)
    with pytest.raises(InputError) as whole:
        PreparedImport(importer.run(path, options)).write(tmp_path / "whole.jsonl")
    with pytest.raises(InputError) as streamed:
        importer.prepare(path, options).write(tmp_path / "streamed.jsonl")
    assert str(streamed.value) == str(whole.value)
    assert streamed.value.line == whole.value.line is not None
    assert not (tmp_path / "streamed.jsonl").exists()


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_a_long_table_holds_a_few_numbers_a_message_not_the_messages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    monkeypatch.chdir(tmp_path)  # no ./personas/ to look through
    # Text is decoded a block at a time: a small block lets small files show the growth.
    monkeypatch.setattr("sdtt.personas.importers.reading._BLOCK", 16 << 10)

    def peak(count: int) -> int:
        names = ["Ann Smith", "Bob Jones"]
        draws = [
            (names[n % 2], f"message {n} " * 4, 2 + 90 * (n % 40 == 0), None) for n in range(count)
        ]
        path = tmp_path / f"chat-{count}.{kind}"
        rows = _rows(draws)
        _write(path, rows)
        argv = ["persona", "import", kind, str(path), "--me", "Ann Smith", "--no-scrub"]
        columns = "sender=who,text=said,time=at"
        return command_peak(
            [*argv, "--columns", columns, "--out", str(tmp_path), "--name", f"ann-{count}"]
        )

    peak(500)  # what loads once, outside the count
    small, large = peak(4000), peak(16000)
    # Before: the file's text, every parsed message and the persona's held at once
    # (760 bytes a message).
    per_message = (large - small) / 12000
    assert per_message < 250, f"{per_message:.0f} bytes of peak memory per message"
