"""The README's recipe: a 3/10/110-turn study with mock models, judged, scored, reported."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

RECIPE = Path(__file__).parents[2] / "examples" / "turns_study.py"


def test_the_papers_design_reproduces_with_mock_models(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    spec = importlib.util.spec_from_file_location("turns_study", RECIPE)
    assert spec is not None and spec.loader is not None
    recipe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(recipe)
    # The chats start at fixed times (simulate --start), so every run is the same study.
    report = recipe.run(tmp_path)
    markdown = (report / "report.md").read_text()
    assert "![Pass rate against turns](pass-rate.png)" in markdown
    assert (report / "pass-rate.png").read_bytes()[:4] == b"\x89PNG"
    points = markdown.split("## Pass rate against turns: the points")[1].split("##")[0]
    rows = [row.split("|") for row in points.splitlines() if "mock/chatty" in row]
    assert [row[2].strip() for row in rows] == ["3", "10", "110"]
    assert all(row[3].strip() == "2" for row in rows)  # both orders of one pair each
    # The scripted judge answers from a hash of the prompt: any rate, but a rate.
    assert all(row[4].strip() in ("0.0%", "50.0%", "100.0%") for row in rows)
    assert "LLM judge mock/judge (paired), one row per condition" in markdown
