"""No CSV or TSV sdtt writes holds a live spreadsheet formula; titles are escaped."""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from sdtt.dialogue.message import Message, Transcript
from sdtt.questionnaires.answers import import_responses
from sdtt.questionnaires.build import BuildResult, build_questionnaire
from sdtt.questionnaires.exports import export_text
from sdtt.questionnaires.pairing import Pairing
from sdtt.spreadsheet import FORMULA_STARTS, restore_cell, safe_cell, safe_html_cell
from sdtt.surveys import limesurvey, qualtrics
from sdtt.tasks.study import StudySpec
from sdtt.ui.judge import AnswerLog
from tests.questionnaires.helpers import START, conversation

FORMULAS = ('=HYPERLINK("http://x.test","click")', "+1+1", "-2+3", "@SUM(A1:A9)")
TITLE = "=1+2 Tom & <b>Jerry</b> ${e://Field/PROLIFIC_PID} {age}"


@settings(derandomize=True)
@given(st.text())
def test_safe_cells_never_start_a_formula_and_restore_exactly(text: str) -> None:
    cell = safe_cell(text)
    assert not cell.startswith(FORMULA_STARTS)
    assert restore_cell(cell) == text
    assert not safe_html_cell(text).startswith(FORMULA_STARTS)


def _formula_study(title: str = TITLE) -> BuildResult:
    bot = conversation("bot-1", "Mozart or Beethoven?", 4, tag="b")
    human = conversation("human-1", "Mozart or Beethoven?", 8, tag="h")
    time = START + timedelta(hours=1)
    for text in FORMULAS:
        bot.messages.append(Message(side="user", text=text, time=time))
        time += timedelta(seconds=30)
        bot.messages.append(Message(side="response", text=text, time=time))
        time += timedelta(seconds=30)
    bot = Transcript(id=bot.id, topic=bot.topic, messages=bot.messages)
    spec = StudySpec(name="f", seed=1, x_turns=[6], catch_pairs=0, title=title)
    return build_questionnaire(spec, [Pairing(bot, None, human, None)])


def _cells(text: str, delimiter: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text), delimiter=delimiter) for cell in row]


def test_questionnaire_csv_neutralises_formulas_and_keeps_them_readable() -> None:
    study = _formula_study()
    cells = _cells(export_text(study.questionnaire, "csv"), ",")
    assert not [c for c in cells if c.startswith(FORMULA_STARTS)]
    for formula in FORMULAS:
        assert "'" + formula in cells  # shown as text, the apostrophe hidden by spreadsheets
    assert [restore_cell(c) for c in cells if c.startswith("'=1+2")] == [TITLE]


def test_limesurvey_file_has_no_formula_cells_and_shows_the_same_text() -> None:
    study = _formula_study()
    text = export_text(study.questionnaire, "limesurvey")
    assert limesurvey.check(text) == []
    cells = _cells(text, "\t")
    assert not [c for c in cells if c.startswith(FORMULA_STARTS)]
    rows = list(csv.DictReader(io.StringIO(text), delimiter="\t"))
    (title,) = [r["text"] for r in rows if r["name"] == "surveyls_title"]
    # Escaped for HTML (LimeSurvey renders it), braces too, and no formula.
    assert title == (
        "&#61;1+2 Tom &amp; &lt;b&gt;Jerry&lt;/b&gt; $&#123;e://Field/PROLIFIC_PID&#125; "
        "&#123;age&#125;"
    )


def test_qualtrics_title_is_escaped_like_all_its_html() -> None:
    document = json.loads(export_text(_formula_study().questionnaire, "qualtrics"))
    assert qualtrics.check(document) == []
    name = document["SurveyEntry"]["SurveyName"]
    options = next(e for e in document["SurveyElements"] if e["Element"] == "SO")["Payload"]
    for shown in (name, options["SurveyTitle"]):
        assert "<b>" not in shown and "${" not in shown and "{age}" not in shown
        assert "Tom &amp; &lt;b&gt;Jerry" in shown


def test_judge_ui_answers_are_safe_in_a_spreadsheet_and_import_unchanged(tmp_path: Path) -> None:
    study = _formula_study()
    item = study.questionnaire.items[0]
    assert item.topic is not None
    truth = study.key.items[item.id]
    log = AnswerLog(tmp_path / "answers.csv")
    log.write("-judge", item.id, "A", 3.0)
    log.write("-judge", item.topic.name, truth.topic_value or "", None)
    log.write("-judge", "language", "=native", None)
    log.write("-judge", "strategy", "'quoted' and @mentions", None)
    log.close()
    cells = _cells((tmp_path / "answers.csv").read_text(encoding="utf-8"), ",")
    assert not [c for c in cells if c.startswith(FORMULA_STARTS)]
    imported = import_responses([tmp_path / "answers.csv"], "csv", study.questionnaire, study.key)
    (judgement,) = imported.judgements
    assert judgement.judge_id == "-judge"
    assert judgement.correct is (truth.correct_choice == "A")
    assert judgement.demographics["language"] == "=native"
    assert judgement.strategy == "'quoted' and @mentions"
