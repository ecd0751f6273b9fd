"""Labels say what they count: pairs not views, repeats of a single-file design, empty rows."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import pytest

from sdtt.analysis.metrics import summarise
from sdtt.analysis.report import build_report, render_markdown
from sdtt.analysis.table import judgement_table
from sdtt.cli import main
from sdtt.dialogue.store import write_transcripts
from sdtt.tasks.design import repeat_share
from tests.analysis.helpers import judgement
from tests.questionnaires.helpers import bots, humans


def test_a_design_counts_pairs_and_its_single_qualtrics_file_warns_of_repeats(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_transcripts(tmp_path / "bots.jsonl", bots())
    write_transcripts(tmp_path / "humans.jsonl", humans())
    study = tmp_path / "study"
    args = ["questionnaire", "build", "--bot", str(tmp_path / "bots.jsonl"), "--human"]
    args += [str(tmp_path / "humans.jsonl"), "--x", "3", "--x", "10", "--catch", "1"]
    assert main([*args, "--pairs-per-judge", "2", "--out", str(study)]) == 0
    built = " ".join(capsys.readouterr().out.split())
    # Two bot chats cut at two X: four pairs, each with two views.
    assert "4 pair(s) (two views each: the bot first, the bot second) (X=3: 2, X=10: 2)" in built
    assert main(["questionnaire", "export", str(study), "--format", "qualtrics"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    # Of the 6 ways to draw 2 of the 4 pairs, 2 hold one chat's X=3 and X=10 cuts.
    assert "draws each judge's 2 pairs at random, and about 33% of judges" in out
    assert "form-NN/qualtrics.qsf" in out


def test_the_repeat_share_matches_counting_every_draw() -> None:
    pairs = [frozenset({"b1", "h1"}), frozenset({"b1", "h2"}), frozenset({"b2", "h3"})]
    pairs += [frozenset({"b3", "h3"}), frozenset({"b4", "h4"})]
    draws = list(itertools.combinations(pairs, 3))
    exact = sum(len(set().union(*d)) < 6 for d in draws) / len(draws)
    assert repeat_share(pairs, 3) == pytest.approx(exact, abs=0.03)
    assert repeat_share([frozenset({"a", "b"}), frozenset({"c", "d"})], 2) == 0


def test_a_row_without_usable_judgements_shows_no_detectability() -> None:
    tie = judgement("p1", "j1", None, excluded="tie: both chats labelled human")
    labels = {"labels": {"1": "human", "2": "human"}}
    tie = tie.model_copy(update={"shown": tie.shown.model_copy(update=labels)})
    row = summarise(judgement_table([tie]), reps=0).row()
    assert row["judgements"] == 0 and math.isnan(row["detectability"])


def test_llm_judges_make_no_none_rows_in_demographic_tables(tmp_path: Path) -> None:
    ages = ("18-29", "30-49")
    said = [judgement("p1", f"j{i}", i < 2, demographics={"age": ages[i % 2]}) for i in range(4)]
    machine = judgement("p1", "llm", True).model_copy(
        update={"judge_type": "llm", "judge_model": "mock/judge"}
    )
    markdown = render_markdown(build_report(judgement_table([*said, machine]), tmp_path, reps=0))
    table = markdown.split("## By age: Human judges, bot openai/gpt-4o")[1].split("## ")[0]
    assert "18-29" in table and "30-49" in table and "(none)" not in table
    assert "## By age: LLM judge" not in markdown
