"""Reading a table of records (JSONL) a block of whole lines at a time with Arrow's JSON
reader, for files of millions: no Python object per record.

Each block is parsed by ``pyarrow.json`` (C++, in a thread, while the block before is
reduced) and reduced to what a table of the records needs: the plain fields (text and
numbers that pydantic keeps as they are, see :mod:`sdtt.dialogue.plain_check`) as Arrow
columns, and for each group of fields a caller asks for (and the fields the model's
validators read together), one id a row for its distinct values, each distinct value
validated once through the model itself and kept as the model dumps it.

This is only an accelerator. A block that is anything but plainly valid goes through
the per-record path (:func:`~sdtt.dialogue.record_files.record_fields_of`), which gives
the accepted records or the error naming the bad line, exactly as a file read record by
record would: Arrow refusing the block, a key that is not a field, a type that is not
the exact one expected, nulls where absence and null could differ, text the per-record
path would change on the way in (escapes of lone surrogates or NUL; see
:class:`~sdtt.files.TextRepairs`), bytes that are not UTF-8, numbers Arrow and orjson
may read differently (integers past 64 bits, NaN and infinities, whole numbers Arrow
made floats), lists, and lines that are not one object each.

Arrow's struct type is the union of the keys of a block's objects, an absent key read
as null. Where that could matter (a null in a nested object, or in a field whose default
is not null), the block's bytes say which: the key's ``"name":`` is counted, and the
block is read fast only when every such null was written out, or none was.
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]
import pyarrow.json as pj  # type: ignore[import-untyped]
from pydantic import BaseModel, ValidationError

from sdtt.dialogue.plain_check import PlainCheck
from sdtt.dialogue.record_files import TableKind, record_fields_of, warn_cut_off
from sdtt.files import CHANGED_ESCAPE_BYTES, TextRepairs, open_input
from sdtt.jsonl import is_complete_line, parse_line

BLOCK_BYTES = 16 << 20
"""Bytes of whole lines read and parsed at once (memory stays a few times this)."""
ARROW_BLOCK_BYTES = 1 << 20
"""Arrow's own block: the part one thread parses (a longer line takes the per-record path)."""
_ONE_CORE = pj.ReadOptions(block_size=ARROW_BLOCK_BYTES, use_threads=False)
"""Arrow parses on one core: the other turns the block before into columns meanwhile."""
_BOM = b"\xef\xbb\xbf"
_SPACE_BEFORE_COLON = re.compile(rb'"[ \t]+:')
_EXACT_FLOAT = float(1 << 53)
"""Whole numbers from here on may be integers past 64 bits that Arrow read as floats."""
_COMBINED_LIMIT = 1 << 62  # a block's combined value code stays below it: no int64 overflow
_MAX_NESTING = 32
_NOT_BRACKETS = bytes(set(range(256)) - set(b"{}[]"))
_STEP = np.zeros(256, dtype=np.int64)
_STEP[list(b"{[")] = 1
_STEP[list(b"}]")] = -1
"""What each bracket adds to the nesting depth."""

Fields = dict[str, Any]


@dataclass
class RecordBlock:
    """Records of one block, as columns: ``rows`` records, the plain fields present as
    Arrow arrays (a field absent from every record of the block has its default), and
    for each group asked for, the id of each row's values (into :attr:`BlockReader.values`)."""

    rows: int
    plain: dict[str, pa.Array]
    groups: list[np.ndarray]


def whole_line_blocks(
    path: Path, *, size: int = BLOCK_BYTES, progress: Callable[[int], None] | None = None
) -> Iterator[tuple[int, bytes]]:
    """The file as blocks of whole lines ending in ``\\n`` (``\\r\\n`` and lone ``\\r``
    line ends made ``\\n``, a byte-order mark at the start dropped), each with the number
    of its first line; a last line without a line end comes as a block of its own.
    ``progress`` is called with the bytes read after each block."""
    first = 1
    done = 0
    carry = b""
    with open_input(path) as handle:
        while True:
            chunk = handle.read(size)
            done += len(chunk)
            data = carry + chunk
            if done == len(chunk) and data.startswith(_BOM):
                data = data[len(_BOM) :]
            if chunk and data.endswith(b"\r"):
                carry, data = b"\r", data[:-1]  # it may begin a \r\n cut by the block's end
            else:
                carry = b""
            if b"\r" in data:
                data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            cut = data.rfind(b"\n") + 1 if chunk else len(data)
            block, rest = data[:cut], data[cut:]
            carry = rest + carry
            if block:
                yield first, block
                first += int(np.count_nonzero(np.frombuffer(block, dtype=np.uint8) == ord("\n")))
            if progress is not None:
                progress(done)
            if not chunk:
                return


@dataclass
class _Path:
    """One key of the block's objects, at any depth: its array with the nulls of the
    objects holding it, how many rows hold an object it could be in, and its field."""

    keys: tuple[str, ...]
    array: pa.Array
    parents: int

    @property
    def present(self) -> int:
        return int(len(self.array) - self.array.null_count)


class BlockReader:
    """Reads record files of one model into :class:`RecordBlock` s, or into the records'
    fields where a block must be read record by record (see the module docstring).

    ``groups`` are the fields whose values a caller wants per distinct combination; the
    fields ``check`` names as read together by the model's validators, and each field
    holding an object, are grouped as well. Ids of distinct values hold across files.
    """

    def __init__(
        self,
        check: PlainCheck,
        groups: Sequence[tuple[str, ...]],
        kind: TableKind[Any],
    ) -> None:
        self.check = check
        self.model = check.model
        self.version = kind.version
        self.noun = kind.noun
        self.format_name = kind.format_name
        fields = self.model.model_fields
        self.fields = fields
        wanted = [tuple(group) for group in groups]
        grouped = {name for group in wanted for name in group}
        internal = [check.keyed] if set(check.keyed) - grouped else []
        grouped |= set(check.keyed)
        for name, field in fields.items():
            holds_object = typing.get_origin(_plain_kind(field.annotation)[0]) is dict
            if name not in grouped and (name not in check.checks or holds_object):
                internal.append((name,))
                grouped.add(name)
        self._wanted = len(wanted)
        self.groups: list[tuple[str, ...]] = wanted + internal
        self.grouped = grouped
        self.values: list[list[Fields]] = [[] for _ in self.groups]
        """The distinct values of each group, by id: its fields as the model dumps them."""
        self._ids: list[dict[bytes, int]] = [{} for _ in self.groups]
        self._leaf_ids: dict[tuple[Any, ...], dict[Any, int]] = {}
        self._shapes: dict[tuple[Any, ...], int] = {}
        self._null_alike: dict[tuple[str, ...], bool] = {}
        self.fast_blocks = 0
        self.slow_blocks = 0

    def read(
        self,
        path: str | Path,
        *,
        block_size: int = BLOCK_BYTES,
        progress: Callable[[int], None] | None = None,
    ) -> Iterator[RecordBlock | list[Fields]]:
        """The records of ``path``, a block at a time: a :class:`RecordBlock` when the
        block is plainly valid, else the fields of its records (``model_dump``) as the
        per-record path validates them, a bad record raising its line's error."""
        path = Path(path)
        repairs = TextRepairs()
        for first, data, parsed in _parsed_ahead(
            whole_line_blocks(path, size=block_size, progress=progress)
        ):
            block = self._fast(data, parsed) if parsed is not None else None
            if block is not None:
                self.fast_blocks += 1
                yield block
                continue
            self.slow_blocks += 1
            lines: Iterator[tuple[int, Fields]] = (
                (n, parse_line(line, path, n, repairs)) for n, line in _lines(data, first)
            )
            if not data.endswith(b"\n"):
                lines = self._with_tail(path, data, first, repairs)
            yield list(
                record_fields_of(
                    lines, path, self.check, version=self.version, format_name=self.format_name
                )
            )
        repairs.report(path)

    def _with_tail(
        self, path: Path, data: bytes, first: int, repairs: TextRepairs
    ) -> Iterator[tuple[int, Fields]]:
        """The records of a file's last line, which has no line end: a record cut off
        mid-write is left out with a warning (as :func:`~sdtt.jsonl.read_jsonl`)."""
        if data.strip():
            number = first
            line = data[len(_BOM) :] if first == 1 and data.startswith(_BOM) else data
            if is_complete_line(line):
                yield number, parse_line(line, path, number, repairs)
            else:
                warn_cut_off(path, self.noun, number)

    def _fast(self, data: bytes, parsed: _Parsed) -> RecordBlock | None:
        """The block as columns, or ``None`` when it is not plainly valid."""
        table, octets, escapes = parsed.table, parsed.octets, parsed.escapes
        if table is None or not set(table.column_names) <= self.fields.keys():
            return None
        paths = _paths(table)
        if paths is None:
            return None
        absent = self._absent_paths(data, octets, paths, escapes)
        if absent is None or not self._numbers_read_alike(paths):
            return None
        columns = {name: table.column(name).combine_chunks() for name in table.column_names}
        plain = self._plain(columns)
        if plain is None:
            return None
        return self._grouped(table, paths, absent, plain, _Lines(data, parsed.ends))

    def _absent_paths(
        self, data: bytes, octets: np.ndarray, paths: list[_Path], escapes: bool
    ) -> set[tuple[str, ...]] | None:
        """The keys whose nulls in the block stand for keys not written (the others
        were written as null), or ``None`` when the bytes cannot tell."""
        absent: set[tuple[str, ...]] = set()
        # A null where the field's default is null reads the same as its key left out.
        unsure = [
            found
            for found in paths
            if found.present != found.parents and not self._null_is_default(found.keys)
        ]
        if not unsure:
            return absent
        # With no escape and no space before a colon, '":' ends a key and nothing else:
        # their number says whether all the block's nulls were written, or none.
        if escapes or any('"' in found.keys[-1] for found in unsure):
            return None
        # The byte after each quote, by a mask (twice as fast as gathering by positions).
        after_quotes = octets[1:][octets[:-1] == ord('"')]
        if np.any((after_quotes == ord(" ")) | (after_quotes == ord("\t"))):
            return None
        written = int(np.count_nonzero(after_quotes == ord(":")))
        known = sum(found.present for found in paths)
        if written == known + sum(found.parents - found.present for found in unsure):
            return absent
        if written == known:
            return {found.keys for found in unsure}
        by_name: dict[str, list[_Path]] = {}
        for found in paths:
            by_name.setdefault(found.keys[-1], []).append(found)
        for found in unsure:
            name = found.keys[-1]
            written = data.count(b'"' + name.encode("utf-8") + b'":')
            same = by_name[name]
            if written == sum(other.parents for other in same):
                continue
            if written != sum(other.present for other in same):
                return None
            absent.add(found.keys)
        return absent

    def _null_is_default(self, keys: tuple[str, ...]) -> bool:
        """Whether a null at ``keys`` validates as the key left out would: the field
        there (in the record's model or a model nested in it, none of whose validators
        sees the raw input) is optional with default ``None``."""
        known = self._null_alike.get(keys)
        if known is None:
            known = self._null_alike[keys] = _null_is_default(self.model, keys, top=True)
        return known

    def _numbers_read_alike(self, paths: list[_Path]) -> bool:
        """False when a float column may hold what orjson reads otherwise: NaN or an
        infinity, or a whole number (an integer Arrow turned into a float, when the
        field is not a float, or may have been past 64 bits)."""
        for found in paths:
            if not pa.types.is_floating(found.array.type) or found.present == 0:
                continue
            values = found.array.drop_null()
            if not pc.all(pc.is_finite(values)).as_py():
                return False
            whole = pc.equal(pc.floor(values), values)
            if not pc.any(whole).as_py():
                continue
            if len(found.keys) > 1 or not _is_float(self.fields[found.keys[0]].annotation):
                return False
            if pc.max(pc.abs(values.filter(whole))).as_py() >= _EXACT_FLOAT:
                return False
        return True

    def _plain(self, columns: Mapping[str, pa.Array]) -> dict[str, pa.Array] | None:
        """The block's plain fields (in no group), checked as the per-record path's
        :class:`~sdtt.dialogue.plain_check.PlainCheck` checks them; ``None`` if one fails."""
        plain = {}
        for name, field in self.fields.items():
            if name in self.grouped:
                continue
            array = columns.get(name)
            if array is None:
                if field.is_required():
                    return None
                continue
            kind, optional = _plain_kind(field.annotation)
            if array.null_count and not (optional and field.get_default() is None):
                return None
            if not pa.types.is_null(array.type) and not _arrow_type_fits(array.type, kind):
                return None
            if name == "version" and not self._versions_read(array):
                return None
            floor = next((item.ge for item in field.metadata if hasattr(item, "ge")), None)
            if (
                floor is not None
                and array.null_count < len(array)
                and pc.min(array).as_py() < floor
            ):
                return None
            plain[name] = array
        return plain

    def _versions_read(self, array: pa.Array) -> bool:
        if not pa.types.is_integer(array.type) or array.null_count:
            return False
        low, high = pc.min_max(array).values()
        return bool(low.as_py() > 0 and high.as_py() <= self.version)

    def _grouped(
        self,
        table: pa.Table,
        paths: list[_Path],
        absent: set[tuple[str, ...]],
        plain: dict[str, pa.Array],
        lines: _Lines,
    ) -> RecordBlock | None:
        """Each group's id a row; each value not seen before validated through the
        model (in the record of its first row, read from its line as the per-record
        path reads it) and kept as dumped. ``None`` if one fails."""
        rows = table.num_rows
        ids: list[np.ndarray] = []
        new: list[dict[bytes, tuple[int, int]]] = []
        for index, group in enumerate(self.groups):
            keys, first, codes = self._group_keys(group, paths, absent, rows)
            known = self._ids[index]
            # The keys of a block are distinct: each one not known gets the next id.
            lookup = np.fromiter((known.get(key, -1) for key in keys), np.intp, len(keys))
            unseen = np.flatnonzero(lookup < 0)
            lookup[unseen] = np.arange(len(known), len(known) + len(unseen))
            local = {
                keys[code]: (len(known) + order, int(first[code]))
                for order, code in enumerate(unseen.tolist())
            }
            ids.append(lookup[codes])
            new.append(local)
        reps = sorted({row for local in new for _, row in local.values()})
        dumps: dict[int, Fields] = {}
        for row in reps:
            # Its line, not Arrow's row: a row as Python objects costs four times the
            # parse, and the line has no null standing for a key it leaves out.
            dumped = self._validated(lines.record(row))
            if dumped is None:
                return None
            dumps[row] = dumped
        for index, local in enumerate(new):
            values = self.values[index]
            for key, (found, row) in sorted(local.items(), key=lambda item: item[1][0]):
                self._ids[index][key] = found
                values.append({name: dumps[row][name] for name in self.groups[index]})
        return RecordBlock(rows, plain, ids[: self._wanted])

    def _validated(self, record: Any) -> Fields | None:
        """The record as the model dumps it, or ``None`` when the per-record path would
        refuse it (or must say so itself)."""
        if not isinstance(record, dict):
            return None
        found = record.get("version", self.version)
        if type(found) is not int or not 0 < found <= self.version:
            return None
        try:
            return self.model.model_validate(record).model_dump()
        except (ValidationError, ValueError, TypeError):
            return None

    def _group_keys(
        self,
        group: tuple[str, ...],
        paths: list[_Path],
        absent: set[tuple[str, ...]],
        rows: int,
    ) -> tuple[list[bytes], np.ndarray, np.ndarray]:
        """The distinct values of ``group`` in the block, as keys that hold across
        blocks (the bytes of the shape's id and the ids of its leaves' values); the
        first row of each; and each row's code into them."""
        names = set(group)
        leaves = [found for found in paths if found.keys[0] in names]
        # Which keys there are, of which types, and which nulls are unwritten keys: the
        # same values under another shape are other values.
        shape = tuple((found.keys, str(found.array.type), found.keys in absent) for found in leaves)
        shape_id = self._shapes.setdefault(shape, len(self._shapes))
        combined = np.zeros(rows, dtype=np.int64)
        bound = 1  # combined < bound
        columns = [np.full(rows, shape_id, dtype=np.int64)]
        for found in leaves:
            array = found.array
            if pa.types.is_struct(array.type):
                array = array.is_valid()
            elif pa.types.is_null(array.type):
                continue
            leaf = self._leaf_codes(found.keys, array)
            columns.append(leaf)
            base = int(leaf.max(initial=0)) + 1
            if bound * base >= _COMBINED_LIMIT:
                # Renumber only when the mixed-radix code would overflow: one
                # factorize per block instead of one per leaf.
                combined = pd.factorize(combined)[0]
                bound = int(combined.max(initial=0)) + 1
            combined = combined * base + leaf
            bound *= base
        combined = pd.factorize(combined)[0]
        # factorize numbers codes by first appearance: code i first appears at first[i].
        first = np.unique(combined, return_index=True)[1]
        # A row of ids as one bytes object: hashed in C, no Python int per id.
        values = np.ascontiguousarray(np.stack([column[first] for column in columns], axis=1))
        rows_as_bytes = values.view(np.dtype((np.void, values.shape[1] * 8))).ravel()
        keys = typing.cast(list[bytes], rows_as_bytes.tolist())
        return keys, first, combined

    def _leaf_codes(self, keys: tuple[str, ...], array: pa.Array) -> np.ndarray:
        """Each row's id of its value at ``keys`` (nulls too), ids that hold across blocks."""
        encoded = pc.dictionary_encode(array, null_encoding="encode")
        known = self._leaf_ids.setdefault((keys, str(array.type)), {})
        values = encoded.dictionary.to_pylist()
        lookup = np.fromiter(
            (known.setdefault(value, len(known)) for value in values),
            dtype=np.int64,
            count=len(values),
        )
        indices = encoded.indices.to_numpy(zero_copy_only=False)
        return lookup[indices] if len(lookup) else np.zeros(len(array), dtype=np.int64)


@dataclass
class _Parsed:
    """What a block's bytes alone say: Arrow's table of it (``None`` when the block is
    not one plainly valid object a line), its bytes as an array, whether it holds a
    backslash, and where its lines end (when there is a table: row i ends at ``ends[i]``)."""

    table: pa.Table | None
    octets: np.ndarray
    escapes: bool
    ends: np.ndarray


@dataclass
class _Lines:
    """The lines of a block that Arrow read as one object each."""

    data: bytes
    ends: np.ndarray

    def record(self, row: int) -> Any:
        """The line of ``row`` parsed (``None`` if orjson refuses it)."""
        start = int(self.ends[row - 1]) + 1 if row else 0
        try:
            return orjson.loads(memoryview(self.data)[start : int(self.ends[row])])
        except orjson.JSONDecodeError:
            return None


def _parse(data: bytes) -> _Parsed:
    """The block parsed by Arrow, when its bytes allow the fast path at all."""
    octets = np.frombuffer(data, dtype=np.uint8)
    escapes = b"\\" in data
    refused = _Parsed(None, octets, escapes, np.zeros(0, dtype=np.intp))
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return refused
    if (escapes and CHANGED_ESCAPE_BYTES.search(data)) or _too_deep(data):
        return refused
    try:
        table = pj.read_json(pa.BufferReader(data), read_options=_ONE_CORE)
    except (pa.ArrowException, ValueError):
        return refused
    ends = np.flatnonzero(octets == ord("\n"))
    # One object a line, no blank line: Arrow reads '{..} {..}' on a line as two.
    if table.num_rows != len(ends) or not np.all(octets[ends - 1] == ord("}")):
        return refused
    return _Parsed(table, octets, escapes, ends)


def _parsed_ahead(
    blocks: Iterator[tuple[int, bytes]],
) -> Iterator[tuple[int, bytes, _Parsed | None]]:
    """Each block with :func:`_parse` of it (``None`` for a last line without its line
    end), parsed in a thread while the block before is turned into columns: Arrow's
    parse and NumPy's scans let go of the interpreter, so the two overlap."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="sdtt-parse") as pool:
        waiting: tuple[int, bytes, Future[_Parsed] | None] | None = None
        for first, data in blocks:
            future = pool.submit(_parse, data) if data.endswith(b"\n") else None
            if waiting is not None:
                yield _done(waiting)
            waiting = first, data, future
        if waiting is not None:
            yield _done(waiting)


def _done(
    waiting: tuple[int, bytes, Future[_Parsed] | None],
) -> tuple[int, bytes, _Parsed | None]:
    first, data, future = waiting
    return first, data, future.result() if future is not None else None


def _too_deep(data: bytes) -> bool:
    """Whether the block may nest deeper than :data:`_MAX_NESTING`: Arrow's parser
    recurses, and a few thousand levels crash the process. Brackets are counted in
    strings too, so a count that rises too high or falls below zero (a string's closing
    brackets could hide real depth) sends the block to the per-record path."""
    brackets = np.frombuffer(data.translate(None, _NOT_BRACKETS), dtype=np.uint8)
    depth = np.cumsum(_STEP[brackets])
    return bool(depth.size) and (int(depth.max()) > _MAX_NESTING or int(depth.min()) < 0)


def _lines(data: bytes, first: int) -> Iterator[tuple[int, bytes]]:
    """The non-blank lines of a block of whole lines, numbered from ``first``."""
    for offset, line in enumerate(data.split(b"\n")[:-1]):
        number = first + offset
        if number == 1 and line.startswith(_BOM):
            line = line[len(_BOM) :]
        if line.strip():
            yield number, line


def _paths(table: pa.Table) -> list[_Path] | None:
    """Every key of the block's objects at every depth, or ``None`` when a value is
    of a kind the fast path leaves to the per-record one (a list, deep nesting)."""
    found: list[_Path] = []
    stack: list[tuple[tuple[str, ...], pa.Array, int]] = [
        ((name,), table.column(name).combine_chunks(), table.num_rows)
        for name in table.column_names
    ]
    while stack:
        keys, array, parents = stack.pop()
        kind = array.type
        if len(keys) > _MAX_NESTING:
            return None
        if pa.types.is_struct(kind):
            found.append(_Path(keys, array, parents))
            present = len(array) - array.null_count
            for index, child in enumerate(array.flatten()):
                stack.append(((*keys, kind.field(index).name), child, present))
        elif (
            pa.types.is_integer(kind)
            or pa.types.is_floating(kind)
            or pa.types.is_boolean(kind)
            or pa.types.is_string(kind)
            or pa.types.is_null(kind)
        ):
            found.append(_Path(keys, array, parents))
        else:
            return None
    found.sort(key=lambda item: item.keys)
    return found


def _null_is_default(model: type[BaseModel], keys: tuple[str, ...], *, top: bool) -> bool:
    """See :meth:`BlockReader._null_is_default`. The top model's own validators were
    made for this reader (they read no field's presence); a nested model must have no
    validator that runs on its raw input."""
    decorators = model.__pydantic_decorators__
    raw = [item for item in decorators.model_validators.values() if item.info.mode != "after"]
    field = model.model_fields.get(keys[0])
    if field is None or (raw and not top):
        return False
    if any(
        (keys[0] in item.info.fields or "*" in item.info.fields) and item.info.mode != "after"
        for item in decorators.field_validators.values()
    ):
        return False
    if len(keys) == 1:
        return (
            not field.is_required()
            and field.default_factory is None
            and field.get_default() is None
        )
    inner = _plain_kind(field.annotation)[0]
    if not (isinstance(inner, type) and issubclass(inner, BaseModel)):
        return False  # a mapping: a key written as null is an entry, its absence none
    return _null_is_default(inner, keys[1:], top=False)


def _plain_kind(annotation: Any) -> tuple[Any, bool]:
    """The one type of a plain field, and whether it may be None."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        arms = [arm for arm in typing.get_args(annotation) if arm is not type(None)]
        return (arms[0] if len(arms) == 1 else None), True
    return annotation, False


def _is_float(annotation: Any) -> bool:
    return _plain_kind(annotation)[0] is float


def _arrow_type_fits(kind: pa.DataType, plain: Any) -> bool:
    """True when Arrow's ``kind`` holds only values of the plain Python type ``plain``
    (a float field takes whole numbers too, as pydantic does)."""
    if plain is str:
        return bool(pa.types.is_string(kind))
    if plain is bool:
        return bool(pa.types.is_boolean(kind))
    if plain is int:
        return bool(kind == pa.int64())
    if plain is float:
        return kind in (pa.float64(), pa.int64())
    return False
