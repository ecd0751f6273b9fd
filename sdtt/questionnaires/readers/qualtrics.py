"""Qualtrics responses: "Data & Analysis > Export data > CSV".

The file has three header rows: column names (export tags, which are sdtt's question
names), question texts, and ``{"ImportId": ...}`` objects. Both "use choice text" and
"use numeric values" exports work. Preview, test and spam responses and unfinished ones
are kept but excluded. The judge id is ``PROLIFIC_PID`` when captured, else
``ResponseId``; the response time of a pair is its page timer's "Page Submit".
"""

from __future__ import annotations

from pathlib import Path

from sdtt.errors import InputError
from sdtt.questionnaires.exporters.qualtrics import PROLIFIC_FIELDS
from sdtt.questionnaires.questionnaire import Questionnaire
from sdtt.questionnaires.readers.common import JudgeAnswers, read_csv_rows

PREVIEW_STATUSES = {"survey preview", "survey test", "spam", "1", "2", "8", "9"}


def _finished(value: str) -> bool:
    return value.strip().lower() in ("", "true", "1")


def read_qualtrics(path: str | Path, questionnaire: Questionnaire) -> list[JudgeAnswers]:
    """Respondents from a Qualtrics response CSV."""
    path = Path(path)
    rows = read_csv_rows(path, delimiters=",\t")
    if len(rows) < 3 or not rows[2] or not rows[2][0].lstrip().startswith('{"ImportId"'):
        raise InputError(
            "does not look like a Qualtrics response export (the third row should hold "
            '{"ImportId": ...} entries).',
            path=path,
            hint="Export from Data & Analysis as CSV, keeping the header rows.",
        )
    header = [name.strip() for name in rows[0]]
    column = {name: index for index, name in enumerate(header)}
    known = set(questionnaire.question_names())
    if not known & set(header):
        raise InputError(
            "has no column of this questionnaire's questions.",
            path=path,
            hint="Was it exported from the survey imported from this study's qualtrics.qsf?",
        )
    respondents: list[JudgeAnswers] = []
    for line, row in enumerate(rows[3:], start=4):
        if not any(cell.strip() for cell in row):
            continue

        def cell(name: str, row: list[str] = row) -> str:
            index = column.get(name)
            return row[index].strip() if index is not None and index < len(row) else ""

        answers = {name: cell(name) for name in header if name in known}
        seconds: dict[str, float] = {}
        for item in questionnaire.items:
            submit = cell(f"{item.time_name}_Page Submit")
            try:
                if submit:
                    seconds[item.id] = float(submit)
            except ValueError:
                raise InputError(
                    f"page timer {submit!r} is not a number.",
                    path=path,
                    line=line,
                    field=f"{item.time_name}_Page Submit",
                ) from None
        flags = []
        if cell("Status").lower() in PREVIEW_STATUSES:
            flags.append("preview, test or spam response")
        if not _finished(cell("Finished")):
            flags.append("did not finish")
        judge_id = cell(PROLIFIC_FIELDS[0]) or cell("ResponseId") or f"{path.stem}-{line}"
        respondents.append(
            JudgeAnswers(
                judge_id=judge_id,
                answers=answers,
                seconds=seconds,
                flags=flags,
                where=f"{path}:{line}",
                numeric_choices=True,
            )
        )
    return respondents
