"""Append-only JSONL files: one record per line, flushed as written.

A crash can only lose the record being written. When a file is reopened for appending
and its last line was cut off mid-write, that fragment is removed first, so the next
record starts on a clean line and the file stays readable.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import jsonlines
from pydantic import BaseModel

from sdtt.errors import InputError
from sdtt.files import loads_json, read_file_bytes

Record = Mapping[str, Any]


def _drop_partial_tail(path: Path) -> None:
    """Remove an unterminated last line left by a crash mid-write."""
    size = path.stat().st_size
    if size == 0:
        return
    with path.open("rb+") as handle:
        handle.seek(size - 1)
        if handle.read(1) == b"\n":
            return
        # Walk back to the previous newline in chunks; the fragment is at most one record.
        position = size
        chunk = 65536
        while position > 0:
            start = max(0, position - chunk)
            handle.seek(start)
            data = handle.read(position - start)
            cut = data.rfind(b"\n")
            if cut != -1:
                handle.truncate(start + cut + 1)
                return
            position = start
        handle.truncate(0)


class JsonlWriter:
    """Appends records to a JSONL file, flushing (and optionally fsyncing) each one."""

    def __init__(self, path: str | Path, *, fsync: bool = False) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists():
            _drop_partial_tail(self.path)
        self._handle = self.path.open("a", encoding="utf-8", newline="\n")
        self._writer = jsonlines.Writer(self._handle, flush=True, compact=True)
        self._fsync = fsync

    def write(self, record: Record | BaseModel) -> None:
        """Append one record and make sure it reached the operating system."""
        if isinstance(record, BaseModel):
            record = record.model_dump(mode="json")
        self._writer.write(record)
        if self._fsync:
            os.fsync(self._handle.fileno())

    def close(self) -> None:
        """Close the file (safe to call twice)."""
        if not self._handle.closed:
            self._writer.close()
            self._handle.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def read_jsonl(
    path: str | Path,
    *,
    allow_partial_tail: bool = True,
    on_partial_tail: Callable[[int], None] | None = None,
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, record)`` for each record of a JSONL file.

    Blank lines are skipped. A malformed line raises :class:`InputError` naming the file
    and line, except an unterminated last line when ``allow_partial_tail`` is set: that is
    the record a crash interrupted, and it is skipped (after calling ``on_partial_tail``
    with its line number, so a reader can warn that the file may be incomplete).
    """
    path = Path(path)
    raw = read_file_bytes(path)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        bad_line = raw[: error.start].count(b"\n") + 1
        raise InputError(
            "is not valid UTF-8 text.",
            path=path,
            line=bad_line,
            hint="Re-save the file as UTF-8.",
        ) from None
    lines = text.split("\n")
    ends_cleanly = text.endswith("\n") or text == ""
    for index, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = loads_json(line)
        except json.JSONDecodeError as error:
            is_tail = index == len(lines) and not ends_cleanly
            if is_tail and allow_partial_tail:
                if on_partial_tail is not None:
                    on_partial_tail(index)
                return
            raise InputError(
                f"is not valid JSON ({error.msg} at column {error.colno}).",
                path=path,
                line=index,
                hint="Each line must be one JSON object.",
            ) from None
        if not isinstance(record, dict):
            raise InputError(
                f"holds a JSON {type(record).__name__}, not an object.",
                path=path,
                line=index,
                hint="Each line must be one JSON object.",
            )
        yield index, record
