"""Append-only JSONL files: one record per line, each written by a single system call.

Every record is encoded with its newline first and handed to the operating system in one
``write`` on a file opened for appending, so a killed process leaves either the whole
record or nothing of it, and two writers never interleave within a line.

Reading and repairing agree on the last line of a file that does not end with a newline:
when it is a complete JSON object (a record whose newline never got written) it is kept,
and a writer reopening the file adds the missing newline before appending; when it does
not parse (a record cut off by a crash or a full disk) it is skipped, and the writer
removes it.

Line ends written by other tools are read too: ``\r\n`` and a lone ``\r`` (old Mac
editors, some spreadsheet exports) end a line like ``\n`` does. JSON escapes both
characters inside strings, so a raw one can only be a line end.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import suppress
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel

from sdtt.closing import Closing
from sdtt.errors import InputError, naming
from sdtt.files import MAX_DEPTH, TextRepairs, loads_json, open_input, what_file_is

Record = Mapping[str, Any]

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def encode_record(record: Record | BaseModel) -> bytes:
    """One record as the bytes of its JSONL line, newline included."""
    if isinstance(record, BaseModel):
        # Pydantic's own encoder writes the same compact JSON as the one below (UTF-8,
        # no spaces, fields in order) in a third of the time, which counts when a chain
        # writes several records per model call.
        return (record.model_dump_json() + "\n").encode("utf-8")
    return (_ENCODER.encode(record) + "\n").encode("utf-8")


def is_complete_line(line: bytes) -> bool:
    """True when ``line`` (without newline) is a whole JSON object, i.e. a record to keep."""
    try:
        return isinstance(json.loads(line.decode("utf-8-sig")), dict)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False


_LINE_ENDS = (b"\n", b"\r")
_BOM = b"\xef\xbb\xbf"
# Digits as zeros: a run of 19 is then a plain substring search (a regex takes 10x longer).
_DIGITS_AS_ZEROS = bytes.maketrans(b"123456789", b"000000000")
_LONG_DIGITS = b"0" * 19


def _after_last_line_end(data: bytes) -> int:
    """Offset just after the last line end (``\n`` or ``\r``) of ``data`` (0 if none)."""
    return max(data.rfind(b"\n"), data.rfind(b"\r")) + 1


def _last_line_start(fd: int, size: int) -> int:
    """Offset of the first byte after the last line end of an open file (0 if none)."""
    position = size
    chunk = 65536
    while position > 0:
        start = max(0, position - chunk)
        cut = _after_last_line_end(os.pread(fd, position - start, start))
        if cut:
            return start + cut
        position = start
    return 0


def repair_tail(path: Path) -> None:
    """Make ``path`` end on a line boundary before anything is appended to it.

    A complete last record that lacks only its newline gets the newline; a fragment
    (unparseable last line) is removed. Either way :func:`read_jsonl` read the file the
    same way before the repair.
    """
    size = path.stat().st_size
    if size == 0:
        return
    with path.open("rb+") as handle:
        handle.seek(size - 1)
        if handle.read(1) in _LINE_ENDS:
            return
        start = _last_line_start(handle.fileno(), size)
        handle.seek(start)
        if is_complete_line(handle.read(size - start)):
            handle.seek(size)
            handle.write(b"\n")
        else:
            handle.truncate(start)


def write_all(fd: int, data: bytes) -> None:
    """Write ``data`` to ``fd``: one system call unless the kernel takes less at once."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


class JsonlWriter(Closing):
    """Appends records to a JSONL file, one system call per record (optionally fsynced)."""

    def __init__(self, path: str | Path, *, fsync: bool = False) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self.path.exists():
                repair_tail(self.path)
            # Readable too, so a failed write can find the last line end it cuts back to.
            flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
            self._fd: int | None = os.open(self.path, flags, 0o666)
        except OSError as error:
            raise naming(error, self.path) from None
        self._fsync = fsync

    def write(self, record: Record | BaseModel) -> None:
        """Append one record; it reaches the operating system before this returns.

        A write that fails part way (disk full, file-size limit) takes back what it wrote,
        so the file still ends on a whole record, and raises the error naming the file.
        """
        if self._fd is None:
            raise ValueError(f"{self.path} is closed")
        try:
            write_all(self._fd, encode_record(record))
            if self._fsync:
                os.fsync(self._fd)
        except OSError as error:
            # The record's newline is its last byte, so what reached the file of it ends
            # after the last line end; an earlier record is never touched.
            with suppress(OSError):
                size = os.fstat(self._fd).st_size
                os.ftruncate(self._fd, _last_line_start(self._fd, size))
            raise naming(error, self.path) from None

    def close(self) -> None:
        """Close the file (safe to call twice)."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)


def jsonl_lines(
    path: str | Path,
    *,
    allow_partial_tail: bool = True,
    on_partial_tail: Callable[[int], None] | None = None,
    what: str = "file",
    progress: Callable[[int], None] | None = None,
) -> Iterator[tuple[int, bytes]]:
    """Yield ``(line_number, line)`` for each non-blank line of a JSONL file, as bytes
    without its line end, reading a part of the file at a time (a byte-order mark at
    the start dropped). The partial tail is handled as :func:`read_jsonl` says;
    ``progress`` is called with the bytes read so far, every few megabytes."""
    path = Path(path)
    number = done = reported = 0
    with open_input(path, what=what) as handle:
        for chunk_line in handle:
            done += len(chunk_line)
            if progress is not None and done - reported >= 1 << 22:
                progress(reported := done)
            if b"\r" in chunk_line:
                chunk_line = chunk_line.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            # Every piece but the last ended with a line end; the last is empty, except
            # on a file's last line when it does not end with one.
            *pieces, tail = chunk_line.split(b"\n")
            for piece in pieces:
                number += 1
                if number == 1 and piece.startswith(_BOM):
                    piece = piece[len(_BOM) :]
                if piece.strip():
                    yield number, piece
            if tail:
                number += 1
                if number == 1 and tail.startswith(_BOM):
                    tail = tail[len(_BOM) :]
                if not tail.strip():
                    continue
                if allow_partial_tail and not is_complete_line(tail):
                    if on_partial_tail is not None:
                        on_partial_tail(number)
                else:
                    yield number, tail
    if progress is not None:
        progress(done)


def parse_line(
    line: bytes, path: Path, number: int, repairs: TextRepairs | None = None
) -> dict[str, Any]:
    """One JSONL line as its record; bad JSON, bad UTF-8 or a value that is not an
    object is an :class:`InputError` naming the file and line. Text changed on the way
    (see :class:`~sdtt.files.TextRepairs`) is counted in ``repairs``."""
    record: Any
    try:
        # orjson is strict where sdtt is lenient (NaN, lone surrogates), reads integers
        # past 64 bits as floats and knows nothing of sdtt's limits or repairs: those
        # lines take the slow path, which reads them as before or says what is wrong.
        if (
            line.count(b"[") + line.count(b"{") > MAX_DEPTH
            or b"\\u0000" in line
            or _LONG_DIGITS in line.translate(_DIGITS_AS_ZEROS)
        ):
            raise orjson.JSONDecodeError("checked below", "", 0)
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(
                "is not valid UTF-8 text.",
                path=path,
                line=number,
                hint="Re-save the file as UTF-8.",
            ) from None
        try:
            record = loads_json(text, repairs, line=number)
        except json.JSONDecodeError as error:
            raise InputError(
                f"is not valid JSON ({error.msg} at column {error.colno}).",
                path=path,
                line=number,
                hint=_hint(path),
            ) from None
    if not isinstance(record, dict):
        raise InputError(
            f"holds a JSON {type(record).__name__}, not an object.",
            path=path,
            line=number,
            hint=_hint(path),
        )
    return record


_HINT_BYTES = 1 << 24
"""Bytes of a file read to say what it is when it is not JSON Lines."""


def _hint(path: Path) -> str:
    """What to do about a file that is not JSON Lines: what it holds, and which command
    takes it, when its content shows it (:func:`~sdtt.files.what_file_is`)."""
    try:
        with path.open("rb") as file:
            head = file.read(_HINT_BYTES).decode("utf-8", errors="replace")
    except OSError:
        head = ""
    return what_file_is(head) or "Each line must be one JSON object."


def read_jsonl(
    path: str | Path,
    *,
    allow_partial_tail: bool = True,
    on_partial_tail: Callable[[int], None] | None = None,
    what: str = "file",
    progress: Callable[[int], None] | None = None,
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, record)`` for each record of a JSONL file, reading a part
    of the file at a time.

    Blank lines are skipped. A malformed line raises :class:`InputError` naming the file
    and line, except an unterminated last line when ``allow_partial_tail`` is set: that is
    the record a crash interrupted, and it is skipped (a last line that is a complete
    record is read, newline or not; see :func:`repair_tail`), after calling
    ``on_partial_tail`` with its line number so a reader can warn that the file may be
    incomplete. ``what`` names the file in a missing-file message; ``progress`` is
    called with the bytes read so far. Text changed on the way in is reported once, as a
    :class:`~sdtt.files.TextChangedWarning`, when the file has been read.
    """
    path = Path(path)
    repairs = TextRepairs()
    lines = jsonl_lines(
        path,
        allow_partial_tail=allow_partial_tail,
        on_partial_tail=on_partial_tail,
        what=what,
        progress=progress,
    )
    for number, line in lines:
        yield number, parse_line(line, path, number, repairs)
    repairs.report(path)
