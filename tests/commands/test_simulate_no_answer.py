"""A simulated chat in which the bot never answered is an error, whatever ended it
(issue 49): the time limit cutting off the bot's only call exited 0 with "0 error(s)"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sdtt.cli import main
from tests.fakes.http_fake import ScriptedReply
from tests.fakes.openai_fake import FakeOpenAIServer


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "script.txt").write_text("hey\n\nwhat are you up to\n")


def test_a_time_limit_that_cuts_off_the_only_bot_call_exits_1_and_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeOpenAIServer() as server:
        # Slower than the chat's whole time limit: the call is still in flight at the end.
        # On the real clock: on a virtual one, the chat stands still while a model thinks.
        server.enqueue(*[ScriptedReply(delay=60)] * 4)
        code = main(
            [
                "simulate",
                "--model",
                "openai/gemma",
                "--base-url",
                server.base_url,
                "--script",
                "script.txt",
                "--turns",
                "1",
                "--t1",
                "0",
                "--max-minutes",
                "0.2",
                "--quiet",
                "--out",
                "chats",
            ]
        )
    err = " ".join(capsys.readouterr().err.split())
    assert code == 1
    assert "no turn was answered" in err and "time limit" in err and "--max-minutes" in err
    (log,) = (tmp_path / "chats").glob("*.events.jsonl")
    finished = [
        event
        for event in map(json.loads, log.read_text().splitlines())
        if event.get("type") == "model_call_finished"
    ]
    assert finished and finished[-1]["error"] == "Cancelled"
    # Cut off in flight: attempts and cache use are unknown, and it did take time.
    assert finished[-1]["attempts"] is None
    assert finished[-1]["cached_input_tokens"] is None
    assert finished[-1]["latency"] > 0


def test_on_the_virtual_clock_the_time_limit_blames_no_slow_model(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The limit passes before the bot's first call: there, a model's slowness takes no
    # chat time, so the advice is more time, not a faster server.
    command = ["simulate", "--model", "mock/chatty", "--script", "script.txt", "--turns", "1"]
    code = main([*command, "--max-minutes", "0.01", "--virtual-clock", "--quiet"])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 1
    assert "time limit (0.0 min) ended it before the bot replied" in err
    assert "--max-minutes" in err and "slow" not in err and "faster" not in err
