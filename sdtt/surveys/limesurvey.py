"""LimeSurvey: the tab-separated survey structure (``.txt``) and its response CSV.

The structure (import it with "Import survey"): rows related by their order, ``S``
(survey settings), ``SL`` (texts of the survey language), then per group a ``G`` row
followed by its ``Q`` rows, each list question followed by its ``A`` (answer option)
rows. Groups: "About you" (demographics, and hidden short-text questions
``prolificpid``/``studyid``/``sessionid`` for Prolific's ids), one group per pair (the
chats as a text-display question, the judgement and topic check as list questions)
sharing one randomization group when the study randomises order, and a final group with
the strategy question. Texts are HTML (escaped, the title too); no cell starts with a
character that makes a spreadsheet read it as a formula (see :mod:`sdtt.spreadsheet`).
LimeSurvey reads URL parameters into questions through the survey's "Panel integration"
settings, which this file cannot carry: map ``PROLIFIC_PID`` to ``prolificpid`` (and so
on) there after importing.

The responses ("Responses > Export" as CSV, with "Question code" headings and "Answer
codes"; full answer texts also work): one row per response; ``id`` is the response id,
an empty ``submitdate`` marks an unfinished response (kept, excluded). The judge id is
``prolificpid`` when the survey's panel integration filled it, else the response id.
LimeSurvey's timings are per group and not exported under question codes, so response
times are unknown.

LimeSurvey publishes no schema for its import file, so :func:`check` tests what an
import depends on: the columns it reads, question and answer codes, unique names.
"""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from pathlib import Path

from sdtt.errors import InputError
from sdtt.spreadsheet import safe_cell, safe_html_cell
from sdtt.surveys.answer_files import JudgeAnswers, read_csv_rows
from sdtt.surveys.tool import SurveyTool
from sdtt.tasks.layout import escape_html, pair_html, paragraphs_html
from sdtt.tasks.questionnaire import Question, Questionnaire

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


_HEADING_CODE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9]*)")


def _column_name(heading: str, known: set[str]) -> str:
    """The question code of a heading ("p3k9x2q" or "p3k9x2q. Question text...")."""
    if heading.strip() in known:
        return heading.strip()
    match = _HEADING_CODE.match(heading)
    if match and match.group(1) in known:
        return match.group(1)
    return heading.strip()


def read_answers(path: str | Path, questionnaire: Questionnaire) -> list[JudgeAnswers]:
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


_QUESTION_CODE = re.compile(r"^[A-Za-z][A-Za-z0-9]{0,19}$")
_ANSWER_CODE = re.compile(r"^[A-Za-z0-9]{1,5}$")


def check(text: str) -> list[str]:
    """Problems of a LimeSurvey tab-separated import file."""
    rows = list(csv.DictReader(io.StringIO(text), delimiter="\t"))
    problems: list[str] = []
    if not rows:
        return ["the file has no rows"]
    columns = set(rows[0])
    for required in ("class", "type/scale", "name", "text", "language"):
        if required not in columns:
            problems.append(f"column {required!r} is missing")
    if problems:
        return problems
    settings = {row["name"] for row in rows if row["class"] == "S"}
    if "language" not in settings:
        problems.append("no S row sets the survey language")
    if not any(row["class"] == "SL" and row["name"] == "surveyls_title" for row in rows):
        problems.append("no SL row gives the survey title")
    codes: Counter[str] = Counter()
    current: dict[str, str] | None = None
    answers: Counter[str] = Counter()
    in_group = False

    def close_question() -> None:
        if current is not None and current["type/scale"] in ("L", "!") and not answers:
            problems.append(f"list question {current['name']!r} has no answer options")

    for number, row in enumerate(rows, start=2):
        kind = row["class"]
        if kind not in ("S", "SL", "G", "Q", "SQ", "A"):
            problems.append(f"line {number}: unknown class {kind!r}")
        if kind == "G":
            close_question()
            current, answers, in_group = None, Counter(), True
        elif kind == "Q":
            close_question()
            if not in_group:
                problems.append(f"line {number}: question before any group")
            if not _QUESTION_CODE.match(row["name"]):
                problems.append(
                    f"line {number}: question code {row['name']!r} must be a letter and up to "
                    "19 letters or digits"
                )
            codes[row["name"]] += 1
            current, answers = row, Counter()
        elif kind == "A":
            if current is None:
                problems.append(f"line {number}: answer option outside a question")
                continue
            if not _ANSWER_CODE.match(row["name"]):
                problems.append(
                    f"line {number}: answer code {row['name']!r} must be 1-5 letters or digits"
                )
            answers[row["name"]] += 1
            if answers[row["name"]] > 1:
                problems.append(
                    f"line {number}: answer code {row['name']!r} repeats in question "
                    f"{current['name']!r}"
                )
        for value in row.values():
            if value is not None and ("\n" in value or "\r" in value):
                problems.append(f"line {number}: a field holds a line break")
                break
    close_question()
    for code, uses in codes.items():
        if uses > 1:
            problems.append(f"question code {code!r} is used {uses} times")
    return problems


ENTRIES = (
    SurveyTool(
        "limesurvey",
        "LimeSurvey tab-separated import file",
        FILENAME,
        lambda questionnaire, options: export(questionnaire),
        read=read_answers,
        answers="LimeSurvey response CSV with question-code headings",
    ),
)
"""LimeSurvey as :mod:`sdtt.surveys.tools` lists it."""
