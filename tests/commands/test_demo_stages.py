from __future__ import annotations

from pathlib import Path

from rich.console import Console

from sdtt.beliefs.traces import read_traces
from sdtt.commands.demo import run_final_stages
from sdtt.commands.demo_stages import DemoRun, study_folder
from sdtt.personas.store import DEFAULT_PERSONA, find_persona
from sdtt.tasks.judgements import read_judgements
from sdtt.tasks.questionnaire import save_study
from tests.questionnaires.helpers import fixture_study


def test_final_demo_stages_judge_score_and_report(tmp_path: Path) -> None:
    console = Console(record=True, width=100)
    demo = DemoRun(
        persona=find_persona(DEFAULT_PERSONA),
        model_name="mock/echo",
        out=tmp_path,
        seed=7,
        console=console,
    )
    study = fixture_study()
    save_study(study_folder(demo), study.questionnaire, study.key)
    run_final_stages(demo)
    names = {path.name for path in demo.files}
    assert {"judgements.jsonl", "report.html", "report.md", "confusion.png"} <= names
    judgements = read_judgements(study_folder(demo) / "judgements.jsonl")
    # mock/echo never answers with an option: recorded, excluded, never guessed.
    assert len(judgements) == 6 and all(j.excluded for j in judgements)
    text = console.export_text()
    assert "5. LLM judge" in text and "6. Pass rate" in text and "7. Report" in text
    assert "non_compliant" in text


def test_the_demo_ends_with_belief_traces_in_the_report(tmp_path: Path) -> None:
    console = Console(record=True, width=100)
    demo = DemoRun(
        persona=find_persona(DEFAULT_PERSONA),
        model_name="mock/chatty",
        out=tmp_path,
        seed=7,
        console=console,
    )
    study = fixture_study()
    save_study(study_folder(demo), study.questionnaire, study.key)
    run_final_stages(demo)
    names = {path.name for path in demo.files}
    assert {"traces.jsonl", "belief-traces.png", "calibration.png"} <= names
    traces = read_traces(study_folder(demo) / "traces.jsonl")
    # mock/chatty states a belief and gives log-probabilities: two traces a pair.
    assert len(traces) == 2 * len(study.questionnaire.items)
    text = console.export_text()
    assert "8. Belief traces" in text
    report = next(path for path in demo.files if path.name == "report.html")
    html = report.read_text(encoding="utf-8")
    assert "Belief traces" in html and "Calibration and sharpness" in html
