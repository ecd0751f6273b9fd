"""Judgements as one flat pandas table, the input of every metric.

Columns: ``judge_id``, ``judge_type`` (human/llm), ``judge_model``, ``judge_kind``
(human, paired, zero-shot, one-shot), ``pair_id``, ``pair_kind``, ``x`` (live turns
shown), ``n`` (pseudo-dialogue turns N), ``turns`` (total turn index shown, N + the last
live turn shown; NaN when unknown), ``view`` (last, whole, chunk), ``choice``,
``bot_position``, ``correct`` (1.0/0.0, NaN without an answer), ``excluded``,
``exclusion_reason``, ``order`` (paired LLM judges), ``label1``/``label2`` (single
transcript judges: "human"/"ai"), ``witness``/``verdict`` (live single-witness verdicts:
"bot"/"human" and "human"/"ai"), ``chats`` (what identifies the chats judged, see
:func:`verdict_pair`), the bot conversation's condition (``model``,
``persona``, ``mode``, ``topic``, ``interrogator``: "human", a model, "script" or none)
and one ``demo.<question>`` column per demographic.
"""

from __future__ import annotations

import functools
import json
import math
import operator
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]

from sdtt.dialogue.shown import Shown
from sdtt.tasks.judgements import (
    ExclusionTally,
    Judgement,
    judgement_blocks,
    reason_category,
    warn_repeated,
)

if TYPE_CHECKING:
    from sdtt.dialogue.record_blocks import RecordBlock

CONDITION_COLUMNS = ("model", "persona", "mode", "topic", "interrogator")
NUMERIC_COLUMNS = ("x", "n", "turns")
"""Turn counts: sorted as numbers in breakdowns."""
ANSWER_COLUMNS = (
    "choice",
    "bot_position",
    "correct",
    "excluded",
    "exclusion_reason",
    "order",
    "label1",
    "label2",
    "witness",
    "verdict",
)
"""What a judge answered, and whether it counts (read by every pass rate)."""
BASE_COLUMNS = (
    "study",
    "judge_id",
    "judge_type",
    "judge_model",
    "judge_kind",
    "pair_id",
    "pair_kind",
    "x",
    "n",
    "turns",
    "view",
    *ANSWER_COLUMNS,
    "response_time_s",
    "chats",
    *CONDITION_COLUMNS,
)


def _condition_facts(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The columns read from what a judgement (the dict of its fields, ``model_dump``)
    was shown, and its judge type."""
    shown = Shown.model_validate(fields["shown"])
    bot = shown.bot
    labels = shown.labels or {}
    turns = shown.turns()
    kind = shown.judge_kind or ("human" if fields["judge_type"] == "human" else "llm")
    facts: dict[str, Any] = {
        "judge_kind": kind,
        "x": turns.x,
        "n": turns.pseudo,
        "turns": turns.total,
        "view": shown.view or "last",
        "order": shown.order,
        "label1": labels.get("1"),
        "label2": labels.get("2"),
        "chats": _chats_of(shown, turns.x, fields["study"]),
        "topic": shown.topic,
    }
    for column in ("model", "persona", "mode", "interrogator"):
        value = None if bot is None else getattr(bot, column)
        facts[column] = None if value is None else str(value)
    return facts


def _chats_of(shown: Shown, x: int, study: str) -> str:
    chats = (shown.bot_conversation, shown.human_conversation, shown.view)
    return json.dumps([*chats, shown.live_from, shown.live_to, x, study])


def verdict_pair(fields: Mapping[str, Any]) -> str:
    """What identifies the chats a judgement (its fields) saw, whichever view or order
    showed them: the ``chats`` column, by which judges' verdicts on a pair are compared."""
    shown = Shown.model_validate(fields["shown"])
    return _chats_of(shown, shown.turns().x, fields["study"])


FACT_FIELDS = ("study", "judge_type", "shown")
"""The fields of a record :func:`_condition_facts` reads (with :func:`verdict_pair`):
its columns are worked out once per distinct combination of them."""
_VERDICT_COLUMNS = (
    "judge_type",
    "judge_model",
    "pair_kind",
    "choice",
    "bot_position",
    "correct",
    "excluded",
    "exclusion_reason",
    "witness",
    "verdict",
)
"""Fields of the record taken as they are, of which a file holds few combinations."""
_verdict_of = operator.itemgetter(*_VERDICT_COLUMNS)
_OWN_COLUMNS = ("study", "judge_id", "pair_id")
"""Fields of the record taken as they are, each column on its own."""
_FACT_COLUMNS = (
    "judge_kind",
    "x",
    "n",
    "turns",
    "view",
    "order",
    "label1",
    "label2",
    "chats",
    *CONDITION_COLUMNS,
)
_INTEGER_COLUMNS = ("bot_position", *NUMERIC_COLUMNS)
"""Whole numbers: int64 when none is missing."""
TABLE_GROUPS = (_VERDICT_COLUMNS, FACT_FIELDS, ("demographics",))
"""The fields read per distinct combination when a file is read a block at a time."""
_CACHED_CONDITIONS = 1 << 16
"""Conditions whose columns are kept for the next record with the same one (a study
has one per pair and order shown; more clear the cache now and then): some 50 MB."""


class _Codes:
    """One code a row for a tuple of values, each distinct tuple stored once."""

    def __init__(self, columns: tuple[str, ...]) -> None:
        self.columns = columns
        self.codes: array[int] = array("I")
        self.values: dict[tuple[Any, ...], int] = {}

    def code(self, values: tuple[Any, ...]) -> int:
        """The code of ``values`` (a new one the first time)."""
        code = self.values.get(values)
        if code is None:
            code = self.values[values] = len(self.values)
        return code

    def add(self, values: tuple[Any, ...]) -> None:
        self.codes.append(self.code(values))

    def extend(self, codes: np.ndarray) -> None:
        """Append rows by their codes."""
        self.codes.frombytes(codes.astype(np.uint32).tobytes())

    def pad(self, rows: int, values: tuple[Any, ...]) -> None:
        missing = rows - len(self.codes)
        if missing > 0:
            self.extend(np.full(missing, self.code(values), dtype=np.uint32))

    def columns_of(self) -> dict[str, pd.Series]:
        """Each column as a Series: its distinct values typed once (numbers and
        booleans as such, whole numbers with a gap as floats, text as objects), then
        taken by the rows' codes."""
        uniques = list(self.values)
        codes = np.frombuffer(self.codes, dtype=np.uint32).astype(np.intp)
        out = {}
        for index, name in enumerate(self.columns):
            column = np.empty(len(uniques), dtype=object)
            column[:] = [values[index] for values in uniques]
            values = pd.Series(column, dtype=object)
            inferred = values.infer_objects()
            if not pd.api.types.is_string_dtype(inferred.dtype):
                # Text stays objects: a pointer a row, each distinct string stored once
                # (as pandas' own text, every row holds its bytes: 40 for a judge id).
                values = inferred
            if name in _INTEGER_COLUMNS and values.dtype == object:
                values = pd.to_numeric(values)  # whole numbers and None: NaN
            if values.dtype == object:
                out[name] = pd.Series(values.to_numpy()[codes], dtype=object)
            else:
                out[name] = pd.Series(values.array.take(codes), copy=False)
        return out


def _own_code(codes: _Codes, name: str, fields: Mapping[str, Any]) -> int:
    return codes.code((fields[name],))


class _Columns:
    """Rows appended one at a time, kept as columns: a number per cell, each distinct
    value (or combination of values) stored once, so no Python object is kept per row
    of a table of millions."""

    def __init__(self) -> None:
        self.rows = 0
        self.verdict_codes: list[int] = []
        self.fact_codes: list[int] = []
        self.fact_cache: dict[bytes, int] = {}
        self.verdicts = _Codes(_VERDICT_COLUMNS)
        self.facts = _Codes(_FACT_COLUMNS)
        self.own = [_Codes((name,)) for name in _OWN_COLUMNS]
        self.own_fact_codes: dict[str, list[int]] = {}
        self.times = array("d")
        self.demographics: dict[str, _Codes] = {}

    def add(self, fields: Mapping[str, Any], facts: int) -> None:
        """Append a row: its fields, and the code of its condition's columns (see
        :meth:`facts_code`)."""
        self.verdicts.add(_verdict_of(fields))
        self.facts.codes.append(facts)
        for codes in self.own:
            codes.add((fields[codes.columns[0]],))
        time = fields["response_time_s"]
        self.times.append(math.nan if time is None else float(time))
        self.rows += 1
        if fields["demographics"]:
            self._add_demographics(fields["demographics"])

    def add_records(self, records: Iterable[Mapping[str, Any]]) -> None:
        """Append rows given as the dicts of their fields."""
        for fields in records:
            self.add(fields, self.facts_of(fields))

    def facts_of(self, fields: Mapping[str, Any]) -> int:
        """The code of the columns :func:`_condition_facts` reads from ``fields``,
        worked out once per distinct :data:`FACT_FIELDS`."""
        values = [fields[name] for name in FACT_FIELDS]
        try:
            key = orjson.dumps(values)
        except TypeError:  # an integer past 64 bits, which orjson does not write
            key = json.dumps(values).encode("utf-8")
        found = self.fact_cache.get(key)
        if found is None:
            if len(self.fact_cache) >= _CACHED_CONDITIONS:
                self.fact_cache.clear()
            found = self._facts_code_of(fields)
            # orjson's bytes keep the room it wrote them in (kilobytes): the kept key is
            # a copy of their own size, or the cache would take 200 MB, not 30.
            self.fact_cache[bytes(memoryview(key))] = found
        return found

    def _facts_code_of(self, fields: Mapping[str, Any]) -> int:
        row = _condition_facts(fields)
        return self.facts_code(tuple(row[name] for name in _FACT_COLUMNS))

    def facts_code(self, facts: tuple[Any, ...]) -> int:
        """The code of a condition's columns (``facts``), to give :meth:`add`."""
        values = self.facts.values
        code = values.get(facts)
        if code is None:
            code = values[facts] = len(values)
        return code

    def _add_demographics(self, demographics: Mapping[str, Any]) -> None:
        for question, answer in demographics.items():
            answers = self._answers(question)
            answers.pad(self.rows - 1, (None,))
            answers.add((answer,))

    def _answers(self, question: str) -> _Codes:
        answers = self.demographics.get(question)
        if answers is None:
            answers = self.demographics[question] = _Codes((f"demo.{question}",))
        return answers

    def add_block(self, block: RecordBlock, values: Sequence[Sequence[Mapping[str, Any]]]) -> None:
        """Append a block's rows (``values``: the reader's distinct values of each of
        :data:`TABLE_GROUPS`, by id), in the columns :meth:`add` would give them."""
        verdicts, facts, demographics = block.groups
        verdict_code = self.verdicts.code
        lookup = self._lookup(self.verdict_codes, values[0], lambda f: verdict_code(_verdict_of(f)))
        self.verdicts.extend(lookup[verdicts])
        # The reader's values are distinct already: no cache keyed by their dump.
        facts_code = self._facts_code_of
        self.facts.extend(self._lookup(self.fact_codes, values[1], facts_code)[facts])
        for codes in self.own:
            name = codes.columns[0]
            if name in block.plain:
                encoded = pc.dictionary_encode(block.plain[name], null_encoding="encode")
                found = encoded.dictionary.to_pylist()
                rows = encoded.indices.to_numpy(zero_copy_only=False)
                lookup = np.array([codes.code((value,)) for value in found], dtype=np.uint32)
                codes.extend(lookup[rows])
            else:
                # Grown with the reader's values, not redone over all of them each block.
                known = self.own_fact_codes.setdefault(name, [])
                code_of = functools.partial(_own_code, codes, name)
                codes.extend(self._lookup(known, values[1], code_of)[facts])
        time = block.plain.get("response_time_s")
        if time is None:
            self.times.frombytes(np.full(block.rows, math.nan).tobytes())
        else:
            seconds = time.cast(pa.float64()).to_numpy(zero_copy_only=False)
            self.times.frombytes(np.asarray(seconds, dtype=np.float64).tobytes())
        self._add_block_demographics(block.rows, demographics, values[2])
        self.rows += block.rows

    def _add_block_demographics(
        self, rows: int, ids: np.ndarray, values: Sequence[Mapping[str, Any]]
    ) -> None:
        used, first = np.unique(ids, return_index=True)
        questions: dict[str, None] = {}
        for index in used[np.argsort(first)]:
            questions.update(dict.fromkeys(values[index]["demographics"]))
        for question in questions:
            answers = self._answers(question)
            answers.pad(self.rows, (None,))
            lookup = np.zeros(len(values), dtype=np.uint32)
            for index in used:
                answer = values[index]["demographics"].get(question)
                lookup[index] = answers.code((answer,))
            answers.extend(lookup[ids])

    @staticmethod
    def _lookup(
        codes: list[int],
        values: Sequence[Mapping[str, Any]],
        code_of: Callable[[Mapping[str, Any]], Any],
    ) -> np.ndarray:
        """``codes`` (a code for each distinct value of a group, by id) grown to cover
        ``values``, as an array."""
        codes.extend(code_of(fields) for fields in values[len(codes) :])
        return np.asarray(codes, dtype=np.uint32)

    def frame(self) -> pd.DataFrame:
        data: dict[str, Any] = {}
        for part in (self.verdicts, *self.own, self.facts, *self.demographics.values()):
            part.pad(self.rows, (None,))
            data.update(part.columns_of())
        data["response_time_s"] = np.frombuffer(self.times, dtype=np.float64).copy()
        # The columns are new arrays already: not copied again into one block per type
        # (a second of a million rows).
        return pd.DataFrame(data, index=pd.RangeIndex(self.rows), copy=False)


def judgement_table(judgements: Iterable[Judgement]) -> pd.DataFrame:
    """The flat table of ``judgements`` (see the module docstring for its columns)."""
    return table_of_fields(judgement.model_dump() for judgement in judgements)


def table_of_fields(records: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The flat table of judgements given as the dicts of their fields (``model_dump``
    of valid records, as :func:`~sdtt.tasks.judgements.iter_judgement_fields`
    yields them). They are read one at a time and not kept: a file of millions of
    records becomes a table of a few hundred bytes a row."""
    columns = _Columns()
    columns.add_records(records)
    return _finished(columns.frame())


def read_judgement_table(
    paths: Sequence[str | Path],
    *,
    progress: Callable[[Path], Callable[[int], None] | None] | None = None,
    block_size: int | None = None,
) -> pd.DataFrame:
    """The flat table of judgement files, read a block of lines at a time with Arrow
    (see :mod:`sdtt.dialogue.record_blocks`): the table, warnings and errors of
    :func:`table_of_fields` over :func:`~sdtt.tasks.judgements.iter_judgement_fields`
    of each file, in a fraction of the time. ``progress`` gives a file's callback of
    the bytes read."""
    from sdtt.dialogue.record_blocks import BLOCK_BYTES, RecordBlock

    reader = judgement_blocks(TABLE_GROUPS)
    columns = _Columns()
    for path in paths:
        path = Path(path)
        callback = progress(path) if progress is not None else None
        for block in reader.read(path, block_size=block_size or BLOCK_BYTES, progress=callback):
            if isinstance(block, RecordBlock):
                columns.add_block(block, reader.values)
            else:
                columns.add_records(block)
    return _finished(columns.frame())


def _finished(frame: pd.DataFrame) -> pd.DataFrame:
    """The table with every column, each of its type."""
    for column in BASE_COLUMNS:
        if column not in frame.columns:
            frame[column] = None
    frame["correct"] = frame["correct"].astype(float)
    frame["excluded"] = frame["excluded"].fillna(False).astype(bool)
    for column in NUMERIC_COLUMNS:
        frame[column] = pd.to_numeric(frame[column], errors="coerce")
    return frame


def demographic_columns(frame: pd.DataFrame) -> list[str]:
    """The ``demo.<question>`` columns of a table."""
    return [column for column in frame.columns if str(column).startswith("demo.")]


def with_base_columns(frame: pd.DataFrame, columns: Sequence[str] = BASE_COLUMNS) -> pd.DataFrame:
    """``frame`` with every column of :func:`judgement_table` present (or each of
    ``columns``, those a caller reads): a table built by hand (a notebook, a benchmark)
    may leave out the ones it has no values for."""
    missing = [column for column in columns if column not in frame.columns]
    if not missing:
        return frame
    return frame.assign(**{column: None for column in missing})


_USABLE_COLUMNS = ("pair_kind", "excluded", "correct", "witness")


def usable(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows that count for the pass rate: test pairs, not excluded, with an answer (of
    single-witness verdicts, those on bot witnesses: the pass rate is the share of bots
    judged human)."""
    frame = with_base_columns(frame, _USABLE_COLUMNS)
    mask = (frame["pair_kind"] == "test") & ~frame["excluded"] & frame["correct"].notna()
    mask &= frame["witness"].isna() | (frame["witness"] == "bot")
    return frame.loc[mask]


def exclusion_tally(frame: pd.DataFrame) -> ExclusionTally:
    """:func:`~sdtt.tasks.judgements.tally_exclusions` of a table's rows, counted per
    distinct reason rather than row by row (a million rows hold a handful)."""
    catch = (frame["pair_kind"] == "catch").to_numpy()
    reasons = frame["exclusion_reason"].to_numpy()[~catch & frame["excluded"].to_numpy(bool)]
    codes, uniques = pd.factorize(reasons, use_na_sentinel=False)
    tally = ExclusionTally(catch=int(catch.sum()))
    for value, count in zip(uniques, np.bincount(codes, minlength=len(uniques)), strict=True):
        tally.excluded[reason_category(value if isinstance(value, str) else None)] += int(count)
    return tally


def combined_codes(columns: Sequence[pd.Series]) -> np.ndarray:
    """One code per row for the combination of ``columns`` (missing values alike), as
    ``MultiIndex.factorize`` gives, without building the tuples of a table of millions."""
    combined = np.zeros(len(columns[0]), dtype=np.int64)
    for column in columns:
        codes = pd.factorize(column, use_na_sentinel=False)[0].astype(np.int64)
        combined = pd.factorize(combined * (int(codes.max(initial=0)) + 1) + codes)[0]
    return combined


def without_repeats(frame: pd.DataFrame, paths: Sequence[str | Path]) -> pd.DataFrame:
    """``frame`` with repeated answers left out, as
    :func:`~sdtt.tasks.judgements.deduplicate` leaves them out of a list (and
    with the same warning naming the first): of the included rows with one (study,
    judge, pair, order), the first; every excluded row, except a model error that a
    later row of its key answered again."""
    if frame.empty:
        return frame
    # An order that is not text (absent, or odd) counts as none; read per distinct value.
    codes, uniques = pd.factorize(frame["order"], use_na_sentinel=False)
    is_text = np.array([isinstance(value, str) for value in uniques], dtype=bool)
    order = pd.Series(np.where(is_text[codes], codes, -1))  # the order's code, or -1
    key = pd.Series(
        combined_codes([frame["study"], frame["judge_id"], frame["pair_id"], order]),
        index=frame.index,
    )
    excluded = frame["excluded"].to_numpy()
    # Read where excluded only: the reasons of a million included rows are all None.
    model_error = np.zeros(len(frame), dtype=bool)
    reasons = frame["exclusion_reason"].to_numpy()[excluded]
    model_error[excluded] = [
        isinstance(why, str) and why.startswith("model_error") for why in reasons
    ]
    retried = model_error & key.duplicated(keep="last").to_numpy()
    repeated = np.zeros(len(frame), dtype=bool)
    included = ~excluded
    repeated[included] = key[included].duplicated(keep="first").to_numpy()
    if repeated.any():
        first = frame.loc[repeated].iloc[0]
        warn_repeated(
            int(repeated.sum()), paths, first["judge_id"], first["pair_id"], first["order"]
        )
    drop = retried | repeated
    return frame.loc[~drop].reset_index(drop=True) if drop.any() else frame
