"""The questionnaire as one long CSV table, for tools sdtt has no exporter for.

One row per thing shown, in order: the instructions, each demographic question, each
chat line of each pair, each pair's questions, the strategy question. Choice questions
list their options as ``code=label`` separated by ``|``. Texts are plain (not escaped):
whoever builds a web survey from this table must escape them for HTML. A text that a
spreadsheet would run as a formula (it starts with ``=``, ``+``, ``-``, ``@``, a tab or a
carriage return) or that starts with an apostrophe gets a leading apostrophe
(:func:`sdtt.spreadsheet.safe_cell`); :func:`sdtt.spreadsheet.restore_cell` removes it.
Answers collected with such a tool come back through the generic CSV import
(``judge_id,question,answer``).
"""

from __future__ import annotations

import csv
import io

from sdtt.questionnaires.layout import SPEAKER_LABELS
from sdtt.questionnaires.questionnaire import Question, Questionnaire
from sdtt.spreadsheet import safe_cell

FILENAME = "questionnaire.csv"
MEDIA_TYPE = "text/csv"
COLUMNS = (
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
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, restval="", lineterminator="\n")
    writer.writeheader()
    writer.writerows({column: safe_cell(value) for column, value in row.items()} for row in rows)
    return buffer.getvalue()
