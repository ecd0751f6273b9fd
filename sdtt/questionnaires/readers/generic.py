"""Answers from any other tool, as a long CSV: ``judge_id,question,answer[,seconds]``.

One row per answer. ``question`` is sdtt's question name (pair ids for judgements,
``<pair id>topic`` for topic checks, demographic names, ``strategy``); ``answer`` is the
option code or its text; ``seconds`` (optional) is time spent on a pair, given on the
judgement row. Judges and question names are those of ``questionnaire.csv``.
"""

from __future__ import annotations

from pathlib import Path

from sdtt.questionnaires.questionnaire import Questionnaire
from sdtt.questionnaires.readers.common import JudgeAnswers
from sdtt.questionnaires.readers.long_csv import read_table

COLUMNS = ("judge_id", "question", "answer")
HINT = "The header must be judge_id,question,answer (and optionally seconds)."


def read_generic(path: str | Path, questionnaire: Questionnaire) -> list[JudgeAnswers]:
    """Respondents from a long answers CSV."""
    names = set(questionnaire.question_names())
    by_judge: dict[str, JudgeAnswers] = {}
    for row in read_table(Path(path), COLUMNS, hint=HINT):
        judge_id, question = row.judge_id(), row["question"]
        if question not in names:
            raise row.error(
                f"question {question!r} is not in this questionnaire.", field="question"
            )
        respondent = by_judge.setdefault(judge_id, JudgeAnswers(judge_id=judge_id, where=row.where))
        respondent.answers[question] = row["answer"]
        seconds = row.number("seconds", what="seconds", field="seconds")
        if seconds is not None:
            respondent.seconds[question] = seconds
    return list(by_judge.values())
