"""The judging app: demographics first, pairs one at a time, judgements like the importers'."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, Static

from sdtt.questionnaires.answers import import_responses
from sdtt.tasks.judgements import read_judgements
from sdtt.ui.judge import JudgeApp, judging_steps
from tests.questionnaires.helpers import fixture_study
from tests.ui.helpers import wait_for


@pytest.mark.asyncio
async def test_judging_records_answers_scored_like_an_import(tmp_path: Path) -> None:
    study = fixture_study()
    questionnaire, key = study.questionnaire, study.key
    out = tmp_path / "judgements.jsonl"
    app = JudgeApp(questionnaire, key, judge_id="p01", out=out)
    steps = judging_steps(questionnaire, "p01")
    assert [s.item for s in steps[: len(questionnaire.demographics)]] == [None] * len(
        questionnaire.demographics
    )
    async with app.run_test(size=(80, 24)) as pilot:
        for step in steps:
            assert app.step == step
            shown = str(app.query_one("#judge-question", Static).render())
            assert step.question.text.split()[0] in shown
            if step.question.choices is not None:
                await pilot.press("1")
            else:
                app.query_one("#judge-text", Input).value = "gut feeling"
                await pilot.press("enter")
        await wait_for(pilot, lambda: app.result is not None)
        await pilot.press("ctrl+q")
    judgements = read_judgements(out)
    assert len(judgements) == len(questionnaire.items)
    assert {j.judge_id for j in judgements} == {"p01"}
    # The same answers, imported from the answers file, score identically.
    imported = import_responses(
        [out.with_name(out.name + ".answers.csv")], "csv", questionnaire, key
    ).judgements
    strip = {"source", "response_time_s"}
    assert [j.model_dump(exclude=strip) for j in judgements] == [
        j.model_dump(exclude=strip) for j in imported
    ]
    assert all(j.choice == "A" for j in judgements)
    assert all(j.correct == (key.items[j.pair_id].correct_choice == "A") for j in judgements)
    assert all(j.demographics for j in judgements)


@pytest.mark.asyncio
async def test_judging_screen_never_shows_the_key(tmp_path: Path) -> None:
    study = fixture_study()
    app = JudgeApp(study.questionnaire, study.key, judge_id="p02", out=tmp_path / "j.jsonl")
    secrets = set(study.key.sensitive_terms)
    for item in study.key.items.values():
        secrets |= {item.bot.id, item.human.id}
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in app.steps:
            screen_text = "".join(str(widget.render()) for widget in app.screen.query(Static))
            assert not [s for s in secrets if s and s in screen_text]
            step = app.step
            assert step is not None
            if step.question.choices is not None:
                await pilot.press("2")
            else:
                app.query_one("#judge-text", Input).value = "n/a"
                await pilot.press("enter")


def test_answers_logged_after_a_row_cut_before_its_line_end_stay_separate(
    tmp_path: Path,
) -> None:
    import csv

    from sdtt.ui.judge import AnswerLog

    path = tmp_path / "out.jsonl.answers.csv"
    path.write_text("judge_id,question,answer,seconds\r\np01,q1,A,2.0", encoding="utf-8")
    log = AnswerLog(path)
    log.write("p01", "q2", "B", 3.0)
    log.close()
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[1:] == [["p01", "q1", "A", "2.0"], ["p01", "q2", "B", "3.0"]]
