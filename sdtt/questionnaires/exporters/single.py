"""Single-item tasks (``sdtt single``) for the survey tools that can field them.

Each item is one screen: the item (a chat, labelled parts, an image), then per judged
speaker a human/machine question (and a 1-5 confidence when the task asks for one), the
topic check when the item has one, and a free-text reason when the task asks for one.
Chat text is escaped wherever a tool renders HTML. With forms (the balanced design of
:func:`sdtt.questionnaires.design.item_forms`), SurveyJS gets one survey per form, each
shuffling its items itself, and the jsPsych page picks its form from ``?form=N`` (or at
random); its forms are scrambled per form as in the questionnaire page, so the source
shows no item shared between forms.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from markupsafe import Markup

from sdtt.questionnaires.exporters.jspsych import SCRIPT_FILES, scramble, script_safe, vendored
from sdtt.questionnaires.exporters.surveyjs import (
    PAGE_SUFFIX,
    question_element,
    shuffled_panels_survey,
)
from sdtt.questionnaires.layout import chat_html, escape_html, paragraphs_html, plain_label
from sdtt.questionnaires.single_task import (
    CONFIDENCE,
    CONFIDENCE_ENDS,
    VERDICTS,
    ItemView,
    SingleTask,
)

ITEMS_PAGE = "items"
CHAT_TITLE = "Conversation"
IMAGE_STYLE = "display:block;max-width:100%;max-height:60vh;margin:0 0 12px 0;"


def item_html(item: ItemView) -> str:
    """The item as one escaped HTML fragment: image, labelled parts, chat."""
    parts: list[str] = ["<div>"]
    if item.image is not None:
        parts.append(f'<img src="{escape_html(item.image)}" alt="" style="{IMAGE_STYLE}">')
    for part in item.parts:
        parts.append(
            '<p style="margin:0 0 8px 0;font-size:17px;">'
            f"<b>{escape_html(part.label)}:</b> "
            f'<span style="overflow-wrap:anywhere;">{escape_html(part.text)}</span></p>'
        )
    if item.lines:
        parts.append(chat_html(CHAT_TITLE, item.lines))
    parts.append("</div>")
    return "".join(parts)


def confidence_labels() -> list[tuple[int, str]]:
    """Each confidence value with its label (the ends described)."""
    low, high = CONFIDENCE
    labels = []
    for value in range(low, high + 1):
        end = {low: CONFIDENCE_ENDS[0], high: CONFIDENCE_ENDS[1]}.get(value)
        labels.append((value, f"{value} - {end}" if end else str(value)))
    return labels


def _panel(task: SingleTask, item: ItemView) -> dict[str, Any]:
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


def surveyjs_definition(task: SingleTask, items: list[ItemView]) -> dict[str, Any]:
    """A SurveyJS survey of ``items``: one panel (one screen) per item, shuffled by
    SurveyJS for each judge."""
    return shuffled_panels_survey(
        title=task.title,
        intro=task.intro,
        end_text=task.end_text,
        page=ITEMS_PAGE,
        panels=[_panel(task, item) for item in items],
    )


def surveyjs_files(task: SingleTask) -> dict[str, str]:
    """The SurveyJS surveys: one, or one per form."""
    forms = task.form_items()
    files: dict[str, str] = {}
    for number, items in enumerate(forms, start=1):
        name = "single-surveyjs.json" if len(forms) == 1 else f"single-surveyjs-form-{number}.json"
        files[name] = (
            json.dumps(surveyjs_definition(task, items), indent=2, ensure_ascii=False) + "\n"
        )
    return files


def _item_data(task: SingleTask, item: ItemView) -> dict[str, Any]:
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


def jspsych_data(task: SingleTask, data_url: str | None = None) -> dict[str, Any]:
    """What the page's script reads, in the shape the questionnaire page's shared script
    (``jspsych_study.js``) expects: texts escaped, items per scrambled form."""
    forms = []
    if task.forms:
        for number, items in enumerate(task.form_items(), start=1):
            key = hashlib.sha256(f"{task.id}:form:{number}".encode()).hexdigest()[:16]
            text = json.dumps([_item_data(task, item) for item in items])
            forms.append([key, scramble(key, text)])
    return {
        "id": task.id,
        "title_html": escape_html(task.title),
        "intro_html": paragraphs_html(task.intro),
        "end_html": paragraphs_html(task.end_text),
        "choice_demographics": [],
        "text_demographics": [],
        "items": [] if task.forms else [_item_data(task, item) for item in task.items],
        "forms": forms,
        "strategy": None,
        "randomise_order": True,
        "capture_prolific": True,
        "completion_url": None,
        "data_url": data_url,
        "reason_prompt": "What made you decide? (optional)",
    }


def jspsych_page(task: SingleTask, data_url: str | None = None) -> str:
    """One self-contained jsPsych page (jsPsych and its survey plugins inlined)."""
    from sdtt.templates import render

    return render(
        "single_jspsych.html",
        title=task.title,
        vendor_css=Markup(vendored("jspsych.css")),
        scripts=[Markup(script_safe(vendored(name))) for name in SCRIPT_FILES],
        study=jspsych_data(task, data_url),
    )


def jspsych_files(task: SingleTask, data_url: str | None = None) -> dict[str, str]:
    """The jsPsych page."""
    return {"single-jspsych.html": jspsych_page(task, data_url)}
