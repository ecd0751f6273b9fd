"""jsPsych answer files joined with ``cat a.csv b.csv > all.csv`` import as one."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from sdtt.errors import InputError
from sdtt.questionnaires.answers import import_responses
from tests.questionnaires.helpers import fixture_study

FIXTURE = Path(__file__).parent / "fixtures" / "jspsych-data.csv"


def _per_judge(order: list[str] | None = None) -> list[str]:
    """The fixture cut into one file per judge, as each judge's browser saves it."""
    rows = list(csv.reader(io.StringIO(FIXTURE.read_text(encoding="utf-8"))))
    header, body = rows[0], rows[1:]
    judge = header.index("judge_id")
    files = []
    for judge_id in dict.fromkeys(row[judge] for row in body):
        columns = order or header
        out = io.StringIO()
        writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
        writer.writerow(columns)
        for row in body:
            if row[judge] == judge_id:
                writer.writerow([row[header.index(name)] for name in columns])
        files.append(out.getvalue())
    return files


def _import(path: Path) -> list[tuple[str, str, str | None]]:
    study = fixture_study()
    result = import_responses([path], "jspsych", study.questionnaire, study.key)
    return sorted((j.judge_id, j.pair_id, j.choice) for j in result.judgements)


def test_concatenated_files_import_like_one(tmp_path: Path) -> None:
    joined = tmp_path / "all.csv"
    joined.write_text("".join(_per_judge()), encoding="utf-8")
    assert _import(joined) == _import(FIXTURE)


def test_parts_with_their_columns_in_another_order(tmp_path: Path) -> None:
    first = _per_judge()[0]
    header = next(csv.reader(io.StringIO(first)))
    shuffled = _per_judge(list(reversed(header)))
    joined = tmp_path / "all.csv"
    joined.write_text(first + "".join(shuffled[1:]), encoding="utf-8")
    assert _import(joined) == _import(FIXTURE)


def test_a_part_of_another_study_is_named_with_its_line(tmp_path: Path) -> None:
    first, second, *_ = _per_judge()
    other = second.replace('"qrp597d"', '"qother1"')
    joined = tmp_path / "all.csv"
    joined.write_text(first + other, encoding="utf-8")
    header_line = first.count("\n") + 1
    with pytest.raises(InputError) as caught:
        _import(joined)
    message = str(caught.value)
    assert "questionnaire 'qother1'" in message and "questionnaire 'form'" not in message
    assert f"all.csv:{header_line + 1}" in message or f"line {header_line + 1}" in message
