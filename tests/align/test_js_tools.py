"""The rating task in the real tools: SurveyJS in Node and Chromium, jsPsych in Chromium.

Needs what ``bash tests/questionnaires/js/install.sh`` installs (see
``tests/questionnaires/test_js_tools.py``, whose runner this reuses).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sdtt.align.export import export_task
from sdtt.align.rating_import import import_ratings
from sdtt.align.task import RatingBuild
from tests.align.helpers import build
from tests.questionnaires.test_js_tools import HOST, _node


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[RatingBuild, RatingBuild, Path]:
    folder = tmp_path_factory.mktemp("rating")
    # Excerpts of single turns hold the planted markup of the fixture chats.
    small = build(folder, unit="excerpt", excerpt_turns=1, items_per_source=1, planted=True)
    forms = build(folder, items_per_source=4, pairs_per_judge=7, ratings_per_pair=2)
    return small, forms, folder


@pytest.fixture(scope="module")
def report(built: tuple[RatingBuild, RatingBuild, Path]) -> dict[str, Any]:
    small, forms, folder = built
    [survey] = export_task(small.task, "surveyjs", folder / "small-out")
    [page] = export_task(small.task, "jspsych", folder / "small-out")
    [form_page] = export_task(forms.task, "jspsych", folder / "forms-out")
    tasks = {
        "surveyjs_standalone": {"json": str(survey), "host": "", "runs": [{"standalone": True}]},
        "surveyjs": {
            "json": str(survey),
            "host": str(HOST),
            "runs": [{"params": "?PROLIFIC_PID=hosted"}],
        },
        "jspsych": {
            "page": str(page),
            "simulate": ["?simulate=data-only&PROLIFIC_PID=sim"],
            "click": ["?PROLIFIC_PID=clicker"],
        },
        "jspsych_design": {
            "page": str(form_page),
            "simulate": ["?simulate=data-only&PROLIFIC_PID=f2&form=2"],
        },
    }
    path = folder / "tasks.json"
    path.write_text(json.dumps(tasks), encoding="utf-8")
    result: dict[str, Any] = _node(["browser.cjs", str(path)])
    return result


def test_surveyjs_rating_survey_loads_cleanly(built: tuple[RatingBuild, RatingBuild, Path]) -> None:
    _, forms, folder = built
    files = export_task(forms.task, "surveyjs", folder / "forms-surveyjs")
    assert len(files) == len(forms.task.forms)
    checked = _node(["check_surveyjs.cjs", *map(str, files)])
    for path, result in checked.items():
        assert result["core2"]["jsonErrors"] == [], path
        assert result["core3"]["jsonErrors"] == [], path
        assert result["lint"]["findings"] == [], path
    names = [q["name"] for q in checked[str(files[0])]["core3"]["questions"]]
    assert [n for n in names if n in {p.id for p in forms.task.pairs}] != []


def test_surveyjs_answers_import_as_ratings(
    built: tuple[RatingBuild, RatingBuild, Path], report: dict[str, Any], tmp_path: Path
) -> None:
    small = built[0]
    [run] = report["surveyjs_standalone"]
    assert run["errors"] == [] and run["blocked"] == [] and run["pwned"] is None
    assert "window.__pwned" in run["text"]  # the planted markup shows as text
    path = tmp_path / "results.json"
    path.write_text(json.dumps([run["result"]]), encoding="utf-8")
    ratings = import_ratings(path, small.task, small.key, "surveyjs")
    assert {r.pair_id for r in ratings} == {p.id for p in small.task.pairs}
    assert {r.rating for r in ratings} == {small.task.scale_min}  # the runner picks the first


def test_surveyjs_with_the_host_page_records_judge_and_seconds(
    built: tuple[RatingBuild, RatingBuild, Path], report: dict[str, Any], tmp_path: Path
) -> None:
    small = built[0]
    [run] = report["surveyjs"]
    assert run["errors"] == [] and run["blocked"] == [] and run["pwned"] is None
    path = tmp_path / "results.json"
    path.write_text(json.dumps(run["result"]), encoding="utf-8")
    ratings = import_ratings(path, small.task, small.key, "surveyjs")
    assert {r.judge_id for r in ratings} == {"hosted"}
    assert {r.pair_id for r in ratings} == {p.id for p in small.task.pairs}
    assert all(r.response_time_s is not None for r in ratings)


def test_jspsych_simulated_and_clicked_judges_import(
    built: tuple[RatingBuild, RatingBuild, Path], report: dict[str, Any], tmp_path: Path
) -> None:
    small = built[0]
    for run in report["jspsych"]["simulate"] + report["jspsych"]["click"]:
        assert run["errors"] == [] and run["blocked"] == [] and run["pwned"] is None
        path = tmp_path / "data.csv"
        path.write_text(run["csv"], encoding="utf-8")
        ratings = import_ratings(path, small.task, small.key, "jspsych")
        assert {r.pair_id for r in ratings} == {p.id for p in small.task.pairs}
        assert all(r.rating in small.task.scale() for r in ratings)
    clicked = report["jspsych"]["click"][0]
    path.write_text(clicked["csv"], encoding="utf-8")
    assert {r.judge_id for r in import_ratings(path, small.task, small.key, "jspsych")} == {
        "clicker"
    }


def test_jspsych_form_link_shows_only_that_form(
    built: tuple[RatingBuild, RatingBuild, Path], report: dict[str, Any], tmp_path: Path
) -> None:
    forms = built[1]
    [run] = report["jspsych_design"]["simulate"]
    path = tmp_path / "data.csv"
    path.write_text(run["csv"], encoding="utf-8")
    ratings = import_ratings(path, forms.task, forms.key, "jspsych")
    assert sorted(r.pair_id for r in ratings) == sorted(forms.task.forms[1])
