"""The whole path on the command line: build, export, import people, run a mock cohort,
score and report."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import pytest

from sdtt.align.ratings import read_ratings
from sdtt.cli import main
from sdtt.tasks.judgements import Judgement, append_judgements
from tests.align.helpers import write_sources

SPEC = """
name = "align-demo"
seed = 3

[rating]
question = "How similar are these two pieces of chat in their writing style?"
unit = "burst"
items_per_source = 4

[[rating.sources]]
path = "bots.jsonl"
side = "bot"

[[rating.sources]]
path = "humans.jsonl"
side = "human"
"""


def _human_answers(task: Path, path: Path, judges: int) -> None:
    """Synthetic people: items of the same side look alike to them, with some noise."""
    tasks = json.loads((task / "rating-task.json").read_text(encoding="utf-8"))
    key = json.loads((task / "rating-key.json").read_text(encoding="utf-8"))["items"]
    rng = random.Random(1)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["judge_id", "question", "answer"])
        for judge in range(judges):
            for pair in tasks["pairs"]:
                same = key[pair["first"]]["side"] == key[pair["second"]]["side"]
                value = (6 if same else 2) + rng.choice([-1, 0, 1])
                writer.writerow([f"person{judge}", pair["id"], value])


def test_build_export_import_judge_score_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    write_sources(tmp_path)
    Path("study.toml").write_text(SPEC, encoding="utf-8")
    assert main(["align", "build", "study.toml", "--out", "task"]) == 0
    assert "8 items (4 bot, 4 human), 28 pairs" in capsys.readouterr().out

    assert main(["align", "export", "task"]) == 0
    exported = sorted(p.name for p in Path("task/export").iterdir())
    assert exported == ["rating-jspsych.html", "rating-surveyjs.json", "rating-task.csv"]
    assert main(["align", "export", "task", "--format", "qualtrics"]) == 2
    assert "not supported for rating tasks" in capsys.readouterr().err

    _human_answers(Path("task"), Path("answers.csv"), judges=5)
    assert main(["align", "import", "task", "answers.csv", "--format", "csv"]) == 0
    assert "140 rating(s) from 5 judge(s)" in capsys.readouterr().out
    assert main(["align", "import", "task", "answers.csv", "--format", "csv"]) == 0
    assert "140 already there, skipped" in capsys.readouterr().out

    judge = ["align", "judge", "task", "--model", "mock/chatty", "-n", "3"]
    judge += ["--temperature", "0.7", "--temperature", "1.5", "--prompt", "style"]
    assert main(judge) == 0
    assert "168 rating(s) by 2 cohort(s)" in capsys.readouterr().out
    assert main(judge) == 0  # resumed: nothing asked again
    assert "0 rating(s) by 2 cohort(s)" in capsys.readouterr().out
    ratings = read_ratings("task/ratings.jsonl")
    assert len(ratings) == 140 + 168
    assert {r.cohort for r in ratings} == {
        "human",
        "mock/chatty t=0.7 prompt=style",
        "mock/chatty t=1.5 prompt=style",
    }

    assert main(["align", "score", "task", "--permutations", "200"]) == 0
    out = capsys.readouterr().out
    assert "Alignment with the humans" in out and "ICC(2,1)" in out
    assert "t=1.5" in out

    assert main(["align", "report", "task", "--out", "report", "--permutations", "50"]) == 0
    page = Path("report/alignment.html").read_text(encoding="utf-8")
    assert "Alignment with the humans" in page and "data:image/png;base64," in page
    assert {p.name for p in Path("report").glob("*.png")} == {
        "alignment-matrices.png",
        "alignment-mds.png",
        "alignment-spread.png",
        "alignment-bars.png",
        "alignment-individuals.png",
    }
    assert "Within- and between-category alignment" in page and "t-SNE" in page


def test_a_spec_without_a_rating_section_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("study.toml").write_text('name = "x"\n', encoding="utf-8")
    assert main(["align", "build", "study.toml", "--out", "task"]) == 2
    assert "no [rating] section" in capsys.readouterr().err


def _verdict(judge: str, pair: int, correct: bool) -> Judgement:
    human = judge.startswith("person")
    return Judgement(
        study="s",
        judge_id=judge,
        judge_type="human" if human else "llm",
        judge_model=None if human else "mock/chatty",
        pair_id=f"p{pair:05d}",
        choice="A" if correct else "B",
        bot_position=1,
        correct=correct,
        source="test",
        condition={
            "bot_conversation": f"b{pair}",
            "human_conversation": f"h{pair}",
            "live_from": 1,
            "live_to": 3,
        },
    )


def test_score_shows_llm_judges_against_human_judges(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "judgements.jsonl"
    judgements = [
        _verdict(judge, pair, pair % 3 != 0)
        for pair in range(12)
        for judge in ("person1", "person2", "llm-paired:mock/chatty")
    ]
    append_judgements(path, judgements)
    assert main(["score", str(path), "--bootstrap", "50"]) == 0
    out = capsys.readouterr().out
    assert "Turing verdicts: LLM judges against human judges" in out
    assert "llm-paired:mock/chatty" in out
    only_llm = tmp_path / "llm.jsonl"
    append_judgements(only_llm, [j for j in judgements if j.judge_type == "llm"])
    assert main(["score", str(only_llm), "--bootstrap", "50"]) == 0
    assert "Turing verdicts" not in capsys.readouterr().out


def test_report_has_a_section_on_llm_judges_against_human_judges(tmp_path: Path) -> None:
    """The HTML report says how human-like each LLM judge's verdicts are."""
    path = tmp_path / "judgements.jsonl"
    append_judgements(
        path,
        [
            _verdict(judge, pair, pair % 3 != 0)
            for pair in range(12)
            for judge in ("person1", "person2", "llm-paired:mock/chatty")
        ],
    )
    out = tmp_path / "report"
    assert main(["report", str(path), "--bootstrap", "50", "--out", str(out)]) == 0
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "Turing verdicts: LLM judges against human judges" in html
    assert "Human-human mean pairwise Cohen" in html
