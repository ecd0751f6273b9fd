"""Reveal mode as a researcher runs it: export, import as traces, score."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sdtt.beliefs.traces import read_traces
from sdtt.cli import main
from sdtt.tasks.questionnaire import save_study
from sdtt.tasks.reveal_turns import belief_name, reveal_turns
from tests.questionnaires.helpers import fixture_study


def test_export_import_and_score_reveal_mode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = fixture_study()
    save_study(tmp_path / "study", study.questionnaire, study.key)
    assert main(["questionnaire", "export", str(tmp_path / "study"), "--reveal"]) == 0
    exported = sorted(p.name for p in (tmp_path / "study" / "export").iterdir())
    assert exported == ["jspsych-reveal.html", "surveyjs-reveal.json"]
    capsys.readouterr()
    code = main(
        ["questionnaire", "export", str(tmp_path / "study"), "--reveal", "--format", "qualtrics"]
    )
    assert code != 0
    assert "not supported by this tool (qualtrics)" in capsys.readouterr().err

    answers: dict[str, object] = {"PROLIFIC_PID": "p1"}
    for item in study.questionnaire.items:
        truth = study.key.items[item.id]
        for turn in range(1, reveal_turns(item) + 1):
            answers[belief_name(item.id, turn)] = 90 if truth.bot_position == 2 else 10
        if item.topic is not None:
            answers[item.topic.name] = truth.topic_value
    results = tmp_path / "results.json"
    results.write_text(json.dumps([answers]), encoding="utf-8")
    out = tmp_path / "traces.jsonl"
    args = ["responses", "import", str(results), "--study", str(tmp_path / "study")]
    assert main([*args, "--format", "surveyjs", "--reveal", "-o", str(out)]) == 0
    assert "belief trace(s) written" in capsys.readouterr().out
    assert len(read_traces(out)) == len(study.questionnaire.items)
    assert main(["score", str(out)]) == 0
    # Every judge found the AI: nobody was fooled.
    assert "0.0%" in capsys.readouterr().out
