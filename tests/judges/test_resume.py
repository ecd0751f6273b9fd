"""An LLM judge run writes each answer as it comes, resumes, and is never counted twice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import sdtt.models.mock as mock
from sdtt.cli import main
from sdtt.errors import ServerError
from sdtt.judges.llm import run_llm_judge
from sdtt.models.model import get_model
from sdtt.models.retry import RetryPolicy
from sdtt.tasks.judgements import (
    deduplicate,
    judgement_key,
    load_judgements,
    read_judgements,
    settled_keys,
    write_judgements,
)
from sdtt.tasks.questionnaire import save_study
from tests.questionnaires.helpers import fixture_study


@pytest.fixture
def study(tmp_path: Path) -> Path:
    built = fixture_study()
    folder = tmp_path / "study"
    save_study(folder, built.questionnaire, built.key)
    return folder


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Makes every mock judge answer "A", and counts the questions it is asked."""
    questions: list[str] = []
    real = mock.create

    def create(model: str, **options: Any) -> mock.MockModelAPI:
        options["replies"] = lambda prompt, config: questions.append(prompt.dialogue) or "A"
        return real(model, **options)

    monkeypatch.setattr(mock, "create", create)
    monkeypatch.setattr(mock, "check_name", lambda model: None)  # its replies are given
    return questions


def test_a_rerun_asks_only_what_the_file_does_not_hold(
    study: Path, asked: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    out = study / "judgements.jsonl"
    assert main(["judge", str(study), "--model", "mock/first"]) == 0
    everything = out.read_text(encoding="utf-8").splitlines(keepends=True)
    total = len(asked)
    assert len(everything) == total >= 4
    # A run killed after two answers left just those.
    out.write_text("".join(everything[:2]), encoding="utf-8")
    asked.clear()
    assert main(["judge", str(study), "--model", "mock/first"]) == 0
    assert len(asked) == total - 2
    assert "2 judgement(s) from an earlier run kept" in capsys.readouterr().out
    keys = [(j.pair_id, j.shown.order) for j in read_judgements(out)]
    assert len(keys) == len(set(keys)) == total
    asked.clear()
    before = out.read_bytes()
    assert main(["judge", str(study), "--model", "mock/first"]) == 0
    assert asked == [] and out.read_bytes() == before


def test_score_leaves_out_repeated_answers_and_names_them(
    study: Path, asked: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    out = study / "judgements.jsonl"
    assert main(["judge", str(study), "--model", "mock/first"]) == 0
    once = read_judgements(out)
    doubled = study / "doubled.jsonl"
    write_judgements(doubled, once + once)
    capsys.readouterr()
    assert main(["score", str(out), "--bootstrap", "20"]) == 0
    single = capsys.readouterr()
    assert main(["score", str(doubled), "--bootstrap", "20"]) == 0
    repeated = capsys.readouterr()
    assert repeated.out.replace(str(doubled), "") == single.out.replace(str(out), "")
    assert f"{len(once)} repeated judgement(s)" in repeated.err
    assert "llm-paired:mock/first" in repeated.err and once[0].pair_id in repeated.err
    with pytest.warns(UserWarning, match="repeated"):
        assert load_judgements([doubled]) == once


@pytest.mark.trio
async def test_answers_lost_to_model_errors_are_asked_again_and_replace_the_errors() -> None:
    built = fixture_study()
    down = get_model(
        "mock/judge", replies=lambda p, c: ServerError("boom"), retry=RetryPolicy(max_attempts=1)
    )
    failed = await run_llm_judge(down, built.questionnaire, built.key)
    assert settled_keys(failed) == set()
    up = get_model("mock/judge", replies=lambda p, c: "B")
    written: list[Any] = []
    answered = await run_llm_judge(
        up,
        built.questionnaire,
        built.key,
        settled=settled_keys(failed),
        on_judgement=written.append,
    )
    assert sorted(written, key=judgement_key) == sorted(answered, key=judgement_key)
    assert len(answered) == len(failed)
    found = deduplicate(failed + answered)
    assert found.judgements == answered and found.retried == failed and not found.repeated
