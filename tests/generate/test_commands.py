"""``sdtt topics``, ``sdtt generate`` and ``sdtt drift`` from the command line (mock models)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sdtt.cli import main
from sdtt.generate.chainfile import read_chain
from sdtt.models.mock import MockModelAPI
from sdtt.models.model import Model


@pytest.fixture
def topics_file(tmp_path: Path) -> Path:
    path = tmp_path / "topics.txt"
    path.write_text("# test topics\nweekend plans\nnew phones\nbad weather\n")
    return path


def generate(out: Path, topics: Path, *extra: str) -> int:
    return main(
        [
            "generate",
            "--model",
            "mock/chatty",
            "--topics",
            str(topics),
            "--turns",
            "6",
            "--turns-per-topic",
            "3",
            "--history-turns",
            "20",
            "--out",
            str(out),
            *extra,
        ]
    )


def test_generate_writes_a_chain_and_a_rerun_resumes_without_calls(tmp_path, topics_file, capsys):
    out = tmp_path / "out"
    assert generate(out, topics_file, "--mode", "burst", "--mode", "pingpong") == 0
    printed = capsys.readouterr().out
    assert "2 chain(s), 12 turns" in printed and "sdtt simulate" in printed
    files = sorted(out.glob("*.jsonl"))
    assert len(files) == 2
    before = {path: path.read_bytes() for path in files}
    for path in files:
        chain = read_chain(path)
        assert len(chain.turns) == 6
        assert {turn.topic for turn in chain.turns} == {"weekend plans", "new phones"}
    assert generate(out, topics_file, "--mode", "burst", "--mode", "pingpong") == 0
    assert {path: path.read_bytes() for path in files} == before


def test_generate_dry_run_lists_the_chains_of_a_plan(tmp_path, topics_file, capsys):
    plan = tmp_path / "plan.toml"
    plan.write_text(
        f'topics = "{topics_file.name}"\nturns_per_topic = 2\n'
        '[grid]\npersonas = ["chitchat-32b20fa3"]\nmodels = ["mock/chatty", "mock/echo"]\n'
        "seeds = [1, 2]\nturns = [4]\n"
    )
    assert main(["generate", "--plan", str(plan), "--dry-run", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert printed.count(".jsonl") == 4 and "nothing was called" in printed
    assert not list(tmp_path.glob("*.jsonl"))


def test_too_few_topics_is_one_clear_error(tmp_path, topics_file, capsys):
    assert generate(tmp_path, topics_file, "--turns", "30") == 2
    error = capsys.readouterr().err
    assert "need 10 topics, but only 3" in error and "Traceback" not in error


def test_poll_without_batch_is_refused_before_any_chain_is_written(tmp_path, topics_file, capsys):
    assert generate(tmp_path, topics_file, "--poll", "5") == 2
    error = " ".join(capsys.readouterr().err.split())  # unwrapped
    assert "--poll only applies with --batch. Add --batch, or leave out --poll." in error
    assert not list(tmp_path.rglob("*.jsonl"))


def test_drift_prints_the_words_delta_against_the_person(tmp_path, topics_file, capsys):
    out = tmp_path / "out"
    assert generate(out, topics_file) == 0
    capsys.readouterr()
    chain_file = next(out.glob("*.jsonl"))
    assert main(["drift", str(chain_file), "--window", "3"]) == 0
    printed = capsys.readouterr().out
    assert "person" in printed and "1-3" in printed and "4-6" in printed
    assert "# Words" in printed
    assert main(["drift", str(chain_file), "--json"]) == 0
    rows = capsys.readouterr().out.strip().splitlines()
    assert len(rows) == 3  # the person, one window of 10 turns, all turns


def test_topics_saves_a_list_that_generate_can_use(tmp_path, monkeypatch, capsys):
    answers = ["Travel plans\nTravel stories\nCooking", "Pets\nMusic"]
    monkeypatch.setattr(
        "sdtt.commands.topics.get_model",
        lambda name, **options: Model(MockModelAPI(answers, name=name)),
    )
    monkeypatch.setattr("sdtt.models.mock.check_name", lambda model: None)  # replies given
    path = tmp_path / "mine.txt"
    assert main(["topics", "--model", "mock/x", "-n", "4", "--out", str(path)]) == 0
    assert path.read_text().splitlines()[1:] == ["Travel plans", "Cooking", "Pets", "Music"]
    assert "saved to" in capsys.readouterr().out
    assert main(["topics", "--model", "mock/x", "-n", "4", "--out", str(path)]) == 2
    assert "already exists" in capsys.readouterr().err


def test_topics_on_a_mock_model(tmp_path, capsys):
    out = tmp_path / "topics.txt"
    assert main(["topics", "--model", "mock/chatty", "-n", "6", "--out", str(out)]) == 0
    topics = [line for line in out.read_text().splitlines() if not line.startswith("#")]
    assert len(topics) == len(set(topics)) == 6
    # The hint holds the whole path on one line, however long (a copy of it works).
    assert f"use it with --topics {out}\n" in capsys.readouterr().out
