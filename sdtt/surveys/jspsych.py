"""jsPsych: self-contained HTML pages (jsPsych 8 and its plugins inlined) and the CSV they
save, for every kind of task.

Host a page anywhere static (a university web space, JATOS, Pavlovia, cognition.run) or
open it from disk. The questionnaire's trials: instructions, demographics
(``survey-multi-choice`` and ``survey-text``), per pair a judgement and a topic check
(``html-button-response``, the pairs in random order per judge when the study randomises
order), the strategy question. Every trial's data carries ``role`` (intro, demographics,
judgement, topic, strategy), ``item`` (the pair id) and ``answer`` (the option code), plus
``judge_id`` and the Prolific URL parameters on every row. At the end the page shows a
download button for the CSV, posts the CSV to ``data_url`` when the export was given one,
and links to the Prolific completion URL. ``?simulate=data-only`` (or ``visual``) runs
jsPsych's simulation instead of a judge, for testing. Under a judge design the page shows
one form's items in the form's order: ``?form=N`` picks form N (give each judge group its
own link), otherwise a form is drawn at random; rows then carry ``design_form``. Each
form holds its own copy of its items, scrambled with its own key (:func:`scramble`), so
the page source shows no pair id or chat that every form shares, as a catch pair would be.

The CSV (``jsPsych.data.get().csv()``): one row per trial. Rows are grouped into
respondents by ``judge_id`` (several judges' files may be concatenated, as JATOS or
cognition.run exports do, or with ``cat a.csv b.csv``: each header row met again is read
as the header of the rows after it). Judgement and topic rows carry ``question`` and
``answer`` (the option code; the button index ``response`` is used if ``answer`` is
empty); demographics and strategy rows carry ``response`` as a JSON object of question
name to answer. ``rt`` of a judgement row is its response time. Reveal-mode ``belief``
rows carry the slider position in ``response`` (0-100); rating rows (``role`` =
``rating``) a rating; single-item rows (``single``) the screen's answers as JSON in
``answer``, ``reason`` rows the reason.

Reveal mode (``html-slider-response``) shuffles the pairs per judge itself when the study
randomises order.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Callable, Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from markupsafe import Markup

from sdtt.errors import InputError
from sdtt.files import loads_json
from sdtt.surveys.answer_files import (
    JudgeAnswers,
    Row,
    rating_answers,
    read_csv_rows,
    read_table,
)
from sdtt.surveys.tool import RatingFormat, RevealExport, SingleFormat, SurveyTool
from sdtt.tasks.layout import escape_html, pair_html, paragraphs_html
from sdtt.tasks.questionnaire import PairItem, Question, Questionnaire
from sdtt.tasks.rating_task import RatingAnswer, RatingTask, pair_view_html, scale_labels
from sdtt.tasks.reveal_turns import (
    BELIEF_TEXT,
    REVEAL_NOTE,
    SLIDER_LABELS,
    belief_name,
    reveal_steps,
)
from sdtt.tasks.single_task import (
    VERDICTS,
    ItemView,
    SingleAnswer,
    SingleTask,
    confidence_labels,
    item_answer,
    item_html,
)

FILENAME = "jspsych.html"
MEDIA_TYPE = "text/html"
SCRIPT_FILES = (
    "jspsych.min.js",
    "plugin-html-button-response.min.js",
    "plugin-survey-multi-choice.min.js",
    "plugin-survey-text.min.js",
)


def vendored(name: str) -> str:
    """The text of a vendored jsPsych file (``vendor/<name>``), inlined into pages."""
    return (resources.files("sdtt.surveys") / "vendor" / name).read_text(encoding="utf-8")


def script_safe(text: str) -> str:
    """JavaScript that cannot close its ``<script>`` element early.

    Only ``</script`` and ``<!--`` matter to the HTML parser; inside JS strings, template
    literals and regular expressions a backslash before ``/`` or ``!`` changes nothing.
    """
    text = re.sub(r"</(script)", lambda m: "<\\/" + m.group(1), text, flags=re.IGNORECASE)
    return text.replace("<!--", "<\\!--")


def _survey_question(question: Question) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": question.name,
        "prompt": escape_html(question.text),
        "required": question.required,
    }
    if question.choices is not None:
        entry["options"] = [escape_html(c.label) for c in question.choices]
    elif question.multiline:
        entry["rows"] = 5
        entry["columns"] = 60
    return entry


_MASK = 0xFFFFFFFF


def _key_stream(key: str) -> Iterator[int]:
    """Bytes of mulberry32 seeded with the FNV-1a hash of ``key``; ``jspsych_study.js``
    computes the same stream to read a form back."""
    state = 2166136261
    for char in key:
        state = ((state ^ ord(char)) * 16777619) & _MASK
    while True:
        state = (state + 0x6D2B79F5) & _MASK
        t = ((state ^ (state >> 15)) * (state | 1)) & _MASK
        t ^= (t + (((t ^ (t >> 7)) * (t | 61)) & _MASK)) & _MASK
        yield (t ^ (t >> 14)) & 0xFF


def scramble(key: str, text: str) -> str:
    """``text`` (UTF-8) XOR-ed with the key stream of ``key``, in base64.

    Not secrecy (the key is in the page): it makes the same pair look different in every
    form, so the page source shows no pair, chat or id shared between forms.
    """
    stream = _key_stream(key)
    data = bytes(byte ^ next(stream) for byte in text.encode("utf-8"))
    return base64.b64encode(data).decode("ascii")


def _page(template: str, title: str, scripts: Sequence[str], **data: Any) -> str:
    """A self-contained page: ``template`` rendered with jsPsych's CSS and ``scripts``
    (files of the vendor folder) inlined, and ``data`` for its script."""
    from sdtt.templates import render

    vendor_css = Markup(vendored("jspsych.css"))
    inlined = [Markup(script_safe(vendored(name))) for name in scripts]
    return render(template, title=title, vendor_css=vendor_css, scripts=inlined, **data)


def item_data(item: PairItem) -> dict[str, Any]:
    """One pair as the ordinary page shows it (texts already escaped)."""
    topic = item.topic
    return {
        "id": item.id,
        "view": pair_html(item),
        "judgement_html": escape_html(item.judgement.text),
        "judgement_labels": [escape_html(c.label) for c in item.judgement.choices or ()],
        "judgement_codes": [c.value for c in item.judgement.choices or ()],
        "topic_name": None if topic is None else topic.name,
        "topic_html": None if topic is None else escape_html(topic.text),
        "topic_labels": None
        if topic is None
        else [escape_html(c.label) for c in topic.choices or ()],
        "topic_codes": None if topic is None else [c.value for c in topic.choices or ()],
    }


def _form_data(
    questionnaire: Questionnaire, describe: Callable[[PairItem], dict[str, Any]]
) -> list[list[str]]:
    """Each form as ``[key, scrambled items]``: every form holds its own copy of its pairs,
    so a catch pair's id and chats occur once per form like any pair's, and no list of
    ids in the page is shared by every form."""
    by_id = {item.id: item for item in questionnaire.items}
    forms = []
    for form in questionnaire.forms:
        key = hashlib.sha256(f"{questionnaire.id}:form:{form.number}".encode()).hexdigest()[:16]
        items = json.dumps([describe(by_id[item_id]) for item_id in form.items])
        forms.append([key, scramble(key, items)])
    return forms


def study_data(
    questionnaire: Questionnaire,
    data_url: str | None = None,
    describe: Callable[[PairItem], dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """What the page's script reads: texts (already escaped) and the pairs, each as
    ``describe`` gives it (under a judge design, only inside the scrambled forms)."""
    describe = describe or item_data
    designed = bool(questionnaire.forms)
    return {
        "id": questionnaire.id,
        "title_html": escape_html(questionnaire.title),
        "intro_html": paragraphs_html(questionnaire.intro),
        "end_html": paragraphs_html(questionnaire.end_text),
        "choice_demographics": [
            _survey_question(q) for q in questionnaire.demographics if q.choices is not None
        ],
        "text_demographics": [
            _survey_question(q) for q in questionnaire.demographics if q.choices is None
        ],
        "items": [] if designed else [describe(item) for item in questionnaire.items],
        "forms": _form_data(questionnaire, describe),
        "strategy": None
        if questionnaire.strategy is None
        else _survey_question(questionnaire.strategy),
        "randomise_order": questionnaire.randomise_order,
        "capture_prolific": questionnaire.capture_prolific,
        "completion_url": questionnaire.completion_url,
        "data_url": data_url,
    }


def export(questionnaire: Questionnaire, *, data_url: str | None = None) -> str:
    """The self-contained page (template ``sdtt/templates/jspsych.html``, its script
    ``jspsych_page.js``)."""
    return _page(
        "jspsych.html",
        questionnaire.title,
        SCRIPT_FILES,
        study=study_data(questionnaire, data_url),
        page_script="jspsych_page.js",
    )


REQUIRED_COLUMNS = ("role", "question", "answer", "response", "rt")


def read_answers(path: str | Path, questionnaire: Questionnaire) -> list[JudgeAnswers]:
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


REVEAL_FILENAME = "jspsych-reveal.html"


REVEAL_SCRIPTS = (*SCRIPT_FILES, "plugin-html-slider-response.min.js")


def reveal_data(questionnaire: Questionnaire, data_url: str | None = None) -> dict[str, Any]:
    """What the reveal page's script reads: the ordinary study data plus each pair's steps."""

    def describe(item: PairItem) -> dict[str, Any]:
        entry = item_data(item)
        entry["steps"] = [
            {"turn": turn, "name": belief_name(item.id, turn), "view": html}
            for turn, html in reveal_steps(item)
        ]
        # The reveal page asks no A/B question and shows no whole pair.
        for name in ("view", "judgement_html", "judgement_labels", "judgement_codes"):
            del entry[name]
        return entry

    data = study_data(questionnaire, data_url, describe)
    data["belief_html"] = escape_html(BELIEF_TEXT)
    data["labels"] = [escape_html(label) for label in SLIDER_LABELS]
    data["note_html"] = paragraphs_html(REVEAL_NOTE)
    return data


def export_reveal(questionnaire: Questionnaire, *, data_url: str | None = None) -> str:
    """The self-contained jsPsych page of reveal mode."""
    return _page(
        "jspsych.html",
        questionnaire.title,
        REVEAL_SCRIPTS,
        study=reveal_data(questionnaire, data_url),
        page_script="reveal_jspsych_page.js",
    )


RATING_SCRIPTS = ("jspsych.min.js", "plugin-html-button-response.min.js")
"""The jsPsych files the rating page inlines."""


def rating_page(task: RatingTask) -> str:
    """One self-contained jsPsych page (jsPsych and its button plugin inlined)."""
    labels = scale_labels(task)
    data = {
        "id": task.id,
        "title_html": escape_html(task.title),
        "intro_html": paragraphs_html(task.intro),
        "end_html": paragraphs_html(task.end_text),
        "question_html": escape_html(task.question),
        "labels": [escape_html(label) for _, label in labels],
        "values": [value for value, _ in labels],
        "pairs": [{"id": p.id, "view": pair_view_html(task, p)} for p in task.pairs],
        "forms": task.forms,
    }
    return _page("rating_jspsych.html", task.title, RATING_SCRIPTS, task=data)


def rating_files(task: RatingTask) -> dict[str, str]:
    """The jsPsych page."""
    return {"rating-jspsych.html": rating_page(task)}


def _page_table(path: Path, named: str, *, page: str) -> list[Row]:
    """The rows of the CSV a task's page saved, whose column ``named`` names the pair or
    item answered."""
    hint = f"Import the CSV the {page} page saved."
    return read_table(path, ("judge_id", "role", named, "answer"), hint=hint, delimiters=",")


def read_ratings(path: Path, task: RatingTask) -> list[RatingAnswer]:
    """Ratings from the CSV the jsPsych rating page saved."""
    table = _page_table(path, "question", page="rating")
    rows = []
    for row in table:
        if row["role"] != "rating":
            continue
        if row["task"] and row["task"] != task.id:
            raise row.error(
                f"holds ratings of task {row['task']!r}, not {task.id!r}.",
                field="task",
                hint="Import it with the task folder it was exported from.",
            )
        rows.append(row)
    return rating_answers(rows, task, seconds="rt", per_second=1000)


def _single_item(task: SingleTask, item: ItemView) -> dict[str, Any]:
    """One item as the jsPsych page shows it (texts already escaped)."""
    questions: list[dict[str, Any]] = []
    codes: dict[str, list[str]] = {}
    for index, judged in enumerate(item.judged, start=1):
        questions.append(
            {
                "name": item.verdict_name(index),
                "prompt": escape_html(task.question_for(judged)),
                "options": [escape_html(label) for _, label in VERDICTS],
                "horizontal": True,
                "required": True,
            }
        )
        codes[item.verdict_name(index)] = [code for code, _ in VERDICTS]
        if task.confidence:
            labels = confidence_labels()
            questions.append(
                {
                    "name": item.confidence_name(index),
                    "prompt": escape_html(f"How sure are you about {judged.label}?"),
                    "options": [escape_html(label) for _, label in labels],
                    "horizontal": True,
                    "required": True,
                }
            )
            codes[item.confidence_name(index)] = [str(value) for value, _ in labels]
    if item.topic is not None:
        choices = item.topic.choices or []
        questions.append(
            {
                "name": item.topic_name,
                "prompt": escape_html(item.topic.text),
                "options": [escape_html(c.label) for c in choices],
                "required": item.topic.required,
            }
        )
        codes[item.topic_name] = [c.value for c in choices]
    return {
        "id": item.id,
        "view": item_html(item),
        "questions": questions,
        "codes": codes,
        "reason_name": item.reason_name if task.reason else None,
    }


def single_data(task: SingleTask, data_url: str | None = None) -> dict[str, Any]:
    """What the page's script reads, in the shape the questionnaire page's shared script
    (``jspsych_study.js``) expects: texts escaped, items per scrambled form."""
    forms = []
    if task.forms:
        for number, items in enumerate(task.form_items(), start=1):
            key = hashlib.sha256(f"{task.id}:form:{number}".encode()).hexdigest()[:16]
            text = json.dumps([_single_item(task, item) for item in items])
            forms.append([key, scramble(key, text)])
    return {
        "id": task.id,
        "title_html": escape_html(task.title),
        "intro_html": paragraphs_html(task.intro),
        "end_html": paragraphs_html(task.end_text),
        "choice_demographics": [],
        "text_demographics": [],
        "items": [] if task.forms else [_single_item(task, item) for item in task.items],
        "forms": forms,
        "strategy": None,
        "randomise_order": True,
        "capture_prolific": True,
        "completion_url": None,
        "data_url": data_url,
        "reason_prompt": "What made you decide? (optional)",
    }


def single_page(task: SingleTask, data_url: str | None = None) -> str:
    """One self-contained jsPsych page (jsPsych and its survey plugins inlined)."""
    return _page(
        "jspsych.html",
        task.title,
        SCRIPT_FILES,
        study=single_data(task, data_url),
        page_script="single_jspsych_page.js",
        page_css="single_jspsych_page.css",
    )


def single_files(task: SingleTask, data_url: str | None = None) -> dict[str, str]:
    """The jsPsych page."""
    return {"single-jspsych.html": single_page(task, data_url)}


def read_single(path: Path, task: SingleTask) -> list[SingleAnswer]:
    """Answers from the CSV the jsPsych single-item page saved."""
    table = _page_table(path, "item", page="single-item")
    screens: dict[tuple[str, str], tuple[dict[str, Any], float | None, str]] = {}
    reasons: dict[tuple[str, str], str] = {}
    for row in table:
        if row["form"] and row["form"] != task.id:
            raise row.error(
                f"holds answers to task {row['form']!r}, not {task.id!r}.",
                field="form",
                hint="Import it with the task folder it was exported from.",
            )
        if row["role"] not in ("single", "reason"):
            continue
        item = task.item(row["item"]) if row["item"] else None
        if item is None:
            raise row.error("names no item.", field="item")
        key = (row.judge_id(), item.id)
        if row["role"] == "reason":
            reasons[key] = row["answer"]
            continue
        try:
            given = json.loads(row["answer"]) if row["answer"] else {}
        except json.JSONDecodeError:
            raise row.error("answer is not the JSON the page writes.", field="answer") from None
        if not isinstance(given, dict):
            raise row.error("answer is not the JSON the page writes.", field="answer")
        rt = row.number("rt", what="time", field="rt")
        screens[key] = (given, None if rt is None else rt / 1000, row.where)
    answers = []
    for (judge_id, item_id), (given, seconds, where) in screens.items():
        item = task.item(item_id)
        given = {**given, item.reason_name: reasons.get((judge_id, item_id), "")}
        answers.append(item_answer(task, item, judge_id, given, seconds=seconds, where=where))
    return answers


ENTRIES = (
    SurveyTool(
        "jspsych",
        "self-contained jsPsych page",
        FILENAME,
        lambda questionnaire, options: export(questionnaire, data_url=options.data_url),
        read=read_answers,
        answers="CSV written by the jsPsych export",
        design_native=True,
        reveal=RevealExport(
            REVEAL_FILENAME,
            lambda questionnaire, options: export_reveal(questionnaire, data_url=options.data_url),
        ),
        rating=RatingFormat(rating_files, read_ratings),
        single=SingleFormat(
            lambda task, options: single_files(task, options.data_url), read_single
        ),
    ),
)
"""jsPsych as :mod:`sdtt.surveys.tools` lists it."""
