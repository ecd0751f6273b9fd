"""SurveyJS Form Library JSON (``survey-core``): one page per pair.

Pages: instructions, demographics ("about", one panel), the pairs ("pairs": one panel
per pair holding the two chats as an ``html`` element and the judgement and topic check
as ``radiogroup`` questions), then the strategy question ("final"). The survey shows one
panel per screen (``questionsOnPageMode: questionPerPage``) and, when the study
randomises order, the pairs page has ``questionOrder: random``, so SurveyJS alone shows
each judge the pairs in a new order. Pair panels are named pair id plus ``page``, so a
host page can time each pair. SurveyJS cannot read URL parameters; the host script
``questionnaires/surveyjs-host.js`` does that and stores the Prolific ids and seconds per
pair in the results, which its reader reads.
"""

from __future__ import annotations

import json
from typing import Any

from sdtt.questionnaires.layout import pair_html, paragraphs_html, plain_label
from sdtt.questionnaires.questionnaire import Question, Questionnaire

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
    return json.dumps(survey_definition(questionnaire), indent=2, ensure_ascii=False) + "\n"
