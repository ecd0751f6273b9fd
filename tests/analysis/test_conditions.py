"""Headlines never pool what should not be pooled: one row per condition, judges apart."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from sdtt.analysis.metrics import condition_tables
from sdtt.analysis.report import build_report, render_markdown
from sdtt.analysis.table import judgement_table, table_of_fields
from sdtt.cli import main
from sdtt.dialogue.condition import Condition
from sdtt.dialogue.store import write_transcripts
from sdtt.tasks.judgements import (
    Judgement,
    iter_judgement_fields,
    read_judgements,
    write_judgements,
)
from tests.analysis.helpers import judgement
from tests.questionnaires.helpers import bots, humans

FIXTURES = Path(__file__).parents[1] / "questionnaires" / "fixtures"


def at(
    total: int, pair: str, judge: str, correct: bool, x: int | None = None, **fields: Any
) -> Judgement:
    """A human judgement of a pair shown at ``total`` turns (N = 100 above 10), its last
    ``x`` live turns (default: all, at most 10)."""
    live = min(total, 10)
    n = total - live
    return judgement(pair, judge, correct, x=x or live, n=n, live_to=live, mode="burst", **fields)


def llm(record: Judgement) -> Judgement:
    return record.model_copy(
        update={
            "judge_type": "llm",
            "judge_model": "mock/judge",
            "shown": record.shown.model_copy(update={"judge_kind": "paired"}),
        }
    )


def records() -> list[Judgement]:
    """Humans find the bot 1 in 4 times at 3 turns, 3 in 4 at 110; an LLM judge always."""
    out = []
    for total, hits in ((3, 1), (10, 2), (110, 3)):
        for index in range(4):
            out.append(at(total, f"p{total}", f"j{index}", index < hits))
        out.append(llm(at(total, f"p{total}", "llm", True)))
    return out


@pytest.fixture
def judged(tmp_path: Path) -> Path:
    path = tmp_path / "j.jsonl"
    write_judgements(path, records())
    return path


def _score(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["score", *args, "--bootstrap", "20"]) == 0
    return capsys.readouterr().out


def test_score_leads_with_one_row_per_condition_humans_and_llms_apart(
    judged: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    out = _score(capsys, str(judged))
    human_table, _, llm_table = out.partition("LLM judge mock/judge (paired)")
    assert human_table.startswith("Human judges, one row per condition")
    for turns, rate in (("turn 3", "75.0%"), ("turn 10", "50.0%"), ("turn 110", "25.0%")):
        line = next(row for row in human_table.splitlines() if f"burst, {turns} (N=" in row)
        assert rate in line
    assert "0.0%" in llm_table and "75.0%" not in llm_table
    assert "All test judgements, pooled" not in out
    assert "All test judgements, pooled" in _score(capsys, str(judged), "--pool")


def test_by_turns_n_and_x_sort_as_numbers(
    judged: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    out = _score(capsys, str(judged), "--by", "turns,n,x")
    human = "By turns: Human judges, bot openai/gpt-4o: pass rates"
    turns_part = out.split(human)[1].split("By turns")[0]
    rows = [line.split("│")[1].strip() for line in turns_part.splitlines() if "│" in line]
    assert rows == ["3", "10", "110"]
    assert "By turns: LLM judge mock/judge (paired), bot openai/gpt-4o" in out
    assert "By n: Human judges" in out and "By x: Human judges" in out
    # Human and LLM judges are never mixed in one breakdown unless asked, and then it says so.
    assert "pooled over" not in out and "all judges" not in out
    pooled = _score(capsys, str(judged), "--by", "turns", "--pool")
    assert "By turns, pooled over every judge type and bot model (--pool)" in pooled


def test_catch_pairs_never_enter_a_pass_rate(tmp_path: Path) -> None:
    base = records()
    caught = [
        at(3, "c1", f"j{i}", False).model_copy(update={"pair_kind": "catch"}) for i in range(4)
    ]
    frames = [judgement_table(base), judgement_table(base + caught)]
    tables = [build_report(frame, tmp_path / str(i), reps=0) for i, frame in enumerate(frames)]
    first, second = (render_markdown(t).split("## Verdicts")[0] for t in tables)
    assert first == second


def test_report_figure_has_a_point_per_total_turn_and_a_log_axis(tmp_path: Path) -> None:
    report = build_report(judgement_table(records()), tmp_path, reps=20)
    markdown = render_markdown(report)
    assert "](pass-rate.png)" in markdown
    points = markdown.split("## Pass rate against turns: the points")[1].split("##")[0]
    for curve in ("openai/gpt-4o (human judges)", "openai/gpt-4o (LLM judge mock/judge (paired))"):
        shown = [row.split("|")[2].strip() for row in points.splitlines() if curve in row]
        assert shown == ["3", "10", "110"], curve
    assert "All judgements, pooled" not in markdown
    assert "All judgements, pooled" in render_markdown(
        build_report(judgement_table(records()), tmp_path, reps=0, pool=True)
    )


def test_import_and_score_report_the_same_exclusions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    write_transcripts(tmp_path / "bots.jsonl", bots())
    write_transcripts(tmp_path / "humans.jsonl", humans())
    build = ["questionnaire", "build", "--bot", "bots.jsonl", "--human", "humans.jsonl"]
    assert main([*build, "--x", "3", "--seed", "11", "--name", "fixture", "--out", "st"]) == 0
    shutil.copy(FIXTURES / "qualtrics-responses.csv", tmp_path / "r.csv")
    capsys.readouterr()
    imported = ["responses", "import", "r.csv", "--study", "st", "--format", "qualtrics"]
    assert main([*imported, "-o", "j.jsonl"]) == 0
    said = [line.strip() for line in capsys.readouterr().out.splitlines()]
    (import_line,) = [line for line in said if line.startswith("left out of pass rates")]
    assert "catch-pair judgement(s), never counted" in import_line
    assert not import_line.startswith("left out of pass rates: 0 excluded")
    scored = _score(capsys, "j.jsonl").splitlines()
    assert import_line in [line.strip() for line in scored]
    # Human judgements carry N and the turn shown: the last 3 of 12 turns, N = 0 assumed.
    tests = [j for j in read_judgements(tmp_path / "j.jsonl") if j.pair_kind == "test"]
    assert {(j.pseudo_turns, j.x_turns, j.total_turns) for j in tests} == {(0, 3, 12)}


def test_the_last_3_and_last_10_turns_of_one_chat_stay_apart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    last10 = at(10, "p10", "j1", True)
    last3 = at(10, "p3", "j1", False, x=3)
    write_judgements(tmp_path / "j.jsonl", [last10, last3])
    out = _score(capsys, str(tmp_path / "j.jsonl"))
    assert "burst, turn 10 (N=0, X=3)" in out and "burst, turn 10 (N=0, X=10)" in out
    report = build_report(judgement_table([last10, last3]), tmp_path / "r", reps=0)
    points = render_markdown(report).split("the points")[1].split("##")[0]
    assert "X=3 (human judges)" in points and "X=10 (human judges)" in points


def test_chunked_studies_get_a_length_curve(tmp_path: Path) -> None:
    chunks = [
        judgement(f"k{k}", f"j{i}", i < k // 3, x=k, view="chunk")
        for k in (3, 6, 9)
        for i in range(3)
    ]
    report = build_report(judgement_table(chunks), tmp_path, reps=0)
    markdown = render_markdown(report)
    assert "![Length curve](length-curve.png)" in markdown
    points = markdown.split("## Length curve: the points")[1].split("##")[0]
    shown = [row.split("|")[2].strip() for row in points.splitlines() if "openai" in row]
    assert shown == ["3", "6", "9"]
    assert (tmp_path / "length-curve.png").read_bytes()[:4] == b"\x89PNG"


def _old_form(record: Judgement, nested: bool) -> dict[str, Any]:
    """``record`` as an older sdtt wrote it: a ``condition`` mapping with the bot's
    condition nested (``bot_condition``, beside the transcript's ``bot_meta``) or, older
    still, as the loose keys of ``bot_meta``; X, N and N + X copied to the top."""
    fields = record.model_dump(mode="json")
    shown = fields.pop("shown")
    fields.pop("notes")
    bot = shown.pop("bot")
    shown.pop("kept_counts")
    condition = {key: value for key, value in shown.items() if value is not None}
    if nested:
        condition["bot_condition"] = bot
        condition["bot_meta"] = {"source": "f"}
    else:
        loose = {key: value for key, value in bot.items() if value is not None}
        condition["bot_meta"] = {**loose, "source": "f"}
    fields["condition"] = condition
    fields.update(
        x_turns=record.x_turns, pseudo_turns=record.pseudo_turns, total_turns=record.total_turns
    )
    return fields


def test_judgement_files_written_before_shown_existed_score_the_same(tmp_path: Path) -> None:
    """A judgement file of an older sdtt (the bot's condition under ``bot_meta``, or
    nested as ``bot_condition``) gives the same table and the same score rows as the
    file written today, and is read as today's records."""
    today = []
    for record, m in zip(records(), itertools.cycle(["a/x", "b/y"]), strict=False):
        bot = Condition(model=m, persona="p", mode="pingpong", pseudo_turns=record.pseudo_turns)
        shown = record.shown.model_copy(update={"bot": bot})
        today.append(record.model_copy(update={"shown": shown}))
    new = tmp_path / "new.jsonl"
    write_judgements(new, today)
    tables = [table_of_fields(iter_judgement_fields(new))]
    for nested in (False, True):
        path = tmp_path / f"old-{nested}.jsonl"
        path.write_text(
            "".join(json.dumps(_old_form(r, nested)) + "\n" for r in today), encoding="utf-8"
        )
        assert ('"bot_condition"' in path.read_text(encoding="utf-8")) is nested
        assert read_judgements(path) == read_judgements(new)
        tables.append(table_of_fields(iter_judgement_fields(path)))
    for table in tables[1:]:
        pd.testing.assert_frame_equal(tables[0], table)
        for (title, rows), (same, again) in zip(
            condition_tables(tables[0], reps=50), condition_tables(table, reps=50), strict=True
        ):
            assert title == same
            pd.testing.assert_frame_equal(rows, again)
    assert set(tables[0]["model"]) == {"a/x", "b/y"} and set(tables[0]["persona"]) == {"p"}
    assert '"bot_meta"' not in new.read_text(encoding="utf-8")
