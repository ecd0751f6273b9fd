"""The commands as a researcher runs them: build, export, check, import."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sdtt.cli import main
from sdtt.dialogue.store import write_transcripts
from sdtt.tasks.judgements import read_judgements
from sdtt.tasks.study import load_study_spec
from tests.questionnaires.helpers import SECRET_WORDS, bots, humans

ROOT = Path(__file__).parents[2]
FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    write_transcripts(tmp_path / "bots.jsonl", bots())
    write_transcripts(tmp_path / "humans.jsonl", humans())
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_build_export_check_and_import(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "questionnaire",
            "build",
            "--bot",
            "bots.jsonl",
            "--human",
            "humans.jsonl",
            "--x",
            "3",
            "--seed",
            "11",
            "--name",
            "fixture",
            "--out",
            "study",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "2 pair(s) (X=3: 2) and 1 catch pair(s)" in out
    assert "never upload" in out
    # Same inputs and seed as the importer fixtures: their answers import here too.
    assert main(["questionnaire", "export", "study"]) == 0
    exported = sorted(p.name for p in (workdir / "study" / "export").iterdir())
    assert exported == [
        "jspsych.html",
        "limesurvey.txt",
        "qualtrics.qsf",
        "questionnaire.csv",
        "questionnaire.html",
        "questionnaire.md",
        "surveyjs.json",
    ]
    for path in (workdir / "study" / "export").iterdir():
        text = path.read_text(encoding="utf-8").lower()
        assert not [w for w in SECRET_WORDS if w.lower() in text], path.name
    capsys.readouterr()
    export = workdir / "study" / "export"
    assert (
        main(
            [
                "questionnaire",
                "check",
                str(export / "qualtrics.qsf"),
                str(export / "limesurvey.txt"),
            ]
        )
        == 0
    )
    assert capsys.readouterr().out.count(": ok") == 2
    shutil.copy(FIXTURES / "qualtrics-responses.csv", workdir / "responses.csv")
    code = main(
        [
            "responses",
            "import",
            "responses.csv",
            "--study",
            "study",
            "--format",
            "qualtrics",
            "-o",
            "judgements.jsonl",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "5 judge(s)" in out and "failed catch pairs: 1" in out
    judgements = read_judgements(workdir / "judgements.jsonl")
    assert len(judgements) == 15
    assert {j.judge_id for j in judgements if not j.excluded} == {"PID001", "PID002"}


def test_append_marks_a_returning_judge(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(
        [
            "questionnaire",
            "build",
            "--bot",
            "bots.jsonl",
            "--human",
            "humans.jsonl",
            "--x",
            "3",
            "--seed",
            "11",
            "--name",
            "fixture",
            "--out",
            "study",
        ]
    )
    args = [
        "responses",
        "import",
        str(FIXTURES / "generic-answers.csv"),
        "--study",
        "study",
        "--format",
        "csv",
        "-o",
        "j.jsonl",
    ]
    assert main(args) == 0
    assert main([*args, "--append"]) == 0
    judgements = read_judgements(workdir / "j.jsonl")
    assert len(judgements) == 18
    assert all("repeat participation" in (j.exclusion_reason or "") for j in judgements[9:])


def test_problems_exit_with_a_message_not_a_traceback(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "questionnaire",
            "build",
            "--bot",
            "bots.jsonl",
            "--human",
            "humans.jsonl#human-conv-2",
            "--x",
            "3",
            "--out",
            "s",
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "is about" in err and "--allow-topic-mismatch" in err and "Traceback" not in err
    code = main(
        [
            "questionnaire",
            "build",
            "--bot",
            "bots.jsonl",
            "--human",
            "humans.jsonl",
            "--x",
            "30",
            "--out",
            "s",
        ]
    )
    assert code == 2
    assert "fewer than 30" in capsys.readouterr().err
    code = main(["questionnaire", "export", "nowhere"])
    assert code == 2
    assert "questionnaire not found" in capsys.readouterr().err


def test_check_reports_a_broken_file(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(
        [
            "questionnaire",
            "build",
            "--bot",
            "bots.jsonl",
            "--human",
            "humans.jsonl",
            "--x",
            "3",
            "--out",
            "s",
        ]
    )
    main(["questionnaire", "export", "s", "--format", "qualtrics"])
    path = workdir / "s" / "export" / "qualtrics.qsf"
    document = json.loads(path.read_text())
    for element in document["SurveyElements"]:
        if element["Element"] == "QC":
            element["SecondaryAttribute"] = "1"
    path.write_text(json.dumps(document))
    capsys.readouterr()
    assert main(["questionnaire", "check", str(path)]) == 1
    assert "QC says 1 questions" in capsys.readouterr().out


def test_example_spec_is_valid_and_builds(workdir: Path) -> None:
    spec = load_study_spec(ROOT / "questionnaires" / "example-study.toml")
    assert spec.name == "pilot" and spec.x_turns == [3, 10]
    assert [d.name for d in spec.demographics] == [
        "age",
        "gender",
        "education",
        "language",
        "aiuse",
    ]
    (workdir / "spec.toml").write_text(
        (ROOT / "questionnaires" / "example-study.toml")
        .read_text()
        .replace("../transcripts/simulated.jsonl", "bots.jsonl")
        .replace('human = "corpus"', 'human = "humans.jsonl"')
        .replace("x_turns = [3, 10]", "x_turns = [3]"),
        encoding="utf-8",
    )
    assert main(["questionnaire", "build", "--spec", "spec.toml", "--out", "pilot"]) == 0
    # Flags override the file.
    assert (
        main(
            [
                "questionnaire",
                "build",
                "--spec",
                "spec.toml",
                "--no-topic-check",
                "--catch",
                "0",
                "--out",
                "p2",
            ]
        )
        == 0
    )
    built = json.loads((workdir / "p2" / "questionnaire.json").read_text())
    assert all(item["topic"] is None for item in built["items"]) and len(built["items"]) == 2


def test_bad_spec_names_the_file_and_field(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "bad.toml").write_text('x_turns = [3]\ntimestamps = "sometimes"\n')
    assert main(["questionnaire", "build", "--spec", "bad.toml", "--out", "s"]) == 2
    err = capsys.readouterr().err
    assert "bad.toml" in err and "timestamps" in err


def test_check_names_the_file_types_it_checks(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "answers.csv").write_text("judge_id,question,answer\n", encoding="utf-8")
    (workdir / "page.html").write_text("<html></html>", encoding="utf-8")
    (workdir / "survey.json").write_text('{"pages": []}', encoding="utf-8")
    files = ["answers.csv", "page.html", "survey.json"]
    assert main(["questionnaire", "check", *files]) == 2  # files it cannot check: user error
    printed = capsys.readouterr()
    out, err = " ".join(printed.out.split()), " ".join(printed.err.split())
    assert "not valid JSON" not in out + err
    assert "error: answers.csv: 'questionnaire check' cannot check .csv files" in err
    assert "cannot check .html files" in err
    assert "It checks Qualtrics .qsf, SurveyJS .json and LimeSurvey .txt/.tsv files" in err
    assert "survey.json: ok" in out  # the other files are still checked
