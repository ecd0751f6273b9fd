"""``--base-url`` sends a command's model calls to an OpenAI-compatible server."""

from __future__ import annotations

from pathlib import Path

import pytest

from sdtt.cli import main
from sdtt.dialogue.store import read_transcripts
from tests.fakes.openai_fake import FakeOpenAIServer


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)


def test_simulate_talks_to_the_server_named_by_base_url(tmp_path: Path) -> None:
    script = tmp_path / "script.txt"
    script.write_text("hey\n\nwhat are you up to\n")
    with FakeOpenAIServer(reply="Response: not much, you?") as server:
        code = main(
            [
                "simulate",
                "--model",
                "openai/local-llm",
                "--base-url",
                server.base_url,
                "--script",
                str(script),
                "--turns",
                "2",
                "--virtual-clock",
                "--quiet",
                "--out",
                "out",
            ]
        )
        assert code == 0
        assert len(server.requests) >= 2
    (transcript,) = read_transcripts(next((tmp_path / "out").glob("*[!s].jsonl")))
    assert "not much, you?" in [m.text for m in transcript.messages if m.side == "response"]


def test_without_key_or_base_url_the_error_says_what_to_do(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["simulate", "--model", "openai/gpt-4o", "--turns", "1"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "OPENAI_API_KEY" in err and "--base-url" in err


def test_generates_suggested_next_command_keeps_the_base_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    topics = tmp_path / "topics.txt"
    topics.write_text("pets\n")
    reply = "User: [2024-05-01 10:00:00] hi\nResponse: [2024-05-01 10:00:09] hey there"
    with FakeOpenAIServer(reply=reply) as server:
        code = main(
            [
                "generate",
                "--model",
                "openai/local-llm",
                "--base-url",
                server.base_url,
                "--turns",
                "1",
                "--turns-per-topic",
                "1",
                "--topics",
                str(topics),
                "--out",
                "chains",
            ]
        )
    out = " ".join(capsys.readouterr().out.split())
    assert code == 0
    assert "sdtt simulate --persona" in out
    assert f"--model openai/local-llm --base-url {server.base_url} --mode burst" in out
