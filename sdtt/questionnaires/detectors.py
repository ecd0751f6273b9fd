"""A study's test pairs for automatic detectors, and their scores read back.

Three pair formats, each written as two files: what a detector receives (the two
dialogues of every test pair, nothing else) and, apart, the answer key, so the first can
be handed to anyone as judges' questionnaires are:

- **Inverse Turing Bench** (Hager et al. 2026): ``itb-pairs.jsonl`` with ``{id,
  dialogueA, dialogueB}`` (``id`` a whole number) and ``itb-key.jsonl`` with ``{id,
  who_is_human}`` (``"A"`` or ``"B"``). A detector answers ``{id, who_is_human}`` with
  ``"A"``, ``"B"``, a number (the probability that dialogue A is the human one) or
  ``null`` (no answer).
- **The Inverse Turing Bench's own files** (``itb-bench``; its public repository's
  ``sample.csv`` and dataset ``turing_bench_public_shuffled.csv``): a CSV with the
  columns ``id`` (0, 1, 2...), ``dialogueA``, ``dialogueB`` and ``who_is_human``, each
  dialogue one line per message, ``I: text`` for the interrogator (User A) and ``W:
  text`` for the witness (User B), no timestamps. ``itb-bench.csv`` leaves
  ``who_is_human`` empty, as the benchmark's public set does (its runner reads it with
  ``--input``); ``itb-bench-labelled.csv`` fills it in (``"A"`` or ``"B"``), the
  benchmark's labelled shape: the key. A detector answers as the benchmark's runner
  writes its predictions: a CSV with a ``who_is_human`` column (``A``, ``B`` or ``NA``
  for no answer), one row per item in order, or with an ``id`` column. Its score is
  the benchmark's accuracy: the share of items whose ``who_is_human`` is right, a
  missing or ``NA`` answer counting as wrong
  (:func:`sdtt.analysis.detection.accuracy`).
- **PAN 2024 "Voight-Kampff"** generative AI authorship verification: ``pan-pairs.jsonl``
  with ``{id, text1, text2}`` and ``pan-truth.jsonl`` with ``{id, is_human: [bool,
  bool]}``. A detector answers ``{id, is_human}`` with a score from 0 to 1, 0.5 for no
  answer (or, as the evaluator also reads, ``[true, false]`` / ``[false, true]``). The
  score is read exactly as PAN's 2024 evaluator reads it (its ``load_problem_file``
  takes a truth ``[true, false]`` as 0 and ``[false, true]`` as 1): above 0.5 says text2
  is the human one.

Dialogue A / text1 is chat 1 of the pair as judges saw it, so detectors, human judges
and LLM judges are scored on the very same items. Only test pairs are written (catch
pairs have an obvious answer); under a judge design, each pair once, as its first view
(the second shows the same chats swapped; judges of either view are scored on it). A
dialogue is one line per message, ``User A: text`` or ``User B: text`` (the shown
timestamp in brackets when the study shows them), with line breaks inside a message
folded so no message can forge a line.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from sdtt.dialogue.render import fold_text
from sdtt.errors import InputError
from sdtt.files import write_text_atomic
from sdtt.jsonl import read_jsonl
from sdtt.surveys.answer_files import read_text
from sdtt.tasks.questionnaire import AnswerKey, Line, Questionnaire

DetectorFormat = Literal["itb", "itb-bench", "pan"]
FORMATS: tuple[DetectorFormat, ...] = ("itb", "itb-bench", "pan")
PAIRS_FILES = {"itb": "itb-pairs.jsonl", "itb-bench": "itb-bench.csv", "pan": "pan-pairs.jsonl"}
KEY_FILES = {
    "itb": "itb-key.jsonl",
    "itb-bench": "itb-bench-labelled.csv",
    "pan": "pan-truth.jsonl",
}
BENCH_COLUMNS = ("id", "dialogueA", "dialogueB", "who_is_human")
"""The Inverse Turing Bench's CSV columns, in its order."""
BENCH_SPEAKERS = {"A": "I", "B": "W"}
"""User A is the bench's interrogator, User B its witness."""
NO_ANSWER = 0.5
"""A score that answers neither way (PAN's non-answer)."""


@dataclass(frozen=True)
class DetectorItem:
    """One test pair as a detector sees it, with its truth."""

    pair_id: str
    number: int
    """1-based position among the study's test pairs: the Inverse Turing Bench id."""
    dialogues: tuple[str, str]
    bench_dialogues: tuple[str, str]
    """The same chats in the Inverse Turing Bench's own lines (``I:``/``W:``)."""
    second_is_human: bool
    """True when User B of chat 2 is the person (the bot is in chat 1)."""


def render_dialogue(lines: Sequence[Line]) -> str:
    """One chat as a detector reads it: a line per message, as judges saw it."""
    rendered = []
    for line in lines:
        time = f"[{line.time}] " if line.time else ""
        rendered.append(f"User {line.speaker}: {time}{fold_text(line.text)}")
    return "\n".join(rendered)


def render_bench_dialogue(lines: Sequence[Line]) -> str:
    """One chat as the Inverse Turing Bench writes it: ``I: text`` / ``W: text`` lines."""
    return "\n".join(f"{BENCH_SPEAKERS[line.speaker]}: {fold_text(line.text)}" for line in lines)


def detector_items(questionnaire: Questionnaire, key: AnswerKey) -> list[DetectorItem]:
    """The study's test pairs in questionnaire order."""
    items: list[DetectorItem] = []
    for item in questionnaire.items:
        truth = key.items.get(item.id)
        if truth is None or truth.kind != "test" or truth.is_mirror:
            continue
        items.append(
            DetectorItem(
                pair_id=item.id,
                number=len(items) + 1,
                dialogues=(render_dialogue(item.chats[0]), render_dialogue(item.chats[1])),
                bench_dialogues=(
                    render_bench_dialogue(item.chats[0]),
                    render_bench_dialogue(item.chats[1]),
                ),
                second_is_human=truth.bot_position == 1,
            )
        )
    return items


def item_id(item: DetectorItem, fmt: DetectorFormat) -> str | int:
    """The id an item has in a format: the opaque pair id for PAN, its number for ITB
    (from 1), its row for the bench's own CSV (from 0, as the benchmark counts)."""
    if fmt == "pan":
        return item.pair_id
    return item.number if fmt == "itb" else item.number - 1


def export_records(
    items: Sequence[DetectorItem], fmt: DetectorFormat
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """What a detector receives, and the answer key, as records."""
    pairs: list[dict[str, Any]] = []
    keys: list[dict[str, Any]] = []
    for item in items:
        first, second = item.dialogues
        human = "B" if item.second_is_human else "A"
        if fmt == "itb-bench":
            first, second = item.bench_dialogues
            row = {"id": item.number - 1, "dialogueA": first, "dialogueB": second}
            pairs.append({**row, "who_is_human": ""})
            keys.append({**row, "who_is_human": human})
        elif fmt == "itb":
            pairs.append({"id": item.number, "dialogueA": first, "dialogueB": second})
            keys.append({"id": item.number, "who_is_human": human})
        else:
            pairs.append({"id": item.pair_id, "text1": first, "text2": second})
            truth = [not item.second_is_human, item.second_is_human]
            keys.append({"id": item.pair_id, "is_human": truth})
    return pairs, keys


def write_export(items: Sequence[DetectorItem], fmt: DetectorFormat, folder: Path) -> list[Path]:
    """Write the pairs file and, beside it, the answer key; returns both paths."""
    pairs, keys = export_records(items, fmt)
    written = []
    for name, records in ((PAIRS_FILES[fmt], pairs), (KEY_FILES[fmt], keys)):
        path = folder / name
        if fmt == "itb-bench":
            text = _bench_csv(records)
        else:
            text = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
        write_text_atomic(path, text)
        written.append(path)
    return written


def _bench_csv(records: Sequence[dict[str, Any]]) -> str:
    """The bench's CSV: its columns, every dialogue quoted (it holds line breaks)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=BENCH_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(records)
    return out.getvalue()


def read_scores(path: Path, items: Sequence[DetectorItem], fmt: DetectorFormat) -> dict[str, float]:
    """A detector's answers: pair id to the score that chat 2 is the human one (0.5 for
    no answer, and for every item the file leaves out, as PAN's evaluator does).

    A bad line is one :class:`InputError` naming the file, line and field.
    """
    if fmt == "itb-bench":
        return _read_bench_predictions(path, items)
    by_id = {str(item_id(item, fmt)): item for item in items}
    field = "who_is_human" if fmt == "itb" else "is_human"
    other_fmt: DetectorFormat = "pan" if fmt == "itb" else "itb"
    other_field = "is_human" if fmt == "itb" else "who_is_human"
    scores: dict[str, float] = {}
    seen: dict[str, int] = {}
    if not path.exists():
        raise InputError(
            "detector scores not found.",
            path=path,
            hint=f"Run the detector on the {PAIRS_FILES[fmt]} that 'sdtt detectors export' "
            "wrote; it must write one answer per line to this file.",
        )
    # No partial tail allowed: a cut-off last score must not pass as "no answer".
    for number, record in read_jsonl(path, allow_partial_tail=False, what="detector scores"):
        if "id" not in record:
            raise InputError("missing.", path=path, line=number, field="id")
        if field not in record and other_field in record:
            # The ids of the two formats differ, so this would otherwise read as an
            # unknown pair rather than the wrong --format.
            raise InputError(
                f"missing, but the line has {other_field!r}: it is a {other_fmt} answer.",
                path=path,
                line=number,
                field=field,
                hint=f"Pass --format {other_fmt}.",
            )
        key = str(record["id"])
        item = by_id.get(key)
        if item is None or isinstance(record["id"], (bool, float, list, dict)):
            raise InputError(
                f"{record['id']!r} is no test pair of this study.",
                path=path,
                line=number,
                field="id",
                hint=f"Score the {PAIRS_FILES[fmt]} exported from this study.",
            )
        if key in seen:
            raise InputError(
                f"{record['id']!r} was already scored on line {seen[key]}.",
                path=path,
                line=number,
                field="id",
            )
        seen[key] = number
        if field not in record:
            raise InputError("missing.", path=path, line=number, field=field)
        scores[item.pair_id] = _score(record[field], fmt, path, number, field)
    for item in items:
        scores.setdefault(item.pair_id, NO_ANSWER)
    return scores


def _score(value: Any, fmt: DetectorFormat, path: Path, line: int, field: str) -> float:
    """The score that chat 2 is human, from one answer."""
    if fmt == "itb":
        if value is None:
            return NO_ANSWER
        if value in ("A", "B"):
            return 0.0 if value == "A" else 1.0
        if _is_probability(value):
            # The probability that dialogue A is the human one.
            return 1.0 - float(value)
        raise InputError(
            f"{value!r} is not 'A', 'B', a probability from 0 to 1 or null.",
            path=path,
            line=line,
            field=field,
        )
    if _is_probability(value):
        return float(value)
    if (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(part, bool) for part in value)
        and value[0] != value[1]
    ):
        # The truth file's shape, which PAN's evaluator also reads as an answer.
        return 1.0 if value[1] else 0.0
    raise InputError(
        f"{value!r} is not a score from 0 to 1 (nor [true, false] / [false, true]).",
        path=path,
        line=line,
        field=field,
        hint="PAN scores: above 0.5 says text2 is human, below says text1, 0.5 no answer.",
    )


def _is_probability(value: Any) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and 0 <= value <= 1
    )


def _read_bench_predictions(path: Path, items: Sequence[DetectorItem]) -> dict[str, float]:
    """The Inverse Turing Bench runner's predictions CSV, as scores (see the module)."""
    if not path.exists():
        raise InputError(
            "detector predictions not found.",
            path=path,
            hint=f"Run the benchmark's runner on the {PAIRS_FILES['itb-bench']} that "
            "'sdtt detectors export --format itb-bench' wrote (--input), with --output here.",
        )
    reader = csv.DictReader(io.StringIO(read_text(path), newline=""))
    columns = reader.fieldnames or []
    if "who_is_human" not in columns:
        raise InputError(
            f"has no 'who_is_human' column (columns: {', '.join(columns) or 'none'}).",
            path=path,
            line=1,
            hint="Give the predictions CSV the benchmark's runner wrote.",
        )
    by_row = {item.number - 1: item for item in items}
    scores: dict[str, float] = {}
    seen: dict[int, int] = {}
    try:
        for position, row in enumerate(reader):
            line = reader.line_num
            raw_id = (row.get("id") or "").strip() if "id" in columns else str(position)
            if not raw_id.isdigit() or int(raw_id) not in by_row:
                raise InputError(
                    f"{raw_id!r} is no item of this study's {PAIRS_FILES['itb-bench']} "
                    f"(rows 0 to {len(items) - 1}).",
                    path=path,
                    line=line,
                    field="id" if "id" in columns else None,
                    hint="Score the predictions made on the file exported from this study.",
                )
            number = int(raw_id)
            if number in seen:
                raise InputError(
                    f"{raw_id!r} was already answered on line {seen[number]}.",
                    path=path,
                    line=line,
                    field="id",
                )
            seen[number] = line
            value = (row.get("who_is_human") or "").strip().upper()
            if value not in ("A", "B", "NA", ""):
                raise InputError(
                    f"{row.get('who_is_human')!r} is not A, B or NA.",
                    path=path,
                    line=line,
                    field="who_is_human",
                )
            score = {"A": 0.0, "B": 1.0}.get(value, NO_ANSWER)
            scores[by_row[number].pair_id] = score
    except csv.Error as error:
        raise InputError(f"is not valid CSV ({error}).", path=path, line=reader.line_num) from None
    for item in items:
        scores.setdefault(item.pair_id, NO_ANSWER)
    return scores
