"""Reveal mode: each pair shown turn by turn, a 0-100 belief slider after every turn.

Only SurveyJS (its ``slider`` question) and jsPsych (``html-slider-response``) can do
this without custom code; every other format refuses with :class:`RevealNotSupported`
(:attr:`sdtt.questionnaires.tools.SurveyTool.reveal` says which can).
Step ``t`` of a pair shows the first ``t`` turns of both chats (see
:mod:`sdtt.questionnaires.reveal`) and asks for the belief named ``<pair id>belief<t>``: 100
means User B of chat 1 is surely the person (so chat 2 holds the AI), 0 that chat 1
holds the AI. The last step also asks the pair's topic check, when the study has one.
There is no separate A/B question: the last belief is the verdict.

SurveyJS shows one step per screen and the pairs in the built order (it shuffles
elements within a page, and a pair's steps must stay in sequence); use a judge design
(forms) to balance the order across judges. The jsPsych page shuffles the pairs per
judge itself when the study randomises order.
"""

from __future__ import annotations

import json
from typing import Any

from markupsafe import Markup

from sdtt.errors import InputError
from sdtt.questionnaires.exporters import jspsych, surveyjs
from sdtt.questionnaires.layout import escape_html, pair_html, paragraphs_html
from sdtt.questionnaires.questionnaire import PairItem, Questionnaire
from sdtt.questionnaires.reveal import reveal_turns, revealed

SURVEYJS_FILENAME = "surveyjs-reveal.json"
JSPSYCH_FILENAME = "jspsych-reveal.html"
BELIEF_TEXT = (
    "So far, how likely is it that User B in chat 1 is the person (and User B in chat 2 "
    "the AI)? 0 = chat 1's User B is surely the AI, 100 = chat 2's User B is surely the AI."
)
SLIDER_LABELS = ("Chat 1 is the AI", "Not sure", "Chat 2 is the AI")
REVEAL_NOTE = (
    "Each pair of chats is shown turn by turn. After every turn, set the slider to how "
    "likely you think it is that User B in chat 1 is the person. You cannot go back."
)
STEP_SUFFIX = "step"
BELIEF_SUFFIX = "belief"


class RevealNotSupported(InputError):
    """The chosen survey tool cannot show a pair turn by turn with a slider."""


def belief_name(pair_id: str, turn: int) -> str:
    """The name of the belief asked after ``turn`` turns of a pair."""
    return f"{pair_id}{BELIEF_SUFFIX}{turn}"


def step_name(pair_id: str, turn: int) -> str:
    """The name of the screen (SurveyJS panel) showing step ``turn`` of a pair."""
    return f"{pair_id}{STEP_SUFFIX}{turn}"


def _step_header(turn: int, turns: int) -> str:
    return f'<p style="font-weight:bold;margin:0 0 8px 0;">Turn {turn} of {turns}</p>'


def _steps(item: PairItem) -> list[tuple[int, str]]:
    turns = reveal_turns(item)
    return [
        (turn, _step_header(turn, turns) + pair_html(revealed(item, turn)))
        for turn in range(1, turns + 1)
    ]


def surveyjs_definition(questionnaire: Questionnaire) -> dict[str, Any]:
    """The SurveyJS survey of reveal mode: a page per pair, a panel per step."""
    survey = surveyjs.survey_definition(questionnaire)
    pages = [page for page in survey["pages"] if page["name"] != surveyjs.PAIRS_PAGE]
    final = [page for page in pages if page["name"] == "final"]
    pages = [page for page in pages if page["name"] != "final"]
    pages[0]["elements"].append(
        {"type": "html", "name": "revealnote", "html": paragraphs_html(REVEAL_NOTE)}
    )
    for item in questionnaire.items:
        panels = []
        steps = _steps(item)
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
                elements.append(surveyjs.question_element(item.topic))
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


def export_surveyjs(questionnaire: Questionnaire) -> str:
    """The SurveyJS JSON text of reveal mode."""
    return json.dumps(surveyjs_definition(questionnaire), indent=2, ensure_ascii=False) + "\n"


JSPSYCH_SCRIPTS = (*jspsych.SCRIPT_FILES, "plugin-html-slider-response.min.js")


def jspsych_data(questionnaire: Questionnaire, data_url: str | None = None) -> dict[str, Any]:
    """What the reveal page's script reads: the ordinary study data plus each pair's steps."""

    def describe(item: PairItem) -> dict[str, Any]:
        entry = jspsych.item_data(item)
        entry["steps"] = [
            {"turn": turn, "name": belief_name(item.id, turn), "view": html}
            for turn, html in _steps(item)
        ]
        # The reveal page asks no A/B question and shows no whole pair.
        for name in ("view", "judgement_html", "judgement_labels", "judgement_codes"):
            del entry[name]
        return entry

    data = jspsych.study_data(questionnaire, data_url, describe)
    data["belief_html"] = escape_html(BELIEF_TEXT)
    data["labels"] = [escape_html(label) for label in SLIDER_LABELS]
    data["note_html"] = paragraphs_html(REVEAL_NOTE)
    return data


def export_jspsych(questionnaire: Questionnaire, *, data_url: str | None = None) -> str:
    """The self-contained jsPsych page of reveal mode."""
    from sdtt.templates import render

    return render(
        "reveal_jspsych.html",
        title=questionnaire.title,
        vendor_css=Markup(jspsych.vendored("jspsych.css")),
        scripts=[Markup(jspsych.script_safe(jspsych.vendored(name))) for name in JSPSYCH_SCRIPTS],
        study=jspsych_data(questionnaire, data_url),
    )
