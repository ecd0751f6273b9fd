"""Answers to a rating task (``sdtt align``) from the survey tools that can field one.

- SurveyJS: result objects (the formats the questionnaire reader accepts); each pair's
  question is named by its pair id.
- jsPsych: the CSV the rating page writes (rows with ``role`` = ``rating``).
- CSV: a long table ``judge_id,question,answer[,seconds]`` with pair ids as questions.

Each reader returns the raw answers; :mod:`sdtt.align.rating_import` turns them into ratings.
A pair a judge was not shown (no answer) gives no answer.
"""

from __future__ import annotations

from pathlib import Path

from sdtt.questionnaires.exporters.surveyjs import TIMES_KEY
from sdtt.questionnaires.rating_task import PAGE_SUFFIX, RatingTask
from sdtt.questionnaires.readers.generic import COLUMNS, HINT
from sdtt.questionnaires.readers.long_csv import read_table
from sdtt.questionnaires.readers.surveyjs import ID_KEYS, read_results

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
    table = read_table(
        path,
        ("judge_id", "role", "question", "answer") if jspsych else COLUMNS,
        hint="Import the CSV the rating page saved." if jspsych else HINT,
        delimiters="," if jspsych else ",;\t",
    )
    pair_ids = {p.id for p in task.pairs}
    answers: list[RatingAnswer] = []
    for row in table:
        if jspsych and row["role"] != "rating":
            continue
        if jspsych and row["task"] and row["task"] != task.id:
            raise row.error(
                f"holds ratings of task {row['task']!r}, not {task.id!r}.",
                field="task",
                hint="Import it with the task folder it was exported from.",
            )
        judge_id, question = row.judge_id(), row["question"]
        if question not in pair_ids:
            raise row.error(f"pair {question!r} is not in this rating task.", field="question")
        answer = row["answer"]
        if not answer:
            continue
        seconds = row.number("rt" if jspsych else "seconds", what="time", field="seconds")
        if seconds is not None and jspsych:
            seconds /= 1000
        answers.append((judge_id, question, answer, seconds, row.where))
    return answers


def read_jspsych_ratings(path: Path, task: RatingTask) -> list[RatingAnswer]:
    """Ratings from the CSV the jsPsych rating page saved."""
    return _table(path, task, jspsych=True)


def read_csv_ratings(path: Path, task: RatingTask) -> list[RatingAnswer]:
    """Ratings from a long CSV ``judge_id,question,answer[,seconds]``."""
    return _table(path, task, jspsych=False)
