"""``sdtt demo`` as a user runs it, on scripted models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sdtt.cli import main
from sdtt.dialogue.store import read_transcripts
from sdtt.engine.simulate import DEMO_TOPIC


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "120")
    return tmp_path


def test_demo_on_a_scripted_model_writes_a_burst_reply(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["demo", "--model", "mock/chatty", "--out", "out"]) == 0
    replies = sorted((tmp_path / "out").glob("demo-*-reply.jsonl"))
    assert len(replies) == 1
    (conversation,) = read_transcripts(replies[0])
    sides = [message.side for message in conversation.messages]
    assert sides[:2] == ["user", "user"]
    assert sides.count("response") >= 2, "the bot answers with a burst"
    assert conversation.condition is not None and conversation.condition.model == "mock/chatty"
    out = capsys.readouterr().out
    assert "Files written" in out

    # The mock judge answers every pair, so the demo ends with a whole result.
    (judgements_path,) = (tmp_path / "out").glob("demo-*-questionnaire/judgements.jsonl")
    judgements = [json.loads(line) for line in judgements_path.read_text().splitlines()]
    assert judgements and all(j["choice"] in ("A", "B") for j in judgements)
    assert not any(j["excluded"] for j in judgements)
    assert "usable judgement(s)" in out and "pass rate" in out
    (chat_path,) = (tmp_path / "out").glob("demo-*-chat.jsonl")
    (chat,) = read_transcripts(chat_path)
    # 2 topics x 3 pseudo turns in the prompt, then 3 live turns.
    assert chat.condition is not None
    assert (chat.condition.pseudo_turns, chat.condition.live_turns) == (6, 3)

    (key_path,) = (tmp_path / "out").glob("demo-*-questionnaire/answer-key.json")
    key = json.loads(key_path.read_text())
    (test_pair,) = [item for item in key["items"].values() if item["kind"] == "test"]
    assert test_pair["bot"]["topic"] == test_pair["human"]["topic"] == DEMO_TOPIC
    assert test_pair["human"]["meta"]["source"] == "chitchat"


def test_the_files_written_are_listed_whole_however_narrow_the_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A narrow or non-terminal output (a log, a pipe) must not break a path over lines:
    # a user copies them from the list.
    monkeypatch.setenv("COLUMNS", "40")
    out = Path("a-rather-long-folder-name-for-the-results") / "of-this-demo-run"
    assert main(["demo", "--model", "mock/chatty", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    listed = [line.strip() for line in printed.split("Files written", 1)[1].splitlines()]
    listed = [line for line in listed if line]
    assert listed and all(Path(line).is_file() for line in listed), listed
    top = {str(path) for path in out.glob("demo-*") if path.is_file()}
    assert top and top <= set(listed)


def test_garbage_model_output_is_one_paragraph_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--model", "mock/empty", "--out", "out"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    text = " ".join(err.split())
    assert text.startswith("error: The model gave no usable reply in 4 attempts.")
    assert "Retry" in text


def test_unknown_persona_and_model_are_clear_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--persona", "nobody", "--model", "mock/chatty"]) == 2
    assert "nobody" in capsys.readouterr().err
    assert main(["demo", "--model", "nosuch/model"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "nosuch" in err and "mock" in err


def test_a_rerun_resumes_the_files_of_the_same_seed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["demo", "--model", "mock/chatty", "--out", "out"]) == 0
    first = sorted(path.name for path in (tmp_path / "out").iterdir())
    (reply,) = (tmp_path / "out").glob("demo-*-reply.jsonl")
    written = reply.read_bytes()
    capsys.readouterr()
    assert main(["demo", "--model", "mock/chatty", "--out", "out"]) == 0
    out = capsys.readouterr().out
    # No second set of timestamped files: the reply and the chat are reused as they were.
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == first
    assert reply.read_bytes() == written
    assert out.count("kept from an earlier run") == 2
    (chain,) = (tmp_path / "out").glob("demo-*-pseudo/*.jsonl")
    header = json.loads(chain.read_text().splitlines()[0])
    assert header["spec"]["settings"]["max_tokens"] == 400  # capped for small servers


def test_a_small_context_cuts_the_history_and_says_so(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["demo", "--model", "mock/chatty", "--out", "out", "--context-tokens", "5500"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "persona history is cut from 30 to" in out
    assert "a context of 5500 tokens" in out


def test_a_context_too_small_for_the_persona_is_refused_before_any_call(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # 3,500 tokens left room for no more than a few turns of the persona's own history
    # beside the demo's replies: a bot with (almost) none is not the person (issue 49).
    assert main(["demo", "--model", "mock/chatty", "--out", "out", "--context-tokens", "3500"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "cannot fit a context of 3500 tokens" in err


def test_the_demo_chat_records_its_condition_as_simulate_does(tmp_path: Path) -> None:
    # Was: "pseudo": null, "interrogator": null, so the report never said User A was a
    # script; now the condition of 'sdtt simulate --script', through the same open_bot.
    assert main(["demo", "--model", "mock/chatty", "--out", "out", "--seed", "3"]) == 0
    (chat_path,) = (tmp_path / "out").glob("demo-*-chat.jsonl")
    (chat,) = read_transcripts(chat_path)
    condition = chat.condition
    assert condition is not None
    (chain,) = (tmp_path / "out").glob("demo-*-pseudo/*.jsonl")
    assert condition.pseudo is not None and Path(condition.pseudo).resolve() == chain.resolve()
    assert (condition.pseudo_turns, condition.interrogator, condition.seed) == (6, "script", 3)
    assert condition.mode == "burst" and condition.delays is not None
    (report,) = (tmp_path / "out").glob("demo-*-report/report.md")
    lines = report.read_text().splitlines()
    headline = [line for line in lines if line.startswith("- ") and "pass rate" in line]
    assert headline and all("simulated User A (script)" in line for line in headline)
