"""LimeSurvey responses: "Responses > Export" as CSV.

Export with "Question code" headings and "Answer codes" (full answer texts also work).
One row per response; ``id`` is the response id, an empty ``submitdate`` marks an
unfinished response (kept, excluded). The judge id is ``prolificpid`` when the survey's
panel integration filled it, else the response id. LimeSurvey's timings are per group and
not exported under question codes, so response times are unknown.
"""

from __future__ import annotations

import re
from pathlib import Path

from sdtt.errors import InputError
from sdtt.questionnaires.exporters.limesurvey import PROLIFIC_CODES
from sdtt.questionnaires.questionnaire import Questionnaire
from sdtt.questionnaires.readers.common import JudgeAnswers, read_csv_rows

_CODE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9]*)")


def _column_name(heading: str, known: set[str]) -> str:
    """The question code of a heading ("p3k9x2q" or "p3k9x2q. Question text...")."""
    if heading.strip() in known:
        return heading.strip()
    match = _CODE.match(heading)
    if match and match.group(1) in known:
        return match.group(1)
    return heading.strip()


def read_limesurvey(path: str | Path, questionnaire: Questionnaire) -> list[JudgeAnswers]:
    """Respondents from a LimeSurvey response CSV."""
    path = Path(path)
    rows = read_csv_rows(path)
    if not rows:
        raise InputError("is empty.", path=path)
    known = set(questionnaire.question_names()) | {code for code, _ in PROLIFIC_CODES}
    known |= {"id", "submitdate"}
    header = [_column_name(h, known) for h in rows[0]]
    if "id" not in header:
        raise InputError(
            "has no 'id' column.",
            path=path,
            hint="Export with 'Question code' headings so columns are named by code.",
        )
    if not (set(header) & set(questionnaire.question_names())):
        raise InputError(
            "has no column of this questionnaire's questions.",
            path=path,
            hint="Export with 'Question code' headings, from the survey imported from "
            "this study's limesurvey.txt.",
        )
    column = {name: index for index, name in enumerate(header)}
    names = set(questionnaire.question_names())
    respondents: list[JudgeAnswers] = []
    for line, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue

        def cell(name: str, row: list[str] = row) -> str:
            index = column.get(name)
            return row[index].strip() if index is not None and index < len(row) else ""

        flags = [] if cell("submitdate") or "submitdate" not in column else ["did not finish"]
        judge_id = cell(PROLIFIC_CODES[0][0]) or f"limesurvey-{cell('id') or line}"
        respondents.append(
            JudgeAnswers(
                judge_id=judge_id,
                answers={name: cell(name) for name in header if name in names},
                flags=flags,
                where=f"{path}:{line}",
            )
        )
    return respondents
