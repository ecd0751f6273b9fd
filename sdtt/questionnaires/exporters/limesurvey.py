"""LimeSurvey tab-separated survey structure (``.txt``): import with "Import survey".

Rows, related by their order: ``S`` (survey settings), ``SL`` (texts of the survey
language), then per group a ``G`` row followed by its ``Q`` rows, each list question
followed by its ``A`` (answer option) rows. Groups: "About you" (demographics, and hidden
short-text questions ``prolificpid``/``studyid``/``sessionid`` for Prolific's ids), one
group per pair (the chats as a text-display question, the judgement and topic check as
list questions) sharing one randomization group when the study randomises order, and a
final group with the strategy question.

Texts are HTML (escaped, the title too); no cell starts with a character that makes a
spreadsheet read it as a formula (see :mod:`sdtt.spreadsheet`).

LimeSurvey reads URL parameters into questions through the survey's "Panel integration"
settings, which this file cannot carry: map ``PROLIFIC_PID`` to ``prolificpid`` (and so
on) there after importing.
"""

from __future__ import annotations

import csv
import io

from sdtt.questionnaires.layout import escape_html, pair_html, paragraphs_html
from sdtt.questionnaires.questionnaire import Question, Questionnaire
from sdtt.spreadsheet import safe_cell, safe_html_cell

FILENAME = "limesurvey.txt"
MEDIA_TYPE = "text/tab-separated-values"
LANGUAGE = "en"
COLUMNS = (
    "id",
    "related_id",
    "class",
    "type/scale",
    "name",
    "relevance",
    "text",
    "help",
    "language",
    "validation",
    "mandatory",
    "other",
    "default",
    "same_default",
    "random_group",
    "hidden",
)
PROLIFIC_CODES = (
    ("prolificpid", "PROLIFIC_PID"),
    ("studyid", "STUDY_ID"),
    ("sessionid", "SESSION_ID"),
)
PAIR_RANDOM_GROUP = "pairs"

Row = dict[str, str]


def _row(kind: str, **fields: str) -> Row:
    fields = {key.replace("type_scale", "type/scale"): value for key, value in fields.items()}
    return {"class": kind, **fields}


def _question_rows(question: Question) -> list[Row]:
    kind = ("T" if question.multiline else "S") if question.choices is None else "L"
    rows = [
        _row(
            "Q",
            type_scale=kind,
            name=question.name,
            relevance="1",
            text=escape_html(question.text),
            language=LANGUAGE,
            mandatory="Y" if question.required else "N",
            other="N",
        )
    ]
    for choice in question.choices or ():
        rows.append(
            _row(
                "A",
                type_scale="0",
                name=choice.value,
                text=escape_html(choice.label),
                language=LANGUAGE,
            )
        )
    return rows


def structure_rows(questionnaire: Questionnaire) -> list[Row]:
    """The import file's rows, in order."""
    rows: list[Row] = [
        _row("S", name="language", text=LANGUAGE),
        _row("S", name="format", text="G"),
        _row("S", name="anonymized", text="Y"),
        _row("S", name="datestamp", text="Y"),
        _row("S", name="savetimings", text="Y"),
        _row("S", name="showprogress", text="Y"),
        _row("S", name="allowprev", text="N"),
        _row("S", name="questionindex", text="0"),
        _row("S", name="showwelcome", text="Y"),
        # LimeSurvey shows the title as HTML and expands {...} in it: escape both.
        _row("SL", name="surveyls_title", text=escape_html(questionnaire.title), language=LANGUAGE),
        _row("SL", name="surveyls_description", text="", language=LANGUAGE),
        _row(
            "SL",
            name="surveyls_welcometext",
            text=paragraphs_html(questionnaire.intro),
            language=LANGUAGE,
        ),
        _row(
            "SL",
            name="surveyls_endtext",
            text=paragraphs_html(questionnaire.end_text),
            language=LANGUAGE,
        ),
    ]
    if questionnaire.completion_url:
        rows.insert(0, _row("S", name="autoredirect", text="Y"))
        rows.append(
            _row("SL", name="surveyls_url", text=questionnaire.completion_url, language=LANGUAGE)
        )
    group = 0

    def add_group(name: str, random_group: str = "") -> None:
        nonlocal group
        group += 1
        rows.append(
            _row(
                "G",
                type_scale=f"G{group}",
                name=name,
                relevance="1",
                text="",
                language=LANGUAGE,
                random_group=random_group,
            )
        )

    if questionnaire.demographics or questionnaire.capture_prolific:
        add_group("About you")
        for question in questionnaire.demographics:
            rows += _question_rows(question)
        if questionnaire.capture_prolific:
            for code, parameter in PROLIFIC_CODES:
                rows.append(
                    _row(
                        "Q",
                        type_scale="S",
                        name=code,
                        relevance="1",
                        text=parameter,
                        language=LANGUAGE,
                        mandatory="N",
                        other="N",
                        hidden="1",
                    )
                )
    random_group = PAIR_RANDOM_GROUP if questionnaire.randomise_order else ""
    for number, item in enumerate(questionnaire.items, start=1):
        add_group(f"Pair {number}", random_group)
        rows.append(
            _row(
                "Q",
                type_scale="X",
                name=item.view_name,
                relevance="1",
                text=pair_html(item),
                language=LANGUAGE,
                mandatory="N",
                other="N",
            )
        )
        rows += _question_rows(item.judgement)
        if item.topic is not None:
            rows += _question_rows(item.topic)
    if questionnaire.strategy is not None:
        add_group("Last question")
        rows += _question_rows(questionnaire.strategy)
    return rows


HTML_COLUMNS = ("text", "help")
"""Columns LimeSurvey shows as HTML."""


def _clean(column: str, value: str) -> str:
    # The reader reads line by line after normalising line breaks, so a field must
    # not contain one; tabs would split it.
    value = " ".join(value.replace("\t", " ").splitlines())
    # Researchers open this file in spreadsheets too: no cell may start a formula.
    return safe_html_cell(value) if column in HTML_COLUMNS else safe_cell(value)


def export(questionnaire: Questionnaire) -> str:
    """The tab-separated text."""
    buffer = io.StringIO()
    writer = csv.DictWriter(
        buffer,
        fieldnames=COLUMNS,
        delimiter="\t",
        quotechar='"',
        quoting=csv.QUOTE_MINIMAL,
        lineterminator="\n",
        restval="",
    )
    writer.writeheader()
    for row in structure_rows(questionnaire):
        writer.writerow({key: _clean(key, value) for key, value in row.items()})
    return buffer.getvalue()
