from __future__ import annotations

from pathlib import Path

import pytest

from sdtt.cli import main
from sdtt.tasks.judgements import write_judgements
from sdtt.tasks.questionnaire import save_study
from tests.analysis.helpers import judgement
from tests.questionnaires.helpers import fixture_study


def _file(tmp_path: Path) -> Path:
    path = tmp_path / "j.jsonl"
    write_judgements(
        path,
        [
            judgement("p1", "j1", True, demographics={"age": "18-24"}),
            judgement("p1", "j2", False, demographics={"age": "25-34"}),
            judgement("p2", "j1", False, x=10, demographics={"age": "18-24"}),
            judgement("p2", "j3", None, excluded="no answer"),
        ],
    )
    return path


def test_score_prints_pass_rates_breakdowns_and_exclusions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The pooled figures below are shown only on request (issue 11 section 2).
    args = ["score", str(_file(tmp_path)), "--by", "x,age", "--bootstrap", "50", "--pool"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "75.0%" in out  # pair-averaged: 1 - (1/2 + 0/1) / 2
    assert "66.7%" in out  # pooled: 1 - 1/3
    assert "By x: Human judges" in out and "By age: Human judges" in out
    assert "By x, pooled over every judge type and bot model (--pool)" in out
    assert "no answer: 1" in out


def test_score_refuses_bad_input_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"version": 1, "study": "s"}\n')
    assert main(["score", str(bad)]) == 2
    assert "bad.jsonl" in capsys.readouterr().err
    assert main(["score", str(_file(tmp_path)), "--by", "shoe"]) == 2
    assert "shoe" in capsys.readouterr().err


def test_judge_then_report_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = fixture_study()
    save_study(tmp_path / "study", study.questionnaire, study.key)
    # mock/echo answers with a chat line, never an option: every judgement non-compliant.
    assert main(["judge", str(tmp_path / "study"), "--model", "mock/echo", "--attempts", "2"]) == 0
    assert "excluded" in capsys.readouterr().out
    out = tmp_path / "report"
    code = main(
        [
            "report",
            str(tmp_path / "study" / "judgements.jsonl"),
            "--out",
            str(out),
            "--study",
            str(tmp_path / "study"),
            "--bootstrap",
            "20",
        ]
    )
    assert code == 0
    assert "non\\_compliant" in (out / "report.md").read_text()
    assert "non_compliant" in (out / "report.html").read_text()


def test_plan_prints_a_grid_and_the_smallest_design(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--pairs", "10,40", "--judges", "5,20"]) == 0
    out = capsys.readouterr().out
    assert "Smallest design with power >= 0.8: 40 pairs x 20 judges" in out
    assert main(["plan", "--pass-rate", "2"]) == 2
