"""Answers from any other tool, as a long CSV: ``judge_id,question,answer[,seconds]``.

One row per answer. ``question`` is sdtt's question name (pair ids for judgements,
``<pair id>topic`` for topic checks, demographic names, ``strategy``); ``answer`` is the
option code or its text; ``seconds`` (optional) is time spent on a pair, given on the
judgement row. Judges and question names are those of ``questionnaire.csv``.
"""

from __future__ import annotations

from pathlib import Path

from sdtt.errors import InputError
from sdtt.questionnaires.importers.common import JudgeAnswers, read_csv_rows
from sdtt.questionnaires.questionnaire import Questionnaire

COLUMNS = ("judge_id", "question", "answer")


def read_generic(path: str | Path, questionnaire: Questionnaire) -> list[JudgeAnswers]:
    """Respondents from a long answers CSV."""
    path = Path(path)
    rows = read_csv_rows(path)
    if not rows:
        raise InputError("is empty.", path=path)
    header = [h.strip().lower() for h in rows[0]]
    missing = [name for name in COLUMNS if name not in header]
    if missing:
        raise InputError(
            f"lacks the column(s) {', '.join(missing)}.",
            path=path,
            line=1,
            hint="The header must be judge_id,question,answer (and optionally seconds).",
        )
    column = {name: index for index, name in enumerate(header)}
    names = set(questionnaire.question_names())
    by_judge: dict[str, JudgeAnswers] = {}
    for line, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue

        def cell(name: str, row: list[str] = row) -> str:
            index = column.get(name)
            return row[index].strip() if index is not None and index < len(row) else ""

        judge_id, question = cell("judge_id"), cell("question")
        if not judge_id:
            raise InputError("judge_id is empty.", path=path, line=line, field="judge_id")
        if question not in names:
            raise InputError(
                f"question {question!r} is not in this questionnaire.",
                path=path,
                line=line,
                field="question",
            )
        respondent = by_judge.setdefault(
            judge_id, JudgeAnswers(judge_id=judge_id, where=f"{path}:{line}")
        )
        respondent.answers[question] = cell("answer")
        if cell("seconds"):
            try:
                respondent.seconds[question] = float(cell("seconds"))
            except ValueError:
                raise InputError(
                    f"seconds {cell('seconds')!r} is not a number.",
                    path=path,
                    line=line,
                    field="seconds",
                ) from None
    return list(by_judge.values())
