"""Single-item exports in the real tools: SurveyJS in Node and Chromium, jsPsych in
Chromium, through the questionnaire tests' harness (``tests/questionnaires/js``), and the
answers imported back.

Needs Node.js, the npm packages of ``tests/questionnaires/js`` and Chromium (install with
``bash tests/questionnaires/js/install.sh``).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from sdtt.single.build import SingleKey, StudySettings, build_study
from sdtt.single.catch import catch_items
from sdtt.single.items import cut_items
from sdtt.surveys.tool import ExportOptions
from sdtt.surveys.tools import TOOLS
from sdtt.tasks.single_task import SingleTask
from tests.questionnaires.test_js_tools import HOST, _node
from tests.single.helpers import PLANTED, corpus


@pytest.fixture(scope="module")
def study() -> tuple[SingleTask, SingleKey]:
    items, _ = cut_items(corpus(2, 12), (3, 12))
    settings = StudySettings(
        forms=3, per_form=5, catch_per_form=1, confidence=True, reason=True, seed=4
    )
    return build_study(items, settings, catch=catch_items(items, 3, seed=1))


@pytest.fixture(scope="module")
def files(
    study: tuple[SingleTask, SingleKey], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path]:
    task, _ = study
    folder = tmp_path_factory.mktemp("single-export")
    written: dict[str, Path] = {}
    for tool in ("surveyjs", "jspsych"):
        fielded = TOOLS[tool].single
        assert fielded is not None
        for name, text in fielded.write(task, ExportOptions()).items():
            (folder / name).write_text(text, encoding="utf-8")
            written[name] = folder / name
    return written


@pytest.fixture(scope="module")
def report(files: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tasks = {
        "surveyjs": {
            "json": str(files["single-surveyjs-form-1.json"]),
            "host": str(HOST),
            "runs": [
                {"standalone": True, "seed": 3},
                {"params": "?PROLIFIC_PID=hosted", "seed": 5},
            ],
        },
        "jspsych": {
            "page": str(files["single-jspsych.html"]),
            "simulate": ["?simulate=data-only&form=2&PROLIFIC_PID=sim"],
            "click": ["?form=3&PROLIFIC_PID=clicker"],
        },
    }
    path = tmp_path_factory.mktemp("single-tasks") / "tasks.json"
    path.write_text(json.dumps(tasks), encoding="utf-8")
    result: dict[str, Any] = _node(["browser.cjs", str(path)])
    return result


def test_surveyjs_forms_load_without_errors_or_lint_findings(files: dict[str, Path]) -> None:
    surveys = [str(path) for name, path in files.items() if name.endswith(".json")]
    checked = _node(["check_surveyjs.cjs", *surveys])
    for name, found in checked.items():
        assert found["core2"]["jsonErrors"] == [], name
        assert found["core3"]["jsonErrors"] == [], name
        assert found["lint"]["errorCount"] == 0, (name, found["lint"]["findings"])


def test_surveyjs_judge_sees_one_item_a_screen_and_answers_import_back(
    report: dict[str, Any], study: tuple[SingleTask, SingleKey], tmp_path: Path
) -> None:
    task, _ = study
    run = report["surveyjs"][0]
    assert run["errors"] == [] and run["blocked"] == []
    assert run["pwned"] is None and PLANTED in run["text"]  # shown as text, never run
    form = task.forms[0]
    item_screens = [page for page in run["pages"] if page["name"].endswith("page")]
    assert len(item_screens) == len(form)
    for page in item_screens:
        item = task.item(page["name"].removesuffix("page"))
        # Both speakers' verdicts and confidences, the topic check and the reason.
        assert {item.verdict_name(1), item.verdict_name(2)} <= set(page["radiogroups"])
        assert {item.confidence_name(1), item.confidence_name(2)} <= set(page["radiogroups"])
        assert item.reason_name in page["texts"]
    results = tmp_path / "results.json"
    results.write_text(json.dumps([{**run["result"], "judge_id": "sj"}]), encoding="utf-8")
    fielded = TOOLS["surveyjs"].single
    assert fielded is not None
    answers = fielded.read(results, task)
    assert sorted(a.item for a in answers) == sorted(form)
    for answer in answers:
        # The harness checks the first option everywhere: Human, confidence 1.
        assert set(answer.verdicts.values()) == {"human"}
        assert set(answer.confidence.values()) == {1}
        assert answer.reason == "typed by test"
        assert answer.judge_id == "sj"


def test_jspsych_simulated_and_clicking_judges_import_back(
    report: dict[str, Any], study: tuple[SingleTask, SingleKey], tmp_path: Path
) -> None:
    task, _ = study
    fielded = TOOLS["jspsych"].single
    assert fielded is not None
    for run, form in (
        (report["jspsych"]["simulate"][0], task.forms[1]),
        (report["jspsych"]["click"][0], task.forms[2]),
    ):
        assert run["errors"] == [] and run["blocked"] == []
        assert run["pwned"] is None
        path = tmp_path / "run.csv"
        path.write_text(run["csv"], encoding="utf-8")
        answers = fielded.read(path, task)
        assert sorted(a.item for a in answers) == sorted(form)
        rows = [r for r in csv.DictReader(io.StringIO(run["csv"])) if r["role"] == "single"]
        for answer in answers:
            item = task.item(answer.item)
            assert set(answer.verdicts) == {"A", "B"}
            assert all(v in ("human", "machine") for v in answer.verdicts.values())
            given = json.loads(next(r["answer"] for r in rows if r["item"] == answer.item))
            assert answer.verdicts["A"] == given[item.verdict_name(1)]
            assert answer.seconds is not None
    clicked = report["jspsych"]["click"][0]
    assert PLANTED in clicked["text"]
    path = tmp_path / "clicked.csv"
    path.write_text(clicked["csv"], encoding="utf-8")
    for answer in fielded.read(path, task):
        assert set(answer.verdicts.values()) == {"human"}  # first option everywhere
        assert answer.judge_id == "clicker" and answer.reason == "typed by test"


def test_no_export_carries_the_key_or_provenance(
    files: dict[str, Path], study: tuple[SingleTask, SingleKey]
) -> None:
    _, key = study
    for path in files.values():
        text = path.read_text(encoding="utf-8")
        assert "persona-name-xyz" not in text
        for entry in key.items[:6]:
            assert entry.item not in text and f'"{entry.source}"' not in text


def test_surveyjs_on_the_host_page_records_the_judge_and_seconds_per_item(
    report: dict[str, Any], study: tuple[SingleTask, SingleKey], tmp_path: Path
) -> None:
    task, _ = study
    run = report["surveyjs"][1]
    assert run["errors"] == [] and run["blocked"] == []
    results = tmp_path / "hosted.json"
    results.write_text(json.dumps(run["result"]), encoding="utf-8")
    fielded = TOOLS["surveyjs"].single
    assert fielded is not None
    answers = fielded.read(results, task)
    assert sorted(a.item for a in answers) == sorted(task.forms[0])
    assert {a.judge_id for a in answers} == {"hosted"}
    assert all(a.seconds is not None and a.seconds >= 0 for a in answers)
