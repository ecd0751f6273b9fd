"""Long answer tables: a CSV whose header names the columns, then one answer a row.

The long CSV any tool can write (``judge_id,question,answer[,seconds]``), for a
questionnaire and for a rating task, and the CSV the jsPsych rating page saves are read
here: column names are matched without regard to case or surrounding spaces, cells come
back stripped, blank rows are skipped, and every error names the file, line and column.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from sdtt.errors import InputError
from sdtt.questionnaires.readers.common import read_csv_rows


@dataclass(frozen=True)
class Row:
    """One non-blank row of a long table, its cells by (lower-case) column name."""

    path: Path
    line: int
    cells: Mapping[str, str]

    def __getitem__(self, column: str) -> str:
        """The stripped cell of ``column`` ("" when the table or the row lacks it)."""
        return self.cells.get(column, "")

    @property
    def where(self) -> str:
        """``file:line``, as records name where an answer came from."""
        return f"{self.path}:{self.line}"

    def error(
        self, message: str, *, field: str | None = None, hint: str | None = None
    ) -> InputError:
        """An error about this row."""
        return InputError(message, path=self.path, line=self.line, field=field, hint=hint)

    def judge_id(self) -> str:
        """The row's judge id, which must not be empty."""
        if not self["judge_id"]:
            raise self.error("judge_id is empty.", field="judge_id")
        return self["judge_id"]

    def number(self, column: str, *, what: str, field: str) -> float | None:
        """The number in ``column`` (None when the cell is empty); ``what`` and ``field``
        name it in the error for a cell that is not a number."""
        text = self[column]
        if not text:
            return None
        try:
            return float(text)
        except ValueError:
            raise self.error(f"{what} {text!r} is not a number.", field=field) from None


def read_table(
    path: Path, columns: Sequence[str], *, hint: str, delimiters: str = ",;\t"
) -> list[Row]:
    """The rows of the long table at ``path``, which must have ``columns``; ``hint`` says
    what to do when it lacks some."""
    rows = read_csv_rows(path, delimiters=delimiters)
    if not rows:
        raise InputError("is empty.", path=path)
    header = [name.strip().lower() for name in rows[0]]
    missing = [name for name in columns if name not in header]
    if missing:
        raise InputError(f"lacks the column(s) {', '.join(missing)}.", path=path, line=1, hint=hint)
    column = {name: index for index, name in enumerate(header)}
    return [
        Row(
            path,
            line,
            {name: row[index].strip() for name, index in column.items() if index < len(row)},
        )
        for line, row in enumerate(rows[1:], start=2)
        if any(cell.strip() for cell in row)
    ]
