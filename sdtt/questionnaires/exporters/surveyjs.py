"""SurveyJS Form Library JSON (``survey-core``): one page per pair.

Pages: instructions, demographics ("about"), one page per pair (the two chats as an
``html`` element, the judgement and the topic check as ``radiogroup`` questions), then
the strategy question ("final"). Page names are the pair ids plus ``page``, so a host
page can time each pair. SurveyJS itself cannot read URL parameters or shuffle pages;
the host script ``questionnaires/surveyjs-host.js`` does both and stores the Prolific
ids and seconds per page in the results, which the importer reads.
"""

from __future__ import annotations

import json
from typing import Any

from sdtt.questionnaires.layout import pair_html, paragraphs_html, plain_label
from sdtt.questionnaires.questionnaire import Question, Questionnaire

FILENAME = "surveyjs.json"
MEDIA_TYPE = "application/json"
PAGE_SUFFIX = "page"
"""A pair's page is named pair id + this (page and question names must all differ)."""
TIMES_KEY = "page_seconds"
"""Result key under which the host page stores seconds spent per page."""


def _question(question: Question) -> dict[str, Any]:
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
                "title": "About you",
                "elements": [_question(q) for q in questionnaire.demographics],
            }
        )
    for number, item in enumerate(questionnaire.items, start=1):
        elements = [
            {"type": "html", "name": item.view_name, "html": pair_html(item)},
            _question(item.judgement),
        ]
        if item.topic is not None:
            elements.append(_question(item.topic))
        pages.append(
            {
                "name": item.id + PAGE_SUFFIX,
                "title": f"Pair {number} of {len(questionnaire.items)}",
                "elements": elements,
            }
        )
    if questionnaire.strategy is not None:
        pages.append({"name": "final", "elements": [_question(questionnaire.strategy)]})
    survey: dict[str, Any] = {
        "title": plain_label(questionnaire.title),
        "showQuestionNumbers": "off",
        "showProgressBar": True,
        "pages": pages,
        "completedHtml": paragraphs_html(questionnaire.end_text),
    }
    if questionnaire.completion_url:
        survey["navigateToUrl"] = questionnaire.completion_url
    return survey


def export(questionnaire: Questionnaire) -> str:
    """The SurveyJS survey JSON text."""
    return json.dumps(survey_definition(questionnaire), indent=2, ensure_ascii=False) + "\n"
