"""Answers to a rating task (``sdtt align``) from the survey tools that can field one.

- SurveyJS: result objects (the formats the questionnaire importer accepts); each pair's
  question is named by its pair id.
- jsPsych: the CSV the rating page writes (rows with ``role`` = ``rating``).
- CSV: a long table ``judge_id,question,answer[,seconds]`` with pair ids as questions.

Each reader returns the raw answers; :mod:`sdtt.align.importers` turns them into ratings.
A pair a judge was not shown (no answer) gives no answer.
"""

from __future__ import annotations

from pathlib import Path

from sdtt.errors import InputError
from sdtt.questionnaires.exporters.surveyjs import TIMES_KEY
from sdtt.questionnaires.importers.common import read_csv_rows
from sdtt.questionnaires.importers.surveyjs import ID_KEYS, read_results
from sdtt.questionnaires.rating_task import PAGE_SUFFIX, RatingTask

RatingAnswer = tuple[str, str, str, float | None, str]
"""(judge id, pair id, raw answer, seconds, where)."""


def read_surveyjs_ratings(path: Path, task: RatingTask) -> list[RatingAnswer]:
    """Ratings from SurveyJS result objects; each pair's question is named by its pair id."""
    pair_ids = {p.id for p in task.pairs}
    answers: list[RatingAnswer] = []
    for index, (where, result) in enumerate(read_results(path), start=1):
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


def _table(path: Path, task: RatingTask, *, jspsych: bool) -> list[RatingAnswer]:
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
    answers: list[RatingAnswer] = []
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


def read_jspsych_ratings(path: Path, task: RatingTask) -> list[RatingAnswer]:
    """Ratings from the CSV the jsPsych rating page saved."""
    return _table(path, task, jspsych=True)


def read_csv_ratings(path: Path, task: RatingTask) -> list[RatingAnswer]:
    """Ratings from a long CSV ``judge_id,question,answer[,seconds]``."""
    return _table(path, task, jspsych=False)
