"""What every export holds and does not hold, checked on the files themselves."""

from __future__ import annotations

import copy
import csv
import io
import json
import re
from typing import Any

import pytest

from sdtt.questionnaires.exports import export_text
from sdtt.surveys import limesurvey, qualtrics, surveyjs
from sdtt.surveys.limesurvey import COLUMNS
from sdtt.surveys.tools import TOOLS
from sdtt.tasks.questionnaire import Questionnaire
from tests.questionnaires.helpers import SECRET_WORDS, fixture_study

KEY_WORDS = ("bot_position", "correct_choice", "topic_value", "answer-key", "answer key")
MACHINERY = re.compile(
    r"(?<![A-Za-z0-9])(bots?|chatbots?|persona|sdtt|simulated)(?![A-Za-z0-9])", re.I
)


@pytest.fixture(scope="module")
def questionnaire() -> Questionnaire:
    return fixture_study().questionnaire


@pytest.fixture(scope="module")
def exports(questionnaire: Questionnaire) -> dict[str, str]:
    return {name: export_text(questionnaire, name) for name in TOOLS}


@pytest.mark.parametrize("name", list(TOOLS))
def test_no_export_names_models_personas_conversations_or_the_key(
    exports: dict[str, str], name: str
) -> None:
    text = exports[name].lower()
    for word in (*SECRET_WORDS, *KEY_WORDS):
        assert word.lower() not in text, f"{name} export contains {word!r}"
    assert MACHINERY.search(exports[name]) is None, MACHINERY.search(exports[name])


@pytest.mark.parametrize(
    "name", ["surveyjs", "qualtrics", "jspsych", "limesurvey", "html", "markdown"]
)
def test_planted_markup_in_chat_text_is_escaped(exports: dict[str, str], name: str) -> None:
    text = exports[name]
    assert "<script>window.__pwned" not in text
    assert 'onerror="window.__pwned' not in text
    assert "pwned" in text  # the chat line itself is there, as text


@pytest.mark.parametrize("name", ["surveyjs", "qualtrics", "limesurvey"])
def test_placeholders_in_chat_text_cannot_pull_in_answers(
    exports: dict[str, str], name: str
) -> None:
    text = exports[name]
    assert "{age}" not in text and "${q://" not in text
    assert "&#123;age&#125;" in text


def test_surveyjs_structure(exports: dict[str, str], questionnaire: Questionnaire) -> None:
    survey = json.loads(exports["surveyjs"])
    assert surveyjs.check(survey) == []
    pages = {page["name"]: page for page in survey["pages"]}
    # The pairs are panels of one page that SurveyJS shuffles, one panel per screen.
    assert survey["questionsOnPageMode"] == "questionPerPage"
    assert pages["pairs"]["questionOrder"] == "random"
    panels = {panel["name"]: panel for panel in pages["pairs"]["elements"]}
    for item in questionnaire.items:
        elements = panels[item.id + "page"]["elements"]
        assert [e["type"] for e in elements] == ["html", "radiogroup", "radiogroup"]
        assert [c["value"] for c in elements[1]["choices"]] == ["A", "B"]
        assert elements[1]["name"] == item.id and elements[1]["isRequired"] is True


def test_qualtrics_file_passes_the_structural_check(
    exports: dict[str, str], questionnaire: Questionnaire
) -> None:
    document = json.loads(exports["qualtrics"])
    assert qualtrics.check(document) == []
    questions = [e for e in document["SurveyElements"] if e["Element"] == "SQ"]
    # intro, 5 demographics, 4 per pair (chats, judgement, topic, timer), strategy
    assert len(questions) == 1 + 5 + 4 * len(questionnaire.items) + 1
    flow = next(e for e in document["SurveyElements"] if e["Element"] == "FL")["Payload"]
    kinds = [node["Type"] for node in flow["Flow"]]
    assert kinds == ["EmbeddedData", "Block", "BlockRandomizer", "Standard"]
    fields = [f["Field"] for f in flow["Flow"][0]["EmbeddedData"]]
    assert fields == ["PROLIFIC_PID", "STUDY_ID", "SESSION_ID"]


def _qsf_elements(document: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [e for e in document["SurveyElements"] if e["Element"] == kind]


@pytest.mark.parametrize(
    ("break_it", "problem"),
    [
        (lambda d: _qsf_elements(d, "QC")[0].update(SecondaryAttribute="3"), "QC says 3"),
        (
            lambda d: _qsf_elements(d, "SQ")[3]["Payload"].update(DataExportTag="age"),
            "DataExportTag 'age' is used by 2",
        ),
        (
            lambda d: _qsf_elements(d, "BL")[0]["Payload"][1]["BlockElements"].append(
                {"Type": "Question", "QuestionID": "QID999"}
            ),
            "missing question 'QID999'",
        ),
        (
            lambda d: _qsf_elements(d, "FL")[0]["Payload"]["Flow"][1].update(ID="BL_nowhere"),
            "missing block 'BL_nowhere'",
        ),
        (
            lambda d: _qsf_elements(d, "FL")[0]["Payload"]["Flow"][2].update(SubSet=99),
            "SubSet 99",
        ),
        (
            lambda d: d["SurveyElements"].remove(_qsf_elements(d, "SQ")[0]),
            "QC says",
        ),
        (
            lambda d: _qsf_elements(d, "SQ")[2]["Payload"].update(ChoiceOrder=["1"]),
            "ChoiceOrder",
        ),
    ],
)
def test_qsf_check_finds_broken_files(exports: dict[str, str], break_it: Any, problem: str) -> None:
    document = copy.deepcopy(json.loads(exports["qualtrics"]))
    break_it(document)
    problems = qualtrics.check(document)
    assert any(problem in p for p in problems), problems


def test_limesurvey_file_structure(exports: dict[str, str], questionnaire: Questionnaire) -> None:
    text = exports["limesurvey"]
    assert limesurvey.check(text) == []
    rows = list(csv.DictReader(io.StringIO(text), delimiter="\t"))
    assert tuple(rows[0]) == COLUMNS
    assert len(text.splitlines()) == len(rows) + 1  # no field spans lines
    codes = [row["name"] for row in rows if row["class"] == "Q"]
    for item in questionnaire.items:
        assert {item.id, item.id + "view", item.id + "topic"} <= set(codes)
    groups = [row for row in rows if row["class"] == "G" and row["name"].startswith("Pair")]
    assert {row["random_group"] for row in groups} == {"pairs"}
    broken = text.replace(f"\t{questionnaire.items[1].id}\t", f"\t{questionnaire.items[0].id}\t")
    assert any("is used 2 times" in p for p in limesurvey.check(broken))


def test_csv_lists_every_line_and_question(
    exports: dict[str, str], questionnaire: Questionnaire
) -> None:
    rows = list(csv.DictReader(io.StringIO(exports["csv"])))
    lines = [r for r in rows if r["element"] == "line"]
    assert len(lines) == sum(len(chat) for item in questionnaire.items for chat in item.chats)
    judgement = next(r for r in rows if r["name"] == questionnaire.items[0].id)
    assert judgement["options"].startswith("A=Chat 1: ")
    assert any("<script>" in r["text"] for r in lines)  # plain text, as documented


def test_jspsych_page_is_self_contained(exports: dict[str, str]) -> None:
    page = exports["jspsych"]
    assert "<script src" not in page and "<link" not in page
    assert re.search(r"https?://", page.split('id="study-data"')[1]) is None
    assert "initJsPsych" in page and "jsPsychHtmlButtonResponse" in page


def test_exports_are_deterministic(questionnaire: Questionnaire, exports: dict[str, str]) -> None:
    assert {name: export_text(questionnaire, name) for name in TOOLS} == exports
