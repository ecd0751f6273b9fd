"""The long answer table both the questionnaire and the rating-task CSV readers use."""

from __future__ import annotations

from pathlib import Path

import pytest

from sdtt.errors import InputError
from sdtt.surveys.answer_files import read_table

COLUMNS = ("judge_id", "question", "answer")


def table(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "answers.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_columns_match_in_any_case_cells_are_stripped_and_blank_rows_skipped(
    tmp_path: Path,
) -> None:
    path = table(tmp_path, " Judge_ID ;QUESTION;answer;Seconds\nj1; p1 ; A ;2.5\n;;;\nj2;p2\n")
    rows = read_table(path, COLUMNS, hint="")
    assert [(r.line, r.judge_id(), r["question"], r["answer"]) for r in rows] == [
        (2, "j1", "p1", "A"),
        (4, "j2", "p2", ""),
    ]
    assert rows[0].number("seconds", what="seconds", field="seconds") == 2.5
    assert rows[1].number("seconds", what="seconds", field="seconds") is None
    assert rows[0].where == f"{path}:2"


def test_every_error_names_the_file_line_and_column(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"answers\.csv:1: lacks the column\(s\) answer\. Do X"):
        read_table(table(tmp_path, "judge_id,question\nj1,p1\n"), COLUMNS, hint="Do X")
    with pytest.raises(InputError, match=r"answers\.csv: is empty"):
        read_table(table(tmp_path, ""), COLUMNS, hint="")
    first, second = read_table(
        table(tmp_path, "judge_id,question,answer,rt\nj1,p1,A,soon\n ,p2,B,\n"), COLUMNS, hint=""
    )
    with pytest.raises(InputError, match=r"answers\.csv:2 field 'seconds': time 'soon' is not"):
        first.number("rt", what="time", field="seconds")
    with pytest.raises(InputError, match=r"answers\.csv:3 field 'judge_id': judge_id is empty"):
        second.judge_id()
