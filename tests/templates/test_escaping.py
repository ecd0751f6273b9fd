"""Hostile chat text comes out of every HTML page escaped and inert.

The report, the printable questionnaire and the jsPsych page are rendered from Jinja2
templates; text that looks like HTML or like template syntax must reach the reader as
the characters it is, never as markup and never evaluated.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sdtt.analysis.report import Report, Section, render_html
from sdtt.surveys.jspsych import export as export_jspsych
from sdtt.surveys.printable import export_html
from sdtt.tasks.questionnaire import Questionnaire
from sdtt.templates import escape_html
from tests.questionnaires.helpers import fixture_study

HOSTILE = (
    "<script>window.__pwned=1</script> {{ 7 * 7 }} {% if true %}RAN{% endif %} "
    "{# gone #} ' \" & {age}"
)


def _hostile_questionnaire() -> Questionnaire:
    questionnaire = fixture_study().questionnaire
    items = []
    for item in questionnaire.items:
        chats = tuple(
            [line.model_copy(update={"text": HOSTILE}) for line in lines] for lines in item.chats
        )
        items.append(item.model_copy(update={"chats": chats, "id": item.id}))
    return questionnaire.model_copy(update={"title": HOSTILE, "items": items})


def _assert_inert(page: str, times: int) -> None:
    # Each hostile text is there exactly as escaped text; nothing else of it survives
    # (no script, no evaluated template code, no stray template syntax).
    assert page.count(escape_html(HOSTILE)) == times
    rest = page.replace(escape_html(HOSTILE), "")
    assert "pwned" not in rest and "RAN" not in rest
    assert "{{" not in rest and "{%" not in rest and "{#" not in rest


def test_the_report_shows_hostile_text_as_text(tmp_path: Path) -> None:
    figure = tmp_path / "f.png"
    figure.write_bytes(b"\x89PNG\r\n\x1a\n")
    report = Report(
        title=HOSTILE,
        sections=[Section(HOSTILE, ["model", HOSTILE], [[HOSTILE, "50%"]], note=HOSTILE)],
        figures=[(HOSTILE, figure)],
        notes=[HOSTILE],
    )
    _assert_inert(render_html(report), 9)


def test_the_printable_questionnaire_shows_hostile_text_as_text() -> None:
    questionnaire = _hostile_questionnaire()
    lines = sum(len(lines) for item in questionnaire.items for lines in item.chats)
    _assert_inert(export_html(questionnaire), lines + 2)  # every line, <title> and <h1>


def test_the_jspsych_page_shows_hostile_text_as_text() -> None:
    questionnaire = _hostile_questionnaire()
    page = export_jspsych(questionnaire)
    assert "<script>window.__pwned" not in page
    head, data = page.split('<script type="application/json" id="study-data">', 1)
    assert f"<title>{escape_html(HOSTILE)}</title>" in head
    data = data.split("</script>", 1)[0]
    assert "<" not in data and "{{" not in data and "{%" not in data
    study = json.loads(data)
    assert study["title_html"] == escape_html(HOSTILE)
    for item in study["items"]:
        assert "<script>" not in item["view"] and "RAN" not in item["view"].replace(
            escape_html(HOSTILE), ""
        )
        assert escape_html(HOSTILE) in item["view"]


@pytest.mark.parametrize("text", ["{{ x }}", "{% raw %}", "</script>", "a & b"])
def test_the_one_escape_rule_covers_markup_and_placeholders(text: str) -> None:
    escaped = escape_html(text)
    assert not set("<>{}") & set(escaped)
