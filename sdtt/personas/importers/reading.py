"""Reading an export file's bytes, text and JSON, with errors that name file and line."""

from __future__ import annotations

import io
import json
import re
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, BinaryIO, TextIO

import ijson

from sdtt.errors import InputError
from sdtt.files import loads_json, open_input, read_file_bytes

MAX_FILE_BYTES = 1 << 30
ZIP_ERRORS = (
    zipfile.BadZipFile,
    zlib.error,
    ValueError,
    EOFError,
    OSError,
    NotImplementedError,
    RuntimeError,  # an encrypted member
)
"""What unpacking a damaged zip export raises."""


def _check_size(path: Path) -> None:
    if path.is_dir():
        raise InputError("is a folder, not a file.", path=path, hint="Give the export file.")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise InputError("is larger than 1 GB; split the export first.", path=path)


def read_bytes(path: Path) -> bytes:
    """The file's bytes; a missing or unreadable file is an :class:`InputError`."""
    with _export_errors(path):
        _check_size(path)
        return read_file_bytes(path, what="export")


@contextmanager
def _export_errors(path: Path) -> Iterator[None]:
    """A missing or unreadable export as an :class:`InputError` naming it."""
    try:
        yield
    except FileNotFoundError:
        raise InputError("file not found.", path=path) from None
    except OSError as error:
        raise InputError(f"cannot read the file ({error.strerror}).", path=path) from None


def decode_text(data: bytes, path: str | Path) -> str:
    """UTF-8 text (a byte-order mark is dropped); a bad byte names its line."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise InputError(
            "is not UTF-8 text.",
            path=path,
            line=line,
            hint="Export the chat again, or re-save the file as UTF-8.",
        ) from None


def load_json(data: bytes, path: str | Path, *, what: str = "JSON") -> Any:
    """Parse a JSON document; errors name the line and column."""
    text = decode_text(data, path)
    try:
        return loads_json(text)
    except json.JSONDecodeError as error:
        raise InputError(
            f"is not valid {what} ({error.msg} at column {error.colno}).",
            path=path,
            line=error.lineno,
            hint="Give the file exactly as the export produced it.",
        ) from None
    except RecursionError:
        raise InputError(f"is nested too deeply to be {what}.", path=path) from None


_BLOCK = 1 << 20
"""Bytes decoded at a time."""


@contextmanager
def open_text(path: Path, *, newline: str | None) -> Iterator[TextIO]:
    """``path``'s UTF-8 text, read a part at a time (a byte-order mark dropped), its
    lines ended as ``newline`` says (as :func:`open` takes it); a missing, unreadable or
    too large file and a bad byte are the errors :func:`read_bytes` and
    :func:`decode_text` give."""
    with _export_errors(path):
        _check_size(path)
        handle = open_input(path, what="export")
    with decoded_text(handle, path, lambda: read_bytes(path), newline=newline) as text:
        yield text


@contextmanager
def decoded_text(
    handle: IO[bytes], path: Path, whole: Callable[[], bytes], *, newline: str | None
) -> Iterator[TextIO]:
    """``handle`` (UTF-8 bytes of ``path``) as text, as :func:`open_text` gives a file's,
    closed when done; ``whole`` reads the same bytes at once, for the line of a bad byte."""
    with io.TextIOWrapper(handle, encoding="utf-8-sig", newline=newline) as text:
        text._CHUNK_SIZE = _BLOCK  # type: ignore[attr-defined]  # (8 KB by default)
        try:
            yield text
        except UnicodeDecodeError:
            # Rare: read the bytes whole once more for the line of the bad byte.
            decode_text(whole(), path)
            raise
        except OSError as error:
            raise InputError(f"cannot read the file ({error.strerror}).", path=path) from None


def text_lines(path: Path) -> Iterator[str]:
    """The lines of a UTF-8 text file without their ends (``\n``, ``\r\n`` or a lone
    ``\r``: Python's universal newlines), read a part at a time, so a large export is
    never held whole; a byte-order mark is dropped. As ``str.split("\n")`` gives them: a
    file ending in a line end (or empty) ends with an empty line. The same errors as
    :func:`read_bytes` and :func:`decode_text` (a bad byte names its line)."""
    with open_text(path, newline=None) as text:
        yield from _lines(text)


def decoded_lines(handle: IO[bytes], path: Path, whole: Callable[[], bytes]) -> Iterator[str]:
    """The lines of ``handle`` (UTF-8 bytes of ``path``), as :func:`text_lines` gives a
    file's, closing it when done; ``whole`` reads the same bytes at once, for the line of
    a bad byte."""
    with decoded_text(handle, path, whole, newline=None) as text:
        yield from _lines(text)


def _lines(text: TextIO) -> Iterator[str]:
    ended = True
    for line in text:
        ended = line.endswith("\n")
        yield line[:-1] if ended else line
    if ended:
        yield ""


class JsonStreamFailed(Exception):
    """The streaming reader cannot read this JSON file as :func:`load_json` would (bad
    JSON, a byte-order mark, escapes it would change...): read the file whole instead,
    which gives the usual error naming the line, or the same values."""


# Escapes the streaming parser reads otherwise than load_json: lone surrogates become "?"
# there, and both they and NUL are repaired by load_json. Rare: such files are read whole.
_ODD_ESCAPE = re.compile(rb"\\u(?:[dD][89a-fA-F]|0000)")
_BOM = b"\xef\xbb\xbf"


class _JsonBytes:
    """An export's bytes for ijson, watched for what :func:`load_json` reads otherwise."""

    def __init__(self, handle: BinaryIO) -> None:
        self._handle = handle
        self._tail = b""
        self._first = True

    def read(self, size: int = -1) -> bytes:
        block = self._handle.read(size)
        if self._first:
            self._first = False
            if block.startswith(_BOM):
                block = block[len(_BOM) :]
        if _ODD_ESCAPE.search(self._tail + block):
            raise JsonStreamFailed
        self._tail = block[-5:]
        return block


def _open_json(path: Path) -> BinaryIO:
    with _export_errors(path):
        _check_size(path)
        return open_input(path, what="export")


def json_events(path: Path) -> Iterator[tuple[str, str, Any]]:
    """ijson's ``(prefix, event, value)`` events of a JSON file, read a part at a time.

    Raises :class:`JsonStreamFailed` where the file should be read whole instead.
    """
    with _open_json(path) as handle:
        try:
            yield from ijson.parse(_JsonBytes(handle), use_float=True)
        except ijson.JSONError:
            raise JsonStreamFailed from None


def json_items(path: Path, prefix: str) -> Iterator[Any]:
    """The values at ``prefix`` (ijson's notation: ``messages.item`` is each entry of the
    top-level ``messages``) of a JSON file, read a part at a time.

    Raises :class:`JsonStreamFailed` where the file should be read whole instead.
    """
    with _open_json(path) as handle:
        try:
            yield from ijson.items(_JsonBytes(handle), prefix, use_float=True)
        except ijson.JSONError:
            raise JsonStreamFailed from None


def json_outline(path: Path, *skipped: str) -> Any:
    """A JSON file's document without the entries of the arrays at ``skipped`` prefixes
    (each ``messages.item``-like): those arrays are left empty, so the outline of a large
    export is small. Raises :class:`JsonStreamFailed` like :func:`json_events`."""
    builder = ijson.ObjectBuilder()
    dotted = tuple(prefix + "." for prefix in skipped)
    for prefix, event, value in json_events(path):
        if prefix in skipped or prefix.startswith(dotted):
            continue
        builder.event(event, value)
    return builder.value
