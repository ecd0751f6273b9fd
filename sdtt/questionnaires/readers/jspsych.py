"""jsPsych data: the CSV the sdtt page writes (``jsPsych.data.get().csv()``).

One row per trial. Rows are grouped into respondents by ``judge_id`` (several judges'
files may be concatenated, as JATOS or cognition.run exports do, or with ``cat a.csv b.csv``:
each header row met again is read as the header of the rows after it). Judgement and topic
rows carry ``question`` and ``answer`` (the option code; the button index ``response``
is used if ``answer`` is empty); demographics and strategy rows carry ``response`` as a
JSON object of question name to answer. ``rt`` of a judgement row is its response time.
Reveal-mode ``belief`` rows carry the slider position in ``response`` (0-100).
"""

from __future__ import annotations

import json
from pathlib import Path

from sdtt.errors import InputError
from sdtt.files import loads_json
from sdtt.questionnaires.questionnaire import Questionnaire
from sdtt.questionnaires.readers.common import JudgeAnswers, read_csv_rows

REQUIRED_COLUMNS = ("role", "question", "answer", "response", "rt")


def read_jspsych(path: str | Path, questionnaire: Questionnaire) -> list[JudgeAnswers]:
    """Respondents from a jsPsych CSV."""
    path = Path(path)
    rows = read_csv_rows(path, delimiters=",")
    if not rows:
        raise InputError("is empty.", path=path)
    header = rows[0]
    column = {name: index for index, name in enumerate(header)}
    missing = [name for name in REQUIRED_COLUMNS if name not in column]
    if missing:
        raise InputError(
            f"lacks the column(s) {', '.join(missing)} that sdtt's jsPsych page writes.",
            path=path,
            hint="Import the CSV saved by the jspsych.html export.",
        )
    questions = {q.name: q for q in questionnaire.demographics}
    if questionnaire.strategy is not None:
        questions[questionnaire.strategy.name] = questionnaire.strategy
    choice_questions = {}
    for item in questionnaire.items:
        choice_questions[item.id] = item.judgement
        if item.topic is not None:
            choice_questions[item.topic.name] = item.topic

    by_judge: dict[str, JudgeAnswers] = {}
    for line, row in enumerate(rows[1:], start=2):
        if not any(row):
            continue
        if _is_header(row):
            # Files joined with `cat a.csv b.csv`: each part starts with its own header,
            # whose columns may come in another order.
            column = {name: index for index, name in enumerate(row)}
            continue

        def cell(name: str, row: list[str] = row, column: dict[str, int] = column) -> str:
            index = column.get(name)
            return row[index] if index is not None and index < len(row) else ""

        form = cell("form").strip()
        if form and form != questionnaire.id:
            raise InputError(
                f"holds answers to questionnaire {form!r}, not {questionnaire.id!r}.",
                path=path,
                line=line,
                field="form",
                hint="Import it with the study folder it was exported from.",
            )
        judge_id = cell("judge_id").strip() or path.stem
        respondent = by_judge.setdefault(
            judge_id, JudgeAnswers(judge_id=judge_id, where=f"{path}:{line}")
        )
        role = cell("role")
        if role in ("judgement", "topic"):
            name = cell("question")
            question = choice_questions.get(name)
            if question is None:
                raise InputError(
                    f"question {name!r} is not in this questionnaire.", path=path, line=line
                )
            answer = cell("answer").strip()
            response = cell("response").strip()
            if not answer and response.isdigit() and int(response) < len(question.choices or ()):
                answer = (question.choices or [])[int(response)].value
            respondent.answers[name] = answer
            if role == "judgement" and cell("rt").strip():
                respondent.seconds[name] = _seconds(cell("rt"), path, line)
        elif role == "belief":
            # Reveal mode: a slider after each turn (read into traces, not judgements).
            name = cell("question")
            respondent.answers[name] = cell("response").strip()
            if cell("rt").strip():
                respondent.seconds[name] = _seconds(cell("rt"), path, line)
        elif role in ("demographics", "strategy"):
            try:
                response = loads_json(cell("response") or "{}")
            except json.JSONDecodeError:
                raise InputError(
                    "response is not a JSON object.", path=path, line=line, field="response"
                ) from None
            if not isinstance(response, dict):
                raise InputError(
                    "response is not a JSON object.", path=path, line=line, field="response"
                )
            for name, value in response.items():
                if name in questions and isinstance(value, str):
                    respondent.answers[name] = value
    return list(by_judge.values())


def _is_header(row: list[str]) -> bool:
    """Whether ``row`` is a header row (jsPsych writes every column name in it)."""
    return set(REQUIRED_COLUMNS) <= {cell.strip() for cell in row}


def _seconds(rt: str, path: Path, line: int) -> float:
    """A row's response time (jsPsych's ``rt``, milliseconds) in seconds."""
    try:
        return float(rt) / 1000
    except ValueError:
        raise InputError(f"rt {rt!r} is not a number.", path=path, line=line, field="rt") from None
