"""A file given to the wrong command is named for what it is, with the command that
takes it."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdtt.cli import main
from sdtt.files import what_file_is
from sdtt.tasks.questionnaire import save_study
from tests.questionnaires.helpers import fixture_study

FIXTURES = Path(__file__).resolve().parents[1] / "questionnaires/fixtures"


@pytest.fixture
def study(tmp_path: Path) -> Path:
    built = fixture_study()
    save_study(tmp_path / "study", built.questionnaire, built.key)
    return tmp_path / "study"


def _error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    return capsys.readouterr().err


def test_score_given_the_answer_key(study: Path, capsys: pytest.CaptureFixture[str]) -> None:
    error = _error(["score", str(study / "answer-key.json")], capsys)
    assert "answer key" in error
    assert "sdtt score STUDY/judgements.jsonl" in error


def test_score_given_the_questionnaire(study: Path, capsys: pytest.CaptureFixture[str]) -> None:
    error = _error(["score", str(study / "questionnaire.json")], capsys)
    assert "questionnaire.json" in error and "sdtt judge" in error


@pytest.mark.parametrize(
    ("fixture", "tool"),
    [
        ("qualtrics-responses.csv", "qualtrics"),
        ("jspsych-data.csv", "jspsych"),
        ("limesurvey-responses.csv", "limesurvey"),
        ("generic-answers.csv", "csv"),
    ],
)
def test_responses_import_as_surveyjs_names_the_tool(
    fixture: str, tool: str, study: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["responses", "import", "--study", str(study), "--format", "surveyjs"]
    error = _error([*argv, str(FIXTURES / fixture), "--out", str(tmp_path / "j.jsonl")], capsys)
    assert f"--format {tool}" in error
    assert not (tmp_path / "j.jsonl").exists()


@given(st.text())
def test_any_text_is_told_apart_without_an_error(text: str) -> None:
    told = what_file_is(text)
    assert told is None or told.startswith("This ")
