"""Generic chat tables: CSV files and JSONL files with one message per row or line.

``--columns`` maps the fields sdtt needs to the file's column names, e.g.
``--columns sender=author,text=body,time=ts``; an optional ``conversation=chat_id``
keeps messages of different conversations apart. In JSONL a column may be a dotted path
into nested objects (``sender=author.name``). ``--time-format`` says how times are
written: ``iso`` (ISO 8601, the default; without a zone they get ``--timezone``),
``epoch`` or ``epoch_ms`` (seconds or milliseconds since 1970, converted to
``--timezone``), or a ``strptime`` pattern such as ``%d/%m/%Y %H:%M``.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any

from sdtt.errors import InputError
from sdtt.files import loads_json
from sdtt.personas.conversations import ChatMessage
from sdtt.personas.importers.build import ChatOutline, ImportResult, ParsedChat, PreparedImport
from sdtt.personas.importers.file_importer import FileImporter
from sdtt.personas.importers.options import (
    DEFAULT_COLUMNS,
    Columns,
    Flag,
    ImportOptions,
    check_delimiter,
    check_time_format,
    parse_columns,
)
from sdtt.personas.importers.reading import decode_text, open_text
from sdtt.personas.importers.shapes import json_type
from sdtt.personas.importers.times import localize, parse_iso_time, time_from_epoch

_DELIMITERS = (",", ";", "\t", "|")


def parse_time(
    value: Any, time_format: str, zone: tzinfo, *, path: Path, line: int, column: str
) -> datetime:
    """A cell's time according to ``--time-format``."""
    if isinstance(value, bool) or value is None or not isinstance(value, str | int | float):
        raise InputError(
            f"should be a time, not {json_type(value)}.", path=path, line=line, field=column
        )
    if time_format in ("epoch", "epoch_ms"):
        try:
            number = float(value)
        except ValueError:
            raise InputError(
                f"{str(value)[:40]!r} is not a number of "
                f"{'milliseconds' if time_format == 'epoch_ms' else 'seconds'}.",
                path=path,
                line=line,
                field=column,
                hint="Check --time-format.",
            ) from None
        seconds = number / 1000 if time_format == "epoch_ms" else number
        return time_from_epoch(seconds, zone, path=path, line=line, field=column)
    if not isinstance(value, str):
        raise InputError(
            "is a number; pass --time-format epoch (or epoch_ms) for times in seconds since 1970.",
            path=path,
            line=line,
            field=column,
        )
    if time_format == "iso":
        return parse_iso_time(value, zone, path=path, line=line, field=column)
    try:
        return localize(datetime.strptime(value.strip(), time_format), zone)
    except (ValueError, OverflowError):
        raise InputError(
            f"{value[:40]!r} does not match --time-format {time_format!r}.",
            path=path,
            line=line,
            field=column,
        ) from None


def _cell_text(value: Any, *, path: Path, line: int, column: str) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise InputError(f"should be text, not {json_type(value)}.", path=path, line=line, field=column)


def _message(
    cells: dict[str, Any],
    columns: Columns,
    time_format: str,
    zone: tzinfo,
    path: Path,
    line: int,
    dropped: Counter[str],
) -> ChatMessage | None:
    text = _cell_text(cells["text"], path=path, line=line, column=columns.text).strip()
    if not text:
        dropped["empty"] += 1
        return None
    sender = _cell_text(cells["sender"], path=path, line=line, column=columns.sender).strip()
    if not sender:
        raise InputError(
            "is empty: every message needs a sender.", path=path, line=line, field=columns.sender
        )
    time = parse_time(cells["time"], time_format, zone, path=path, line=line, column=columns.time)
    thread = None
    if columns.conversation is not None:
        thread = _cell_text(
            cells["conversation"], path=path, line=line, column=columns.conversation
        )
    return ChatMessage(sender=sender, text=text, time=time, thread=thread)


def _sniff_delimiter(header: str) -> str:
    counts = {delimiter: header.count(delimiter) for delimiter in _DELIMITERS}
    best = max(counts, key=lambda delimiter: counts[delimiter])
    return best if counts[best] else ","


def _wanted(columns: Columns) -> dict[str, str]:
    wanted = {"sender": columns.sender, "text": columns.text, "time": columns.time}
    if columns.conversation is not None:
        wanted["conversation"] = columns.conversation
    return wanted


def parse_csv(
    data: bytes,
    path: Path,
    *,
    zone: tzinfo,
    columns: Columns | None = None,
    time_format: str = "iso",
    delimiter: str | None = None,
) -> ParsedChat:
    """Read a CSV chat table (first row: column names)."""
    text = decode_text(data, path)
    dropped: Counter[str] = Counter()
    detected: dict[str, str] = {}
    rows = _csv_messages(
        io.StringIO(text, newline=""),
        text.split("\n", 1)[0],
        path,
        _Table(zone, columns or Columns(), time_format, dropped),
        delimiter=delimiter,
        detected=detected,
    )
    return ParsedChat(messages=list(rows), dropped=dropped, detected=detected)


@dataclass(frozen=True)
class _Table:
    """How a table's cells become messages, and where the rows left out are counted."""

    zone: tzinfo
    columns: Columns
    time_format: str
    dropped: Counter[str]

    def message(self, cells: dict[str, Any], path: Path, line: int) -> ChatMessage | None:
        return _message(cells, self.columns, self.time_format, self.zone, path, line, self.dropped)


def _csv_messages(
    text: Iterable[str],
    header_line: str,
    path: Path,
    table: _Table,
    *,
    delimiter: str | None,
    detected: dict[str, str],
) -> Iterator[ChatMessage]:
    """The messages of a CSV table's ``text`` (read with ``newline=""``), whose first
    line, up to its ``\n``, is ``header_line``; a guessed delimiter goes in ``detected``."""
    if not delimiter:
        detected["delimiter"] = delimiter = _sniff_delimiter(header_line)
    reader = csv.reader(text, delimiter=delimiter)
    rows: Iterator[list[str]] = iter(reader)
    try:
        header = next(rows, None)
        if header is None:
            raise InputError("is empty.", path=path, hint="The first row must name the columns.")
        names = [name.strip() for name in header]
        index: dict[str, int] = {}
        for key, column in _wanted(table.columns).items():
            found = [i for i, name in enumerate(names) if name == column] or [
                i for i, name in enumerate(names) if name.casefold() == column.casefold()
            ]
            if not found:
                raise InputError(
                    f"has no column {column!r} for the {key}; columns: "
                    f"{', '.join(repr(name) for name in names[:30])}.",
                    path=path,
                    line=1,
                    field="--columns",
                    hint=f"Map the columns, e.g. --columns {key}=<column name>.",
                )
            index[key] = found[0]
        start = reader.line_num + 1
        for row in rows:
            line = start
            start = reader.line_num + 1
            if not any(cell.strip() for cell in row):
                continue
            cells = {key: row[i] if i < len(row) else "" for key, i in index.items()}
            message = table.message(cells, path, line)
            if message is not None:
                yield message
    except csv.Error as error:
        raise InputError(
            f"is not valid CSV ({error}).", path=path, line=reader.line_num or None
        ) from None


def _lookup(record: dict[str, Any], column: str) -> tuple[bool, Any]:
    if column in record:
        return True, record[column]
    value: Any = record
    for part in column.split("."):
        if not isinstance(value, dict) or part not in value:
            return False, None
        value = value[part]
    return True, value


def parse_jsonl(
    data: bytes,
    path: Path,
    *,
    zone: tzinfo,
    columns: Columns | None = None,
    time_format: str = "iso",
) -> ParsedChat:
    """Read a JSONL chat table (one JSON object per line)."""
    text = decode_text(data, path)
    dropped: Counter[str] = Counter()
    table = _Table(zone, columns or Columns(), time_format, dropped)
    messages = list(_jsonl_messages(text.split("\n"), path, table))
    return ParsedChat(messages=messages, dropped=dropped)


def _jsonl_messages(lines: Iterable[str], path: Path, table: _Table) -> Iterator[ChatMessage]:
    """The messages of a JSONL table's lines (split at ``\n`` alone)."""
    for line, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            record = loads_json(raw)
        except json.JSONDecodeError as error:
            raise InputError(
                f"is not valid JSON ({error.msg} at column {error.colno}).",
                path=path,
                line=line,
                hint="Each line must be one JSON object.",
            ) from None
        except RecursionError:
            raise InputError("is nested too deeply.", path=path, line=line) from None
        if not isinstance(record, dict):
            raise InputError(
                f"holds {json_type(record)}, not an object.",
                path=path,
                line=line,
                hint="Each line must be one JSON object.",
            )
        cells: dict[str, Any] = {}
        for key, column in _wanted(table.columns).items():
            present, value = _lookup(record, column)
            if not present and key != "conversation":
                raise InputError(
                    f"has no {column!r} for the {key}; keys: "
                    f"{', '.join(repr(str(name)) for name in list(record)[:30])}.",
                    path=path,
                    line=line,
                    field="--columns",
                    hint=f"Map the keys, e.g. --columns {key}=<key>.",
                )
            cells[key] = value
        message = table.message(cells, path, line)
        if message is not None:
            yield message


TABLE_FLAGS = (
    Flag(
        "--columns",
        "columns",
        "Which columns hold sender, text and time (and optionally conversation), "
        f"e.g. sender=author,text=body,time=ts (default: {DEFAULT_COLUMNS}).",
        metavar="MAPPING",
        default=DEFAULT_COLUMNS,
        parse=parse_columns,
    ),
    Flag(
        "--time-format",
        "time_format",
        "iso (default), epoch, epoch_ms, or a strptime pattern such as '%%d/%%m/%%Y %%H:%%M'.",
        metavar="FORMAT",
        default="iso",
    ),
)
"""The options of both table formats (help texts are argparse's: ``%%`` is one ``%``)."""


class _TableImporter(FileImporter):
    """A table read twice from its file, a part at a time (see
    :class:`~sdtt.personas.importers.build.StreamedImport`): once for its senders and
    times, again as the persona is written; a pipe is read whole."""

    def stream_messages(
        self, path: Path, options: ImportOptions, dropped: Counter[str], detected: dict[str, str]
    ) -> Iterator[ChatMessage]:
        """The table's messages read from its file (rows left out counted in
        ``dropped``, what was guessed in ``detected``), as :meth:`parse` reads them."""
        raise NotImplementedError

    def prepare(self, path: Path, options: ImportOptions) -> PreparedImport:
        """Read the table once for its senders and times; the persona is built as the
        rows are read again."""
        digest = self.streamed_digest(path)
        if digest is None or _defined_by(self, "parse") is not _defined_by(self, "stream_messages"):
            # A subclass that parses otherwise but does not stream so is read whole.
            return super().prepare(path, options)
        dropped: Counter[str] = Counter()
        detected: dict[str, str] = {}
        outline = ChatOutline.read(
            self.stream_messages(path, options, dropped, detected),
            dropped,
            keep_media=options.keep_media,
            people=[],
            detected=detected,
        )

        def messages() -> Iterator[ChatMessage]:
            return self.stream_messages(path, options, Counter(), {})

        return self.streamed(outline, messages, path, options, digest)


def _defined_by(importer: FileImporter, name: str) -> type:
    return next(kind for kind in type(importer).__mro__ if name in vars(kind))


def _table(options: ImportOptions, dropped: Counter[str]) -> _Table:
    return _Table(
        options.timezone,
        options.columns or Columns(),
        check_time_format(options.time_format),
        dropped,
    )


class CsvImporter(_TableImporter):
    """``sdtt persona import csv CHAT.csv --me NAME --columns ...``."""

    name = "csv"
    help = "a CSV table of messages (sender, text, time columns)"
    file_help = "The CSV file; its first row names the columns."
    flags = (
        *TABLE_FLAGS,
        Flag(
            "--delimiter",
            "delimiter",
            "Field separator (default: guessed from the header among , ; tab |).",
            metavar="CHAR",
        ),
    )

    def parse(self, data: bytes, path: Path, options: ImportOptions) -> ParsedChat:
        """Read the table."""
        return parse_csv(
            data,
            path,
            zone=options.timezone,
            columns=options.columns,
            time_format=check_time_format(options.time_format),
            delimiter=check_delimiter(options.delimiter),
        )

    def stream_messages(
        self, path: Path, options: ImportOptions, dropped: Counter[str], detected: dict[str, str]
    ) -> Iterator[ChatMessage]:
        """The rows read from the file, as :meth:`parse` reads them."""
        delimiter = check_delimiter(options.delimiter)
        table = _table(options, dropped)
        with open_text(path, newline="\n") as first:
            header_line = first.readline().removesuffix("\n")
        with open_text(path, newline="") as text:
            yield from _csv_messages(
                text, header_line, path, table, delimiter=delimiter, detected=detected
            )


class JsonlImporter(_TableImporter):
    """``sdtt persona import jsonl CHAT.jsonl --me NAME --columns ...``."""

    name = "jsonl"
    help = "a JSONL file of messages (one JSON object per line)"
    file_help = "The JSONL file, one message object per line."
    flags = TABLE_FLAGS

    def parse(self, data: bytes, path: Path, options: ImportOptions) -> ParsedChat:
        """Read the lines."""
        return parse_jsonl(
            data,
            path,
            zone=options.timezone,
            columns=options.columns,
            time_format=check_time_format(options.time_format),
        )

    def stream_messages(
        self, path: Path, options: ImportOptions, dropped: Counter[str], detected: dict[str, str]
    ) -> Iterator[ChatMessage]:
        """The lines read from the file, as :meth:`parse` reads them."""
        table = _table(options, dropped)
        with open_text(path, newline="\n") as text:
            lines = (line.removesuffix("\n") for line in text)
            yield from _jsonl_messages(lines, path, table)


def import_csv(path: str | Path, options: ImportOptions) -> ImportResult:
    """A persona from a CSV table of messages whose first row names the columns.

    ``options.columns`` says which columns hold sender, text and time (and optionally
    the conversation), ``options.time_format`` how times are written, and
    ``options.delimiter`` the separator (guessed by default).
    """
    return CsvImporter().run(path, options)


def import_jsonl(path: str | Path, options: ImportOptions) -> ImportResult:
    """A persona from a JSONL file of messages, one JSON object per line.

    ``options.columns`` may name nested keys with dots (``sender=author.name``).
    """
    return JsonlImporter().run(path, options)
