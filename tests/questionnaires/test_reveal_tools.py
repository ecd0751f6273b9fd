"""Reveal mode in the real tools: SurveyJS and jsPsych in Chromium, answers back as traces.

Needs what ``test_js_tools.py`` needs (``bash tests/questionnaires/js/install.sh``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sdtt.beliefs.reveal_import import import_reveal
from sdtt.questionnaires.build import BuildResult
from sdtt.questionnaires.exports import export_files
from sdtt.surveys.tool import ExportOptions
from sdtt.tasks.reveal_turns import reveal_turns
from tests.questionnaires.helpers import fixture_study
from tests.questionnaires.test_js_tools import HOST, PLANTED_TEXT, _node

STUDY = fixture_study()


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("reveal")
    files = export_files(
        STUDY.questionnaire, ["surveyjs", "jspsych"], folder, ExportOptions(reveal=True)
    )
    tasks = {
        "surveyjs_reveal": {
            "json": str(files["surveyjs"]),
            "host": str(HOST),
            "runs": [{"params": "?PROLIFIC_PID=rev-sj", "belief": 80}],
        },
        "jspsych_reveal": {
            "page": str(files["jspsych"]),
            "simulate": ["?simulate=data-only&PROLIFIC_PID=rev-sim"],
            "click": ["?PROLIFIC_PID=rev-click"],
            "belief": 25,
        },
    }
    path = folder / "tasks.json"
    path.write_text(json.dumps(tasks), encoding="utf-8")
    result: dict[str, Any] = _node(["browser.cjs", str(path)])
    return result


def _steps(study: BuildResult) -> int:
    return sum(reveal_turns(item) for item in study.questionnaire.items)


def test_surveyjs_reveal_shows_one_step_per_screen_and_imports_traces(
    report: dict[str, Any], tmp_path: Path
) -> None:
    (run,) = report["surveyjs_reveal"]
    assert run["errors"] == [] and run["blocked"] == [] and run["pwned"] is None
    steps = [p for p in run["pages"] if "step" in p["name"]]
    assert len(steps) == _steps(STUDY)
    assert all(len(p["sliders"]) == 1 for p in steps)
    assert PLANTED_TEXT in run["text"]
    path = tmp_path / "results.json"
    path.write_text(json.dumps([run["result"]]), encoding="utf-8")
    traces = import_reveal([path], "surveyjs", STUDY.questionnaire, STUDY.key)
    assert len(traces) == len(STUDY.questionnaire.items)
    for trace in traces:
        assert trace.judge_id == "rev-sj"
        assert [p.belief for p in trace.points] == [80] * len(trace.points)
        assert all(p.time_s is not None for p in trace.points)


def test_jspsych_reveal_runs_for_a_clicking_and_a_simulated_judge(
    report: dict[str, Any], tmp_path: Path
) -> None:
    (click,) = report["jspsych_reveal"]["click"]
    (sim,) = report["jspsych_reveal"]["simulate"]
    for run in (click, sim):
        assert run["errors"] == [] and run["blocked"] == [] and run["pwned"] is None
    assert PLANTED_TEXT in click["text"]
    paths = []
    for name, run in (("click", click), ("sim", sim)):
        path = tmp_path / f"{name}.csv"
        path.write_text(run["csv"], encoding="utf-8")
        paths.append(path)
    traces = import_reveal(paths, "jspsych", STUDY.questionnaire, STUDY.key)
    by_judge = {t.judge_id: t for t in traces}
    assert set(by_judge) == {"rev-click", "rev-sim"}
    clicked = [t for t in traces if t.judge_id == "rev-click"]
    assert len(clicked) == len(STUDY.questionnaire.items)
    assert all([p.belief for p in t.points] == [25] * len(t.points) for t in clicked)
    assert all(p.time_s is not None for t in traces for p in t.points)


def test_surveyjs_reveal_loads_with_no_json_errors_or_lint_findings(tmp_path: Path) -> None:
    files = export_files(STUDY.questionnaire, ["surveyjs"], tmp_path, ExportOptions(reveal=True))
    checked = _node(["check_surveyjs.cjs", str(files["surveyjs"])])[str(files["surveyjs"])]
    assert checked["core2"]["jsonErrors"] == [] and checked["core3"]["jsonErrors"] == []
    assert checked["lint"]["findings"] == []
    types = {q["name"]: q["type"] for q in checked["core2"]["questions"]}
    assert {types[n] for n in types if "belief" in n} == {"slider"}
