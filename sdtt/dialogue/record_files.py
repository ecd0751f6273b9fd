"""Tables of versioned records in JSONL (judgements, belief traces, ratings): written
whole or appended one flushed record at a time, and read back checked line by line."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from sdtt.dialogue.plain_check import PlainCheck
from sdtt.dialogue.store import check_version, validate_record
from sdtt.errors import IncompleteFileWarning
from sdtt.files import replacing
from sdtt.jsonl import JsonlWriter, read_jsonl

Record = TypeVar("Record", bound=BaseModel)


@dataclass(frozen=True)
class TableKind(Generic[Record]):
    """One kind of record table: its record type, the newest version of its format, and
    the words its errors use (``noun`` names one record, ``format_name`` the format)."""

    model: type[Record]
    version: int
    noun: str
    format_name: str


def write_records(path: str | Path, records: Iterable[BaseModel]) -> int:
    """Write records to a new JSONL file that replaces ``path`` only when complete;
    returns how many."""
    with replacing(Path(path)) as partial:
        return append_records(partial, records)


def append_records(path: str | Path, records: Iterable[BaseModel]) -> int:
    """Append records to a JSONL file, each flushed as written; returns how many."""
    count = 0
    with JsonlWriter(path) as writer:
        for record in records:
            writer.write(record)
            count += 1
    return count


def warn_cut_off(path: str | Path, noun: str, line: int) -> None:
    """Warn that the last record of a table file (at ``line``; ``noun`` names one) is cut
    off and was left out."""
    warnings.warn(
        IncompleteFileWarning(
            f"{path}:{line}: the last {noun} is cut off and was left out; if the file "
            "was copied or downloaded, it may be incomplete: check it against the original."
        ),
        stacklevel=6,
    )


def _lines(
    path: str | Path, noun: str, progress: Callable[[int], None] | None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """The records of a table file with their line numbers; a cut-off last record is
    left out with a warning (``noun`` names one record in it)."""
    return read_jsonl(
        path, on_partial_tail=lambda line: warn_cut_off(path, noun, line), progress=progress
    )


def iter_records(
    path: str | Path, kind: TableKind[Record], *, progress: Callable[[int], None] | None = None
) -> Iterator[Record]:
    """The records of a table of ``kind``, one at a time, as the file is read.

    A record of another format version or one that does not validate raises
    :class:`~sdtt.errors.InputError` naming its line; a last record cut off mid-write is
    left out with an :class:`~sdtt.errors.IncompleteFileWarning`. ``progress`` is called
    with the bytes read so far.
    """
    for line, raw in _lines(path, kind.noun, progress):
        check_version(raw, kind.version, path, line, what=kind.format_name)
        yield validate_record(kind.model, raw, path, line)


def iter_record_fields(
    path: str | Path,
    kind: TableKind[Any],
    check: PlainCheck,
    *,
    progress: Callable[[int], None] | None = None,
) -> Iterator[dict[str, Any]]:
    """The records of a table as :func:`iter_records` validates them, each as the dict
    of its fields (``model_dump``), for tables of millions: a record that ``check``
    passes is not handed to pydantic (see :mod:`sdtt.dialogue.plain_check`)."""
    return record_fields_of(
        _lines(path, kind.noun, progress),
        path,
        check,
        version=kind.version,
        format_name=kind.format_name,
    )


def record_fields_of(
    lines: Iterable[tuple[int, dict[str, Any]]],
    path: str | Path,
    check: PlainCheck,
    *,
    version: int,
    format_name: str,
) -> Iterator[dict[str, Any]]:
    """Records read from ``path`` (with their line numbers) validated one at a time as
    :func:`iter_record_fields` validates a file's, each as the dict of its fields."""
    passes, full = check.passes, check.full
    for line, raw in lines:
        found = raw.get("version", version)
        if type(found) is not int or not 0 < found <= version:
            check_version(raw, version, path, line, what=format_name)
        if passes(raw):
            yield full(raw)
        else:
            record = validate_record(check.model, raw, path, line)
            check.accepted(raw, record)
            yield record.model_dump()


def read_records(path: str | Path, kind: TableKind[Record]) -> list[Record]:
    """Read a table of ``kind`` as it is (see :func:`iter_records`)."""
    return list(iter_records(path, kind))
