"""Long steps say how far they are: the demo's pseudo-dialogue and sdtt report."""

from __future__ import annotations

from pathlib import Path

import pytest

from sdtt.cli import main


def test_the_demo_shows_each_turn_of_its_pseudo_dialogue(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["demo", "--model", "mock/chatty", "--out", str(tmp_path / "d")]) == 0
    out = capsys.readouterr().out
    stage2 = out.split("2. Self-directed pseudo-dialogue", 1)[1].split("3. Burst engine", 1)[0]
    counts = [line for line in stage2.splitlines() if line.startswith("pseudo-dialogue: ")]
    assert "pseudo-dialogue: 3 of 6 turns written" in " ".join(counts)  # between start and end
    assert counts[-1].startswith("pseudo-dialogue: 6 of 6 turns written")
    # sdtt report on the demo's study says its steps too.
    study = next((tmp_path / "d").glob("*-questionnaire"))
    argv = ["report", str(study / "judgements.jsonl"), "--study", str(study)]
    assert main([*argv, "--out", str(tmp_path / "report")]) == 0
    steps = [line for line in capsys.readouterr().out.splitlines() if line.startswith("report: ")]
    assert steps[0].startswith("report: pass rates, intervals and figures (")
    # ... and each part of the computing as it starts, not one line for all of it.
    assert "report: pass rates and intervals by condition (1000 bootstrap samples)" in steps
    assert "report: pass rates by topic" in steps
    assert steps.index("report: figures: pass rate by turn") < steps.index("report: tells")
    assert steps[-1] == "report: writing report.html and report.md"
