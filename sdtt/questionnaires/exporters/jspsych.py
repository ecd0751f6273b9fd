"""jsPsych: one self-contained HTML page (jsPsych 8 and its plugins inlined).

Host it anywhere static (a university web space, JATOS, Pavlovia, cognition.run) or open
it from disk. Trials: instructions, demographics (``survey-multi-choice`` and
``survey-text``), per pair a judgement and a topic check (``html-button-response``, the
pairs in random order per judge when the study randomises order), the strategy question.

Every trial's data carries ``role`` (intro, demographics, judgement, topic, strategy),
``item`` (the pair id) and ``answer`` (the option code), plus ``judge_id`` and the
Prolific URL parameters on every row. At the end the page shows a download button for
the CSV, posts the CSV to ``data_url`` when the export was given one, and links to the
Prolific completion URL. ``?simulate=data-only`` (or ``visual``) runs jsPsych's
simulation instead of a judge, for testing. Under a judge design the page shows one
form's pairs in the form's order: ``?form=N`` picks form N (give each judge group its own
link), otherwise a form is drawn at random; rows then carry ``design_form``.
"""

from __future__ import annotations

import re
from importlib import resources
from typing import Any

from markupsafe import Markup

from sdtt.questionnaires.layout import escape_html, pair_html, paragraphs_html
from sdtt.questionnaires.questionnaire import Question, Questionnaire

FILENAME = "jspsych.html"
MEDIA_TYPE = "text/html"
SCRIPT_FILES = (
    "jspsych.min.js",
    "plugin-html-button-response.min.js",
    "plugin-survey-multi-choice.min.js",
    "plugin-survey-text.min.js",
)


def _vendor(name: str) -> str:
    return (resources.files("sdtt.questionnaires.exporters") / "vendor" / name).read_text(
        encoding="utf-8"
    )


def _script_safe(text: str) -> str:
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


def study_data(questionnaire: Questionnaire, data_url: str | None = None) -> dict[str, Any]:
    """What the page's script reads: texts (already escaped) and the pairs."""
    items = []
    for item in questionnaire.items:
        topic = item.topic
        items.append(
            {
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
        )
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
        "items": items,
        "forms": [form.items for form in questionnaire.forms],
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
    from sdtt.templates import render

    return render(
        "jspsych.html",
        title=questionnaire.title,
        vendor_css=Markup(_vendor("jspsych.css")),
        scripts=[Markup(_script_safe(_vendor(name))) for name in SCRIPT_FILES],
        study=study_data(questionnaire, data_url),
    )
