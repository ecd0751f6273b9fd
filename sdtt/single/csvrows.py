"""Reading the researcher's CSV files of human responses, each problem named by file,
line and column."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Sequence
from pathlib import Path

from sdtt.errors import InputError


def csv_cells(path: str | Path, *, what: str = "file") -> Iterator[tuple[int, list[str]]]:
    """``(line, cells)`` for every row of a CSV file that is not blank, the line being
    where the row ends; an unreadable, non-UTF-8 or malformed file is an
    :class:`InputError` naming the file (and line). ``what`` names the file in messages."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except OSError as error:
        raise InputError(f"cannot read the {what} ({error.strerror}).", path=path) from None
    except UnicodeDecodeError:
        raise InputError(
            f"the {what} is not UTF-8 text.", path=path, hint="Save it as CSV (UTF-8)."
        ) from None
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        for row in reader:
            if any(cell.strip() for cell in row):
                yield reader.line_num, row
    except csv.Error as error:
        raise InputError(
            f"the CSV is malformed ({error}).", path=path, line=reader.line_num
        ) from None


def csv_rows(
    path: str | Path, required: Sequence[str], optional: Sequence[str] = ()
) -> Iterator[tuple[int, dict[str, str]]]:
    """``(line, row)`` for every data row of a CSV file with a header line.

    Header names are matched without regard to case or surrounding spaces; every
    ``required`` column must be there and hold text on every row (an
    :class:`InputError` names the file, line and column otherwise). Values are stripped;
    columns other than ``required`` and ``optional`` are ignored.
    """
    rows = csv_cells(path)
    first = next(rows, None)
    if first is None:
        raise InputError(
            "the file is empty.",
            path=path,
            hint=f"Give a header line: {','.join(required)}.",
        )
    header_line, header = first
    names = [name.strip().lower() for name in header]
    missing = [name for name in required if name not in names]
    if missing:
        if "".join(header).lstrip()[:1] in ("{", "["):
            raise InputError(
                "this is JSON, not a CSV file.",
                path=path,
                line=header_line,
                hint=f"Give a CSV whose header line names {', '.join(required)}.",
            )
        raise InputError(
            f"no {', '.join(repr(m) for m in missing)} column (found {_names(names)}).",
            path=path,
            line=header_line,
            hint=f"The header line must name the columns {', '.join(required)}.",
        )
    wanted = {name: names.index(name) for name in (*required, *optional) if name in names}
    for line, row in rows:
        values = {
            name: row[index].strip() if index < len(row) else "" for name, index in wanted.items()
        }
        for name in required:
            if not values[name]:
                raise InputError(
                    "the cell is empty.",
                    path=path,
                    line=line,
                    field=name,
                    hint="Fill it in or delete the row.",
                )
        yield line, values


def _names(names: Sequence[str], most: int = 8, width: int = 30) -> str:
    """The header's names for a message: a few, each cut short (a file that is not a CSV
    must not flood the terminal)."""
    shown = [repr(n if len(n) <= width else n[: width - 1] + "…") for n in names if n][:most]
    more = len([n for n in names if n]) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "") if shown else "none"
