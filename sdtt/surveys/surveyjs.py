"""SurveyJS (``survey-core``): its survey JSON and result files, for every kind of task.

The questionnaire: pages for the instructions, demographics ("about", one panel), the
pairs ("pairs": one panel per pair holding the two chats as an ``html`` element and the
judgement and topic check as ``radiogroup`` questions), then the strategy question
("final"). The survey shows one panel per screen (``questionsOnPageMode:
questionPerPage``) and, when the study randomises order, the pairs page has
``questionOrder: random``, so SurveyJS alone shows each judge the pairs in a new order.
Pair panels are named pair id plus ``page``, so a host page can time each pair. SurveyJS
cannot read URL parameters; the host script ``questionnaires/surveyjs-host.js`` does that
and stores the Prolific ids and seconds per page in the results.

Results: one result object, a JSON array of them (what the SurveyJS service and most back
ends export), an object with a ``results`` or ``data`` array, or JSON Lines (one result
per line). A result maps question names to option codes; without the host page's
``PROLIFIC_PID`` and ``page_seconds`` the judge id is the file name and position, and
response times are unknown.

Reveal mode (its ``slider`` question): a page per pair and a panel per step, in the built
order (SurveyJS shuffles elements within a page, and a pair's steps must stay in
sequence; a judge design balances the order). A rating task (``sdtt align``) and a
single-item task (``sdtt single``) are one panel per screen, shuffled by SurveyJS, one
survey per form under a design. :func:`check` finds a survey's structural problems (the
Node tests run SurveyJS itself).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sdtt.errors import InputError
from sdtt.files import JsonTooComplexError, loads_json, what_file_is
from sdtt.surveys.answer_files import JudgeAnswers, read_text
from sdtt.surveys.tool import RatingFormat, RevealExport, SingleFormat, SurveyTool
from sdtt.tasks.layout import pair_html, paragraphs_html, plain_label
from sdtt.tasks.questionnaire import Question, Questionnaire
from sdtt.tasks.rating_task import RatingAnswer, RatingTask, pair_view_html, scale_labels
from sdtt.tasks.reveal_turns import BELIEF_TEXT, REVEAL_NOTE, belief_name, reveal_steps, step_name
from sdtt.tasks.single_task import (
    VERDICTS,
    ItemView,
    SingleAnswer,
    SingleTask,
    confidence_labels,
    item_answer,
    item_html,
    item_shown,
)

FILENAME = "surveyjs.json"
MEDIA_TYPE = "application/json"
PAGE_SUFFIX = "page"
"""A pair's panel is named pair id + this (page, panel and question names must all differ)."""
PAIRS_PAGE = "pairs"
DEMOGRAPHICS_PANEL = "demographics"
TIMES_KEY = "page_seconds"
"""Result key under which the host page stores seconds spent per page."""


def question_element(question: Question) -> dict[str, Any]:
    """The SurveyJS element asking ``question``."""
    element: dict[str, Any] = {"name": question.name, "title": plain_label(question.text)}
    if question.choices is not None:
        element["type"] = "radiogroup"
        element["choices"] = [{"value": c.value, "text": c.label} for c in question.choices]
    else:
        element["type"] = "comment" if question.multiline else "text"
    if question.required:
        element["isRequired"] = True
    return element


def survey_definition(questionnaire: Questionnaire) -> dict[str, Any]:
    """The SurveyJS survey JSON as a dict."""
    pages: list[dict[str, Any]] = [
        {
            "name": "intro",
            "elements": [
                {"type": "html", "name": "introtext", "html": paragraphs_html(questionnaire.intro)}
            ],
        }
    ]
    if questionnaire.demographics:
        pages.append(
            {
                "name": "about",
                "elements": [
                    {
                        "type": "panel",
                        "name": DEMOGRAPHICS_PANEL,
                        "title": "About you",
                        "elements": [question_element(q) for q in questionnaire.demographics],
                    }
                ],
            }
        )
    panels = []
    for number, item in enumerate(questionnaire.items, start=1):
        elements = [
            {"type": "html", "name": item.view_name, "html": pair_html(item)},
            question_element(item.judgement),
        ]
        if item.topic is not None:
            elements.append(question_element(item.topic))
        panels.append(
            {
                "type": "panel",
                "name": item.id + PAGE_SUFFIX,
                "title": "Pair of chats"
                if questionnaire.randomise_order
                else f"Pair {number} of {len(questionnaire.items)}",
                # Keeps the chats above their questions when the pairs are shuffled.
                "questionOrder": "initial",
                "elements": elements,
            }
        )
    pages.append(
        {
            "name": PAIRS_PAGE,
            "questionOrder": "random" if questionnaire.randomise_order else "initial",
            "elements": panels,
        }
    )
    if questionnaire.strategy is not None:
        pages.append({"name": "final", "elements": [question_element(questionnaire.strategy)]})
    survey: dict[str, Any] = {
        "title": plain_label(questionnaire.title),
        "showQuestionNumbers": "off",
        "showProgressBar": True,
        # One panel (a pair, or the demographics) per screen, so that SurveyJS itself
        # can shuffle the pairs: it shuffles elements within a page, never pages.
        "questionsOnPageMode": "questionPerPage",
        "pages": pages,
        "completedHtml": paragraphs_html(questionnaire.end_text),
    }
    if questionnaire.completion_url:
        survey["navigateToUrl"] = questionnaire.completion_url
    return survey


def shuffled_panels_survey(
    *, title: str, intro: str, end_text: str, page: str, panels: list[dict[str, Any]]
) -> dict[str, Any]:
    """A survey of an intro screen, then ``panels`` on page ``page``, one a screen, in an
    order SurveyJS shuffles for each judge (the single-item and rating tasks)."""
    return {
        "title": plain_label(title),
        "showQuestionNumbers": "off",
        "showProgressBar": True,
        # One panel per screen, so SurveyJS can shuffle the items (it shuffles elements
        # within a page, never pages).
        "questionsOnPageMode": "questionPerPage",
        "pages": [
            {
                "name": "intro",
                "elements": [{"type": "html", "name": "introtext", "html": paragraphs_html(intro)}],
            },
            {"name": page, "questionOrder": "random", "elements": panels},
        ],
        "completedHtml": paragraphs_html(end_text),
    }


def export(questionnaire: Questionnaire) -> str:
    """The SurveyJS survey JSON text."""
    return _survey_text(survey_definition(questionnaire))


ID_KEYS = ("PROLIFIC_PID", "judge_id", "respondent_id", "id")


def read_results(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """Each result of a SurveyJS results file with where it is (for error messages)."""
    text = read_text(path).strip()
    try:
        data = loads_json(text) if text else []
    except JsonTooComplexError as error:
        raise InputError(
            f"is not valid JSON ({error.msg}).", path=path, line=error.lineno
        ) from None
    except json.JSONDecodeError:
        data = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                data.append(loads_json(line))
            except json.JSONDecodeError as error:
                raise InputError(
                    f"is neither JSON nor JSON Lines ({error.msg}).",
                    path=path,
                    line=number,
                    hint=what_file_is(text),
                ) from None
    if isinstance(data, dict):
        for name in ("results", "data"):
            if isinstance(data.get(name), list):
                data = data[name]
                break
        else:
            data = [data]
    if not isinstance(data, list):
        raise InputError("holds no SurveyJS result objects.", path=path)
    results = []
    for index, result in enumerate(data, start=1):
        if not isinstance(result, dict):
            raise InputError(f"result {index} is not an object.", path=path)
        results.append((f"{path}[{index}]", result))
    return results


@dataclass(frozen=True)
class Respondent:
    """One result of a results file: where it is, whose it is, its values."""

    where: str
    judge_id: str
    """The host page's Prolific id (or another id key), else file name and position."""
    values: dict[str, Any]

    def seconds(self, page: str) -> float | None:
        """The seconds the host page recorded on ``page`` (None: none recorded)."""
        times = self.values.get(TIMES_KEY)
        spent = times.get(page) if isinstance(times, dict) else None
        return float(spent) if isinstance(spent, int | float) and spent >= 0 else None


def respondents(path: Path) -> list[Respondent]:
    """Each result of a SurveyJS results file, with its judge id."""
    found = []
    for index, (where, result) in enumerate(read_results(path), start=1):
        judge_id = next(
            (str(result[k]).strip() for k in ID_KEYS if str(result.get(k, "")).strip()),
            f"{path.stem}-{index}",
        )
        found.append(Respondent(where, judge_id, result))
    return found


def read_answers(path: str | Path, questionnaire: Questionnaire) -> list[JudgeAnswers]:
    """Respondents from a SurveyJS results file."""
    found: list[JudgeAnswers] = []
    for respondent in respondents(Path(path)):
        answers = {
            name: str(value)
            for name, value in respondent.values.items()
            if isinstance(value, str | int | float) and not isinstance(value, bool)
        }
        seconds: dict[str, float] = {}
        for item in questionnaire.items:
            spent = respondent.seconds(item.id + PAGE_SUFFIX)
            if spent is not None:
                seconds[item.id] = spent
        # Reveal mode times each step's screen; kept under the step's name.
        times = respondent.values.get(TIMES_KEY)
        for name in times if isinstance(times, dict) else ():
            spent = respondent.seconds(name)
            if isinstance(name, str) and spent is not None:
                seconds.setdefault(name, spent)
        judge_id, where = respondent.judge_id, respondent.where
        found.append(JudgeAnswers(judge_id=judge_id, answers=answers, seconds=seconds, where=where))
    return found


REVEAL_FILENAME = "surveyjs-reveal.json"


def reveal_definition(questionnaire: Questionnaire) -> dict[str, Any]:
    """The SurveyJS survey of reveal mode: a page per pair, a panel per step."""
    survey = survey_definition(questionnaire)
    pages = [page for page in survey["pages"] if page["name"] != PAIRS_PAGE]
    final = [page for page in pages if page["name"] == "final"]
    pages = [page for page in pages if page["name"] != "final"]
    pages[0]["elements"].append(
        {"type": "html", "name": "revealnote", "html": paragraphs_html(REVEAL_NOTE)}
    )
    for item in questionnaire.items:
        panels = []
        steps = reveal_steps(item)
        for turn, html in steps:
            elements: list[dict[str, Any]] = [
                {"type": "html", "name": f"{item.id}view{turn}", "html": html},
                {
                    "type": "slider",
                    "name": belief_name(item.id, turn),
                    "title": BELIEF_TEXT,
                    "min": 0,
                    "max": 100,
                    "step": 1,
                    "isRequired": True,
                },
            ]
            if turn == len(steps) and item.topic is not None:
                elements.append(question_element(item.topic))
            panels.append(
                {
                    "type": "panel",
                    "name": step_name(item.id, turn),
                    "questionOrder": "initial",
                    "elements": elements,
                }
            )
        pages.append({"name": item.id + "pair", "questionOrder": "initial", "elements": panels})
    survey["pages"] = pages + final
    return survey


def export_reveal(questionnaire: Questionnaire) -> str:
    """The SurveyJS JSON text of reveal mode."""
    return _survey_text(reveal_definition(questionnaire))


def rating_definition(task: RatingTask, pair_ids: list[str]) -> dict[str, Any]:
    """A SurveyJS survey rating ``pair_ids``: one panel (one screen) per pair."""
    choices = [{"value": value, "text": plain_label(label)} for value, label in scale_labels(task)]
    panels = []
    for pair_id in pair_ids:
        pair = task.pair(pair_id)
        panels.append(
            {
                "type": "panel",
                "name": pair.id + PAGE_SUFFIX,
                "questionOrder": "initial",
                "elements": [
                    {"type": "html", "name": pair.id + "view", "html": pair_view_html(task, pair)},
                    {
                        "type": "radiogroup",
                        "name": pair.id,
                        "title": plain_label(task.question),
                        "choices": choices,
                        "isRequired": True,
                    },
                ],
            }
        )
    return shuffled_panels_survey(
        title=task.title, intro=task.intro, end_text=task.end_text, page="pairs", panels=panels
    )


def rating_files(task: RatingTask) -> dict[str, str]:
    """The SurveyJS surveys: one, or one per form."""
    forms = task.forms or [[p.id for p in task.pairs]]
    return _form_files("rating", [rating_definition(task, form) for form in forms])


def _form_files(kind: str, surveys: list[dict[str, Any]]) -> dict[str, str]:
    """One survey's file, or one file per form's survey."""
    if len(surveys) == 1:
        return {f"{kind}-surveyjs.json": _survey_text(surveys[0])}
    return {
        f"{kind}-surveyjs-form-{number}.json": _survey_text(survey)
        for number, survey in enumerate(surveys, start=1)
    }


def _survey_text(survey: dict[str, Any]) -> str:
    return json.dumps(survey, indent=2, ensure_ascii=False) + "\n"


def read_ratings(path: Path, task: RatingTask) -> list[RatingAnswer]:
    """Ratings from SurveyJS result objects; each pair's question is named by its pair id."""
    pair_ids = {p.id for p in task.pairs}
    answers: list[RatingAnswer] = []
    for respondent in respondents(path):
        for name, value in respondent.values.items():
            if name not in pair_ids or isinstance(value, bool) or value in (None, ""):
                continue
            spent = respondent.seconds(name + PAGE_SUFFIX)
            answers.append((respondent.judge_id, name, str(value), spent, respondent.where))
    return answers


ITEMS_PAGE = "items"


def _single_panel(task: SingleTask, item: ItemView) -> dict[str, Any]:
    elements: list[dict[str, Any]] = [
        {"type": "html", "name": item.id + "view", "html": item_html(item)}
    ]
    for index, judged in enumerate(item.judged, start=1):
        elements.append(
            {
                "type": "radiogroup",
                "name": item.verdict_name(index),
                "title": plain_label(task.question_for(judged)),
                "choices": [{"value": code, "text": label} for code, label in VERDICTS],
                "colCount": 2,
                "isRequired": True,
            }
        )
        if task.confidence:
            elements.append(
                {
                    "type": "radiogroup",
                    "name": item.confidence_name(index),
                    "title": plain_label(f"How sure are you about {judged.label}?"),
                    "choices": [{"value": v, "text": t} for v, t in confidence_labels()],
                    "colCount": 0,
                    "isRequired": True,
                }
            )
    if item.topic is not None:
        elements.append(question_element(item.topic))
    if task.reason:
        elements.append(
            {
                "type": "comment",
                "name": item.reason_name,
                "title": "What made you decide? (optional)",
                "rows": 2,
            }
        )
    return {
        "type": "panel",
        "name": item.id + PAGE_SUFFIX,
        # Keeps the item above its questions when the items are shuffled.
        "questionOrder": "initial",
        "elements": elements,
    }


def single_definition(task: SingleTask, items: list[ItemView]) -> dict[str, Any]:
    """A SurveyJS survey of ``items``: one panel (one screen) per item, shuffled by
    SurveyJS for each judge."""
    return shuffled_panels_survey(
        title=task.title,
        intro=task.intro,
        end_text=task.end_text,
        page=ITEMS_PAGE,
        panels=[_single_panel(task, item) for item in items],
    )


def single_files(task: SingleTask) -> dict[str, str]:
    """The SurveyJS surveys: one, or one per form."""
    return _form_files("single", [single_definition(task, items) for items in task.form_items()])


def read_single(path: Path, task: SingleTask) -> list[SingleAnswer]:
    """Answers from SurveyJS result objects."""
    answers: list[SingleAnswer] = []
    for respondent in respondents(path):
        for item in task.items:
            if item_shown(item, respondent.values):
                answers.append(
                    item_answer(
                        task,
                        item,
                        respondent.judge_id,
                        respondent.values,
                        seconds=respondent.seconds(item.id + PAGE_SUFFIX),
                        where=respondent.where,
                    )
                )
    return answers


def check(survey: Any) -> list[str]:
    """Basic problems of a SurveyJS survey JSON (the Node tests run SurveyJS itself)."""
    if not isinstance(survey, dict) or not isinstance(survey.get("pages"), list):
        return ["the survey has no 'pages' list"]
    problems: list[str] = []
    names: Counter[str] = Counter()

    def walk(elements: Any) -> None:
        for element in elements if isinstance(elements, list) else []:
            names[str(element.get("name"))] += 1
            kind = element.get("type")
            if kind == "panel":
                walk(element.get("elements"))
                continue
            # "slider": the belief question of reveal mode.
            known = ("html", "radiogroup", "dropdown", "text", "comment", "checkbox", "slider")
            if kind not in known:
                problems.append(f"element {element.get('name')!r} has unexpected type {kind!r}")
            if kind in ("radiogroup", "dropdown") and not element.get("choices"):
                problems.append(f"question {element.get('name')!r} has no choices")

    for page in survey["pages"]:
        names[str(page.get("name"))] += 1
        walk(page.get("elements", []))
    for name, uses in names.items():
        if uses > 1:
            problems.append(f"name {name!r} is used {uses} times (pages and questions must differ)")
    return problems


ENTRIES = (
    SurveyTool(
        "surveyjs",
        "SurveyJS survey JSON",
        FILENAME,
        lambda questionnaire, options: export(questionnaire),
        read=read_answers,
        answers="SurveyJS result JSON (object, array or JSON Lines)",
        reveal=RevealExport(
            REVEAL_FILENAME, lambda questionnaire, options: export_reveal(questionnaire)
        ),
        rating=RatingFormat(rating_files, read_ratings),
        single=SingleFormat(lambda task, options: single_files(task), read_single),
    ),
)
"""SurveyJS as :mod:`sdtt.surveys.tools` lists it."""
