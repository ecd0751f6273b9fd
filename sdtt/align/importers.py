"""Human ratings back from the survey tools, as :class:`~sdtt.align.ratings.Rating` records.

- ``surveyjs``: SurveyJS result objects (the formats the questionnaire importer accepts);
  each pair's question is named by its pair id.
- ``jspsych``: the CSV the rating page writes (rows with ``role`` = ``rating``).
- ``csv``: a long table ``judge_id,question,answer[,seconds]`` with pair ids as questions.

An answer off the scale is kept as an excluded record without a rating; a pair a judge
was not shown (no answer) gives no record.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from sdtt.align.export import PAGE_SUFFIX, scale_labels
from sdtt.align.ratings import Rating
from sdtt.align.task import RatingKey, RatingTask
from sdtt.errors import InputError
from sdtt.questionnaires.exporters.surveyjs import TIMES_KEY
from sdtt.questionnaires.importers.common import read_csv_rows
from sdtt.questionnaires.importers.surveyjs import ID_KEYS, _results

IMPORT_FORMATS: tuple[str, ...] = ("surveyjs", "jspsych", "csv")

Answer = tuple[str, str, str, float | None, str]
"""(judge id, pair id, raw answer, seconds, where)."""


def read_scale_value(task: RatingTask, raw: str) -> int | None:
    """The rating ``raw`` names: a scale value or its exact label; None otherwise."""
    text = raw.strip()
    for value, label in scale_labels(task):
        if text in (str(value), label) or text.casefold() == label.casefold():
            return value
    return None


def _rating(task: RatingTask, key: RatingKey, answer: Answer, fmt: str, path: Path) -> Rating:
    judge_id, pair_id, raw, seconds, where = answer
    pair = task.pair(pair_id)
    value = read_scale_value(task, raw)
    reason = None
    if value is None:
        reason = (
            f"unreadable: answer {raw[:40]!r} is not on the scale {task.scale_min}-{task.scale_max}"
        )
    return Rating(
        task=key.task,
        task_id=task.id,
        judge_id=judge_id,
        judge_type="human",
        cohort="human",
        pair_id=pair.id,
        first=pair.first,
        second=pair.second,
        rating=value,
        scale_min=task.scale_min,
        scale_max=task.scale_max,
        response_time_s=seconds,
        excluded=reason is not None,
        exclusion_reason=reason,
        source=f"{fmt}:{path.name}",
        condition={"where": where},
    )


def _surveyjs(path: Path, task: RatingTask) -> list[Answer]:
    pair_ids = {p.id for p in task.pairs}
    answers: list[Answer] = []
    for index, (where, result) in enumerate(_results(path), start=1):
        judge_id = next(
            (str(result[k]).strip() for k in ID_KEYS if str(result.get(k, "")).strip()),
            f"{path.stem}-{index}",
        )
        times = result.get(TIMES_KEY)
        for name, value in result.items():
            if name not in pair_ids or isinstance(value, bool) or value in (None, ""):
                continue
            seconds = times.get(name + PAGE_SUFFIX) if isinstance(times, dict) else None
            shown = float(seconds) if isinstance(seconds, int | float) and seconds >= 0 else None
            answers.append((judge_id, name, str(value), shown, where))
    return answers


def _table(path: Path, task: RatingTask, *, jspsych: bool) -> list[Answer]:
    rows = read_csv_rows(path, delimiters="," if jspsych else ",;\t")
    if not rows:
        raise InputError("is empty.", path=path)
    header = [h.strip().lower() for h in rows[0]]
    needed = (
        ("judge_id", "role", "question", "answer")
        if jspsych
        else ("judge_id", "question", "answer")
    )
    missing = [name for name in needed if name not in header]
    if missing:
        raise InputError(
            f"lacks the column(s) {', '.join(missing)}.",
            path=path,
            line=1,
            hint="Import the CSV the rating page saved."
            if jspsych
            else "The header must be judge_id,question,answer (and optionally seconds).",
        )
    column = {name: index for index, name in enumerate(header)}
    pair_ids = {p.id for p in task.pairs}
    answers: list[Answer] = []
    for line, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue

        def cell(name: str, row: list[str] = row) -> str:
            index = column.get(name)
            return row[index].strip() if index is not None and index < len(row) else ""

        if jspsych and cell("role") != "rating":
            continue
        if jspsych and cell("task") and cell("task") != task.id:
            raise InputError(
                f"holds ratings of task {cell('task')!r}, not {task.id!r}.",
                path=path,
                line=line,
                field="task",
                hint="Import it with the task folder it was exported from.",
            )
        judge_id, question = cell("judge_id"), cell("question")
        if not judge_id:
            raise InputError("judge_id is empty.", path=path, line=line, field="judge_id")
        if question not in pair_ids:
            raise InputError(
                f"pair {question!r} is not in this rating task.",
                path=path,
                line=line,
                field="question",
            )
        answer = cell("answer")
        if not answer:
            continue
        seconds: float | None = None
        timing = cell("rt") if jspsych else cell("seconds")
        if timing:
            try:
                seconds = float(timing) / (1000 if jspsych else 1)
            except ValueError:
                raise InputError(
                    f"time {timing!r} is not a number.", path=path, line=line, field="seconds"
                ) from None
        answers.append((judge_id, question, answer, seconds, f"{path}:{line}"))
    return answers


READERS: dict[str, Callable[[Path, RatingTask], list[Answer]]] = {
    "surveyjs": _surveyjs,
    "jspsych": lambda path, task: _table(path, task, jspsych=True),
    "csv": lambda path, task: _table(path, task, jspsych=False),
}


def import_ratings(path: Path, task: RatingTask, key: RatingKey, fmt: str) -> list[Rating]:
    """Every rating in a response file of format ``fmt``."""
    reader = READERS.get(fmt)
    if reader is None:
        raise InputError(
            f"format {fmt!r} is not supported for rating tasks.",
            field="--format",
            hint=f"Use one of {', '.join(IMPORT_FORMATS)}.",
        )
    return [_rating(task, key, answer, fmt, path) for answer in reader(path, task)]
