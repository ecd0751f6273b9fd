"""The exports in the real tools: SurveyJS in Node and Chromium, jsPsych in Chromium.

Needs Node.js, the npm packages of ``tests/questionnaires/js`` and Chromium; install them
with ``bash tests/questionnaires/js/install.sh``. The browser is launched once for the
whole module (``browser.cjs`` runs every page) and never loads anything but local files.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sdtt.questionnaires.answers import import_responses
from sdtt.questionnaires.build import BuildResult
from sdtt.questionnaires.exports import export_files
from sdtt.tasks.study import DemographicSpec, DesignSpec, ProlificSpec, StudySpec
from tests.questionnaires.helpers import fixture_study

JS = Path(__file__).parent / "js"
ROOT = Path(__file__).parents[2]
HOST = ROOT / "questionnaires" / "surveyjs-host.js"
PLANTED_TEXT = "<script>window.__pwned=1</script>"
INSTALL = "bash tests/questionnaires/js/install.sh"
SEEDS = (1, 2, 3, 4, 5, 1)
"""SurveyJS shuffle seeds of the standalone runs (the last repeats the first)."""


def _tools() -> tuple[str, str]:
    node = shutil.which("node")
    chromium = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    missing = []
    if node is None:
        missing.append("node is not on PATH")
    for package in ("survey-core", "survey-core-3", "survey-js-ui", "jspsych", "playwright-core"):
        if not (JS / "node_modules" / package / "package.json").exists():
            missing.append(f"npm package {package} is not installed")
            break
    if not Path(chromium).exists():
        missing.append("Chromium is not installed")
    if missing or node is None:
        pytest.fail(
            "questionnaire browser tests cannot run: " + "; ".join(missing) + f". Run: {INSTALL}",
            pytrace=False,
        )
    return node, chromium


def _node(args: list[str]) -> Any:
    node, chromium = _tools()
    done = subprocess.run(
        [node, *args],
        cwd=JS,
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "CHROMIUM": chromium, "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"},
        check=False,
    )
    if done.returncode != 0:
        pytest.fail(f"node {' '.join(args)} failed:\n{done.stderr[-3000:]}", pytrace=False)
    return json.loads(done.stdout)


def _rich_study() -> BuildResult:
    """The fixture study with every option used (text questions, Prolific redirect)."""
    spec = StudySpec(
        name="rich",
        title='Chat study <img src=x onerror="window.__pwned=3"> & {age}',
        seed=4,
        x_turns=[3],
        catch_pairs=2,
        demographics=[
            DemographicSpec(name="age", text="Age?", choices=["young", "old"]),
            DemographicSpec(name="country", text="Where do you live?", required=False),
        ],
        prolific=ProlificSpec(completion_url="https://example.org/done?cc=ABC"),
    )
    return fixture_study(spec)


RICH = _rich_study()
DESIGN = fixture_study(
    StudySpec(name="design", seed=2, x_turns=[3, 10], design=DesignSpec(pairs_per_judge=2))
)
DESIGN_FORMS = (1, 2, 7)


@pytest.fixture(scope="module")
def study() -> BuildResult:
    return fixture_study()


@pytest.fixture(scope="module")
def files(study: BuildResult, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("exports")
    written = export_files(
        study.questionnaire, ["surveyjs", "jspsych", "html", "qualtrics", "limesurvey"], folder
    )
    rich = export_files(RICH.questionnaire, ["surveyjs"], folder / "rich")
    design = export_files(DESIGN.questionnaire, ["jspsych"], folder / "design")
    return {**written, "surveyjs-rich": rich["surveyjs"], "jspsych-design": design["jspsych"]}


@pytest.fixture(scope="module")
def report(files: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    qsf = json.loads(files["qualtrics"].read_text(encoding="utf-8"))
    view_questions = [
        e["Payload"]["QuestionText"]
        for e in qsf["SurveyElements"]
        if e["Element"] == "SQ" and e["Payload"]["DataExportTag"].endswith("view")
    ]
    rows = csv.DictReader(io.StringIO(files["limesurvey"].read_text("utf-8")), delimiter="\t")
    lime_views = [r["text"] for r in rows if r["class"] == "Q" and r["name"].endswith("view")]
    tasks = {
        "surveyjs": {
            "json": str(files["surveyjs"]),
            "host": str(HOST),
            "runs": [{"params": "?PROLIFIC_PID=judge-sj&STUDY_ID=S9", "choice": "A"}],
        },
        "surveyjs_standalone": {
            "json": str(files["surveyjs-rich"]),
            "host": str(HOST),
            "runs": [{"choice": "B", "standalone": True, "seed": seed} for seed in SEEDS]
            + [{"choice": "B", "standalone": True}, {"choice": "B", "standalone": True}],
        },
        "jspsych": {
            "page": str(files["jspsych"]),
            "simulate": [
                "?simulate=data-only&PROLIFIC_PID=sim-1",
                "?simulate=data-only&PROLIFIC_PID=sim-2",
            ],
            "click": ["?PROLIFIC_PID=clicker"],
        },
        "jspsych_design": {
            "page": str(files["jspsych-design"]),
            "simulate": [
                f"?simulate=data-only&PROLIFIC_PID=form-{n}&form={n}" for n in DESIGN_FORMS
            ],
        },
        "pages": [str(files["html"])],
        "fragments": [view_questions[1], lime_views[1]],
    }
    path = tmp_path_factory.mktemp("tasks") / "tasks.json"
    path.write_text(json.dumps(tasks), encoding="utf-8")
    result: dict[str, Any] = _node(["browser.cjs", str(path)])
    return result


def test_surveyjs_loads_with_no_json_errors_and_no_lint_findings(
    files: dict[str, Path], study: BuildResult
) -> None:
    checked = _node(["check_surveyjs.cjs", str(files["surveyjs"]), str(files["surveyjs-rich"])])
    for path, result in checked.items():
        assert result["core2"]["jsonErrors"] == [], path
        assert result["core3"]["jsonErrors"] == [], path
        assert result["lint"]["findings"] == [], path
    plain = checked[str(files["surveyjs"])]
    # Nothing silently dropped: every question the export wrote is in the model.
    names = [q["name"] for q in plain["core3"]["questions"]]
    assert names == ["introtext", *study.questionnaire.question_names()]
    types = {q["name"]: q["type"] for q in plain["core2"]["questions"]}
    item = study.questionnaire.items[0]
    assert (types[item.view_name], types[item.id], types[item.id + "topic"]) == (
        "html",
        "radiogroup",
        "radiogroup",
    )


def test_surveyjs_renders_one_radio_group_per_pair(
    report: dict[str, Any], study: BuildResult
) -> None:
    (run,) = report["surveyjs"]
    pair_pages = [p for p in run["pages"] if p["name"].endswith("page")]
    assert sorted(p["name"] for p in pair_pages) == sorted(
        item.id + "page" for item in study.questionnaire.items
    )
    for page in pair_pages:
        pair_id = page["name"].removesuffix("page")
        judgement_groups = [name for name in page["radiogroups"] if name == pair_id]
        assert judgement_groups == [pair_id]
        assert page["radiogroups"] == [pair_id, pair_id + "topic"]
    assert run["errors"] == [] and run["blocked"] == []


def test_surveyjs_answers_import_back_with_correct_scores(
    report: dict[str, Any], study: BuildResult, tmp_path: Path
) -> None:
    (run,) = report["surveyjs"]
    results = tmp_path / "results.json"
    results.write_text(json.dumps([run["result"]]), encoding="utf-8")
    imported = import_responses([results], "surveyjs", study.questionnaire, study.key)
    assert len(imported.judgements) == len(study.questionnaire.items)
    for judgement in imported.judgements:
        assert judgement.judge_id == "judge-sj"
        assert judgement.choice == "A"  # the test clicked option A everywhere
        assert judgement.correct is (study.key.items[judgement.pair_id].correct_choice == "A")
        assert judgement.response_time_s is not None and judgement.response_time_s >= 0
        assert judgement.demographics["language"] == "typed by test"


def _judgement_rows(text: str) -> list[dict[str, str]]:
    return [row for row in csv.DictReader(io.StringIO(text)) if row["role"] == "judgement"]


def test_jspsych_simulation_runs_end_to_end_and_imports_back(
    report: dict[str, Any], study: BuildResult, tmp_path: Path
) -> None:
    paths = []
    expected = {}
    for index, run in enumerate(report["jspsych"]["simulate"], start=1):
        assert run["errors"] == [] and run["blocked"] == []
        path = tmp_path / f"sim-{index}.csv"
        path.write_text(run["csv"], encoding="utf-8")
        paths.append(path)
        for row in _judgement_rows(run["csv"]):
            # The simulated button index and the recorded option code agree.
            assert row["answer"] == "AB"[int(row["response"])]
            truth = study.key.items[row["item"]]
            expected[row["judge_id"], row["item"]] = row["answer"] == truth.correct_choice
    imported = import_responses(paths, "jspsych", study.questionnaire, study.key)
    got = {(j.judge_id, j.pair_id): j.correct for j in imported.judgements}
    assert got == expected
    assert len(got) == 2 * len(study.questionnaire.items)
    assert {j.judge_id for j in imported.judgements} == {"sim-1", "sim-2"}
    assert all(j.response_time_s is not None for j in imported.judgements)


def test_jspsych_csv_fixture_has_the_real_columns(report: dict[str, Any]) -> None:
    fixture = Path(__file__).parent / "fixtures" / "jspsych-data.csv"
    real = next(csv.reader(io.StringIO(report["jspsych"]["simulate"][0]["csv"])))
    written = next(csv.reader(io.StringIO(fixture.read_text(encoding="utf-8"))))
    assert set(written) == set(real)


def test_jspsych_page_works_for_a_clicking_judge(
    report: dict[str, Any], study: BuildResult, tmp_path: Path
) -> None:
    (run,) = report["jspsych"]["click"]
    assert run["errors"] == [] and run["blocked"] == []
    path = tmp_path / "clicked.csv"
    path.write_text(run["csv"], encoding="utf-8")
    imported = import_responses([path], "jspsych", study.questionnaire, study.key)
    assert {j.choice for j in imported.judgements} == {"A"}  # first button each time
    assert all(j.judge_id == "clicker" for j in imported.judgements)


def test_planted_script_stays_inert_in_every_html_export(report: dict[str, Any]) -> None:
    shown = [
        ("surveyjs", report["surveyjs"][0]),
        ("jspsych", report["jspsych"]["click"][0]),
        ("printable html", report["pages"][0]),
        ("qualtrics chats", report["fragments"][0]),
        ("limesurvey chats", report["fragments"][1]),
    ]
    for name, state in shown:
        assert state["pwned"] is None, f"a script planted in chat text ran in {name}"
        assert PLANTED_TEXT in state["text"], f"{name} does not show the chat text as text"
        assert "{age}" in state["text"], name
        assert state["errors"] == [], name


def test_vendored_jspsych_matches_the_pinned_packages() -> None:
    _tools()
    import importlib.util

    spec = importlib.util.spec_from_file_location("vendor_jspsych", JS / "vendor_jspsych.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    vendor = ROOT / "sdtt" / "surveys" / "vendor"
    for name, text in module.expected_files().items():
        assert (vendor / name).read_text(encoding="utf-8") == text, (
            f"{name} differs from node_modules: "
            "run python tests/questionnaires/js/vendor_jspsych.py"
        )


def test_standalone_surveyjs_shuffles_pairs_by_itself_and_scores(
    report: dict[str, Any], tmp_path: Path
) -> None:
    runs = report["surveyjs_standalone"]
    pair_ids = [item.id for item in RICH.questionnaire.items]
    orders = []
    for run in runs:
        assert run["errors"] == [] and run["blocked"] == []
        assert run["pwned"] is None  # the researcher's title stays text too
        shown = [p["name"].removesuffix("page") for p in run["pages"] if p["name"].endswith("page")]
        assert sorted(shown) == sorted(pair_ids)  # every pair once, one per screen
        orders.append(tuple(shown))
    seeded = orders[: len(SEEDS)]
    assert seeded[0] == seeded[-1]  # the same seed, the same order
    assert len(set(seeded)) >= 3  # other seeds, other orders: SurveyJS shuffles
    results = tmp_path / "results.json"
    results.write_text(json.dumps([run["result"] for run in runs]), encoding="utf-8")
    imported = import_responses([results], "surveyjs", RICH.questionnaire, RICH.key)
    assert len(imported.judgements) == len(runs) * len(pair_ids)
    for judgement in imported.judgements:
        assert judgement.choice == "B"  # the test clicked option B everywhere
        truth = RICH.key.items[judgement.pair_id]
        assert judgement.correct is (truth.correct_choice == "B")


def test_jspsych_page_shows_the_form_it_is_given_and_scores_each_view(
    report: dict[str, Any], tmp_path: Path
) -> None:
    paths = []
    for number, run in zip(DESIGN_FORMS, report["jspsych_design"]["simulate"], strict=True):
        assert run["errors"] == [] and run["blocked"] == []
        rows = _judgement_rows(run["csv"])
        assert [row["item"] for row in rows] == DESIGN.questionnaire.forms[number - 1].items
        assert {row["design_form"] for row in rows} == {str(number)}
        path = tmp_path / f"form-{number}.csv"
        path.write_text(run["csv"], encoding="utf-8")
        paths.append(path)
    imported = import_responses(paths, "jspsych", DESIGN.questionnaire, DESIGN.key)
    assert len(imported.judgements) == sum(
        len(DESIGN.questionnaire.forms[n - 1].items) for n in DESIGN_FORMS
    )
    for judgement in imported.judgements:
        truth = DESIGN.key.items[judgement.shown.design_view or judgement.pair_id]
        assert judgement.bot_position == truth.bot_position
        assert judgement.correct is (judgement.choice == truth.correct_choice)
