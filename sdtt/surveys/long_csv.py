"""The long CSV: tasks as one long table for tools sdtt has no exporter for, and answers
from any tool as ``judge_id,question,answer[,seconds]``.

The questionnaire's table: one row per thing shown, in order: the instructions, each
demographic question, each chat line of each pair, each pair's questions, the strategy
question. Choice questions list their options as ``code=label`` separated by ``|``.
Texts are plain (not escaped): whoever builds a web survey from this table must escape
them for HTML. A text that a spreadsheet would run as a formula (it starts with ``=``,
``+``, ``-``, ``@``, a tab or a carriage return) or that starts with an apostrophe gets a
leading apostrophe (:func:`sdtt.spreadsheet.safe_cell`); :func:`sdtt.spreadsheet.restore_cell`
removes it. A rating task's table lists per form and pair its lines and question.

Answers: one row per answer. ``question`` is sdtt's question name (pair ids for
judgements and ratings, ``<pair id>topic`` for topic checks, demographic names,
``strategy``); ``answer`` is the option code or its text; ``seconds`` (optional) is time
spent on a pair, given on the judgement row. Judges and question names are those of
``questionnaire.csv``.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from sdtt.spreadsheet import safe_cell
from sdtt.surveys.answer_files import JudgeAnswers, rating_answers, read_table
from sdtt.surveys.tool import RatingFormat, SurveyTool
from sdtt.tasks.layout import SPEAKER_LABELS
from sdtt.tasks.questionnaire import Question, Questionnaire
from sdtt.tasks.rating_task import RatingAnswer, RatingTask, scale_labels

FILENAME = "questionnaire.csv"
MEDIA_TYPE = "text/csv"
EXPORT_COLUMNS = (
    "section",
    "pair_number",
    "pair_id",
    "chat",
    "element",
    "name",
    "line",
    "speaker",
    "time",
    "text",
    "options",
    "required",
)


def _question(section: str, question: Question, **extra: str) -> dict[str, str]:
    options = "|".join(f"{c.value}={c.label.replace('|', '/')}" for c in question.choices or ())
    return {
        "section": section,
        "element": "choice" if question.choices is not None else "text_answer",
        "name": question.name,
        "text": question.text,
        "options": options,
        "required": "yes" if question.required else "no",
        **extra,
    }


def export(questionnaire: Questionnaire) -> str:
    """The CSV text."""
    rows: list[dict[str, str]] = [
        {"section": "intro", "element": "title", "text": questionnaire.title},
        {"section": "intro", "element": "instructions", "text": questionnaire.intro},
    ]
    rows += [_question("demographics", q) for q in questionnaire.demographics]
    for number, item in enumerate(questionnaire.items, start=1):
        pair = {"pair_number": str(number), "pair_id": item.id}
        for chat_number, lines in enumerate(item.chats, start=1):
            for line in lines:
                rows.append(
                    {
                        "section": "pair",
                        **pair,
                        "chat": str(chat_number),
                        "element": "line",
                        "line": str(line.number),
                        "speaker": SPEAKER_LABELS[line.speaker],
                        "time": line.time or "",
                        "text": line.text,
                    }
                )
        rows.append(_question("pair", item.judgement, **pair))
        if item.topic is not None:
            rows.append(_question("pair", item.topic, **pair))
    if questionnaire.strategy is not None:
        rows.append(_question("final", questionnaire.strategy))
    rows.append({"section": "final", "element": "end_text", "text": questionnaire.end_text})
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=EXPORT_COLUMNS, restval="", lineterminator="\n")
    writer.writeheader()
    writer.writerows({column: safe_cell(value) for column, value in row.items()} for row in rows)
    return buffer.getvalue()


ANSWER_COLUMNS = ("judge_id", "question", "answer")
HINT = "The header must be judge_id,question,answer (and optionally seconds)."


def read_answers(path: str | Path, questionnaire: Questionnaire) -> list[JudgeAnswers]:
    """Respondents from a long answers CSV."""
    names = set(questionnaire.question_names())
    by_judge: dict[str, JudgeAnswers] = {}
    for row in read_table(Path(path), ANSWER_COLUMNS, hint=HINT):
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


RATING_COLUMNS = ("form", "pair_id", "element", "position", "line", "speaker", "text", "options")


def rating_table(task: RatingTask) -> str:
    """The long CSV: the instructions, then per form and pair its lines and question.

    Answers come back as ``judge_id,question,answer[,seconds]`` with the pair id as
    question and the rating as answer.
    """
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=RATING_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerow({"element": "title", "text": safe_cell(task.title)})
    writer.writerow({"element": "instructions", "text": safe_cell(task.intro)})
    options = "|".join(f"{value}={label}" for value, label in scale_labels(task))
    forms = task.forms or [[p.id for p in task.pairs]]
    for number, form in enumerate(forms, start=1):
        for pair_id in form:
            pair = task.pair(pair_id)
            for position, item_id in enumerate((pair.first, pair.second), start=1):
                for line in task.item(item_id).lines:
                    writer.writerow(
                        {
                            "form": str(number),
                            "pair_id": pair.id,
                            "element": "chat_line",
                            "position": str(position),
                            "line": str(line.number),
                            "speaker": line.speaker,
                            "text": safe_cell(line.text),
                        }
                    )
            writer.writerow(
                {
                    "form": str(number),
                    "pair_id": pair.id,
                    "element": "rating",
                    "text": safe_cell(task.question),
                    "options": safe_cell(options),
                }
            )
    writer.writerow({"element": "end", "text": safe_cell(task.end_text)})
    return out.getvalue()


def rating_files(task: RatingTask) -> dict[str, str]:
    """The long CSV."""
    return {"rating-task.csv": rating_table(task)}


def read_ratings(path: Path, task: RatingTask) -> list[RatingAnswer]:
    """Ratings from a long CSV ``judge_id,question,answer[,seconds]``."""
    return rating_answers(read_table(path, ANSWER_COLUMNS, hint=HINT), task, seconds="seconds")


ENTRIES = (
    SurveyTool(
        "csv",
        "long CSV table for other tools",
        FILENAME,
        lambda questionnaire, options: export(questionnaire),
        read=read_answers,
        answers="long CSV judge_id,question,answer[,seconds] from any other tool",
        rating=RatingFormat(rating_files, read_ratings),
    ),
)
"""The long CSV as :mod:`sdtt.surveys.tools` lists it."""
