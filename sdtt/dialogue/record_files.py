"""Tables of versioned records in JSONL (judgements, belief traces, ratings): written
whole or appended one flushed record at a time, and read back checked line by line."""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from sdtt.dialogue.jsonl import JsonlWriter, read_jsonl
from sdtt.dialogue.store import check_version, validate_record
from sdtt.errors import IncompleteFileWarning
from sdtt.files import replacing

Record = TypeVar("Record", bound=BaseModel)


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


def read_records(
    path: str | Path, model: type[Record], *, version: int, noun: str, format_name: str
) -> list[Record]:
    """Read a table of ``model`` records as it is.

    A record of another format version or one that does not validate raises
    :class:`~sdtt.errors.InputError` naming its line; a last record cut off mid-write is
    left out with an :class:`~sdtt.errors.IncompleteFileWarning` (``noun`` names one
    record in that message, ``format_name`` the format in version errors).
    """
    records: list[Record] = []

    def warn_cut(line: int) -> None:
        warnings.warn(
            IncompleteFileWarning(
                f"{path}:{line}: the last {noun} is cut off and was left out; if the file "
                "was copied or downloaded, it may be incomplete: check it against the original."
            ),
            stacklevel=4,
        )

    for line, raw in read_jsonl(path, on_partial_tail=warn_cut):
        check_version(raw, version, path, line, what=format_name)
        records.append(validate_record(model, raw, path, line))
    return records
