"""Reading an export file's bytes, text and JSON, with errors that name file and line."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sdtt.errors import InputError
from sdtt.files import loads_json, open_input, read_file_bytes

MAX_FILE_BYTES = 1 << 30


def _check_size(path: Path) -> None:
    if path.is_dir():
        raise InputError("is a folder, not a file.", path=path, hint="Give the export file.")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise InputError("is larger than 1 GB; split the export first.", path=path)


def read_bytes(path: Path) -> bytes:
    """The file's bytes; a missing or unreadable file is an :class:`InputError`."""
    try:
        _check_size(path)
        return read_file_bytes(path, what="export")
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


def text_lines(path: Path) -> Iterator[str]:
    """The lines of a UTF-8 text file without their ends (``\n``, ``\r\n`` or a lone
    ``\r``: Python's universal newlines), read a part at a time, so a large export is
    never held whole; a byte-order mark is dropped. As ``str.split("\n")`` gives them: a
    file ending in a line end (or empty) ends with an empty line. The same errors as
    :func:`read_bytes` and :func:`decode_text` (a bad byte names its line)."""
    try:
        _check_size(path)
        handle = open_input(path, what="export")
    except FileNotFoundError:
        raise InputError("file not found.", path=path) from None
    except OSError as error:
        raise InputError(f"cannot read the file ({error.strerror}).", path=path) from None
    with io.TextIOWrapper(handle, encoding="utf-8-sig", newline=None) as text:
        text._CHUNK_SIZE = _BLOCK  # type: ignore[attr-defined]  # (8 KB by default)
        ended = True
        try:
            for line in text:
                ended = line.endswith("\n")
                yield line[:-1] if ended else line
        except UnicodeDecodeError:
            # Rare: read the file whole once more for the line of the bad byte.
            decode_text(read_bytes(path), path)
            raise
        except OSError as error:
            raise InputError(f"cannot read the file ({error.strerror}).", path=path) from None
    if ended:
        yield ""
