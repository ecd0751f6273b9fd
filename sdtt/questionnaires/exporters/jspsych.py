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
link), otherwise a form is drawn at random; rows then carry ``design_form``. Each form
holds its own copy of its pairs, scrambled with its own key (:func:`scramble`), so the
page source shows no pair id or chat that every form shares, as a catch pair would be.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Callable, Iterator
from importlib import resources
from typing import Any

from markupsafe import Markup

from sdtt.questionnaires.layout import escape_html, pair_html, paragraphs_html
from sdtt.questionnaires.questionnaire import PairItem, Question, Questionnaire

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
    return (resources.files("sdtt.questionnaires.exporters") / "vendor" / name).read_text(
        encoding="utf-8"
    )


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
    from sdtt.templates import render

    return render(
        "jspsych.html",
        title=questionnaire.title,
        vendor_css=Markup(vendored("jspsych.css")),
        scripts=[Markup(script_safe(vendored(name))) for name in SCRIPT_FILES],
        study=study_data(questionnaire, data_url),
    )
