"""``--base-url`` sends every model call of a command to an OpenAI-compatible server."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest
import trio
from rich.console import Console

from sdtt.cli import main
from sdtt.commands.demo_stages import (
    DemoRun,
    stage_burst_reply,
    stage_llm_judge,
    stage_pseudo_dialogue,
    stage_simulated_chat,
    study_folder,
)
from sdtt.dialogue.store import read_transcripts
from sdtt.engine.simulate import run_on_virtual_clock
from sdtt.generate.chainfile import read_chain
from sdtt.models.base import Prompt
from sdtt.personas.store import find_persona
from sdtt.tasks.judgements import read_judgements
from sdtt.tasks.questionnaire import save_study
from tests.fakes.openai_fake import FakeOpenAIServer, chatty_reply
from tests.questionnaires.helpers import fixture_study

INTERROGATOR_WORDS = "you have not met before"
"""Words of the simulated interrogator's system prompt (and of no other prompt)."""


def bodies(server: FakeOpenAIServer) -> list[dict[str, Any]]:
    return [request.json() for request in server.requests]


def models_called(server: FakeOpenAIServer) -> set[str]:
    return {body["model"] for body in bodies(server)}


def interrogator_calls(server: FakeOpenAIServer) -> list[dict[str, Any]]:
    return [
        body
        for body in bodies(server)
        if any(INTERROGATOR_WORDS in str(m["content"]) for m in body["messages"])
    ]


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


def simulate(*args: str) -> int:
    return main(["simulate", "--turns", "2", "--virtual-clock", "--quiet", "--out", "out", *args])


def test_simulate_sends_the_bot_and_the_interrogator_to_the_server() -> None:
    with FakeOpenAIServer(reply=chatty_reply) as server:
        assert simulate("--model", "openai/local-llm", "--base-url", server.base_url) == 0
        assert interrogator_calls(server), "the interrogator went to another endpoint"
        assert len(interrogator_calls(server)) < len(server.requests), "and so did the bot"


def test_simulate_sends_a_named_interrogator_to_the_server_too() -> None:
    with FakeOpenAIServer(reply=chatty_reply) as server:
        url = server.base_url
        code = simulate(
            "--model", "openai/bot-llm", "--interrogator", "openai/asker", "--base-url", url
        )
        assert code == 0
        assert models_called(server) == {"bot-llm", "asker"}
        assert {body["model"] for body in interrogator_calls(server)} == {"asker"}


def test_a_mock_bot_next_to_a_served_interrogator() -> None:
    with FakeOpenAIServer(reply=chatty_reply) as server:
        code = simulate(
            "--model",
            "mock/chatty",
            "--interrogator",
            "openai/asker",
            "--base-url",
            server.base_url,
        )
        assert code == 0
        assert models_called(server) == {"asker"}
        assert len(interrogator_calls(server)) == len(server.requests) > 0


def test_base_url_for_no_served_model_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert simulate("--model", "mock/chatty", "--base-url", "http://127.0.0.1:9/v1") == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "--base-url is for openai/, anthropic/ models" in err and "mock/chatty" in err
    assert "Traceback" not in err


def test_generate_sends_every_served_model_to_the_server(tmp_path: Path) -> None:
    with FakeOpenAIServer(reply=chatty_reply) as server:
        grid = ["--model", "openai/writer", "--model", "mock/chatty", "--turns", "4"]
        code = main(["generate", *grid, "--out", "pseudo", "--base-url", server.base_url])
        assert code == 0
        assert models_called(server) == {"writer"}
    chains = sorted((tmp_path / "pseudo").glob("*.jsonl"))
    assert len(chains) == 2
    assert all(len(read_chain(path).turns) == 4 for path in chains)


def test_topics_go_to_the_server(tmp_path: Path) -> None:
    with FakeOpenAIServer(reply=chatty_reply) as server:
        url = server.base_url
        code = main(
            ["topics", "--model", "openai/lister", "-n", "4", "--out", "t.txt", "--base-url", url]
        )
        assert code == 0
        assert models_called(server) == {"lister"}
    assert len((tmp_path / "t.txt").read_text().strip().splitlines()) >= 4


def test_judge_goes_to_the_server(tmp_path: Path) -> None:
    study = fixture_study()
    save_study(tmp_path / "study", study.questionnaire, study.key)
    with FakeOpenAIServer(reply=chatty_reply) as server:
        url = server.base_url
        assert main(["judge", "study", "--model", "openai/judge-llm", "--base-url", url]) == 0
        assert models_called(server) == {"judge-llm"}
    judgements = read_judgements(tmp_path / "study" / "judgements.jsonl")
    assert judgements and not any(j.excluded for j in judgements)


def test_every_model_stage_of_the_demo_goes_to_the_server(tmp_path: Path) -> None:
    with FakeOpenAIServer(reply=chatty_reply) as server:
        demo = DemoRun(
            persona=find_persona("chitchat-32b20fa3"),
            model_name="openai/demo-llm",
            out=tmp_path / "out",
            seed=7,
            console=Console(quiet=True),
            base_url=server.base_url,
        )
        seen = 0
        for stage in (stage_burst_reply, stage_pseudo_dialogue):
            trio.run(stage, demo)
            assert len(server.requests) > seen, stage.__name__
            seen = len(server.requests)
        run_on_virtual_clock(stage_simulated_chat, demo)
        assert len(server.requests) > seen
        seen = len(server.requests)
        study = fixture_study()
        save_study(study_folder(demo), study.questionnaire, study.key)
        assert stage_llm_judge(demo)
        assert len(server.requests) > seen
        assert models_called(server) == {"demo-llm"}


def test_a_chat_chosen_on_the_setup_screen_gets_the_base_url() -> None:
    from sdtt.ui.chat_setup import build_live_chat

    with FakeOpenAIServer(reply=chatty_reply) as server:
        live = build_live_chat(
            persona="chitchat-32b20fa3", model="openai/chat-llm", base_url=server.base_url
        )

        async def ask() -> None:
            async with live.open_model() as model:
                await model.generate(Prompt(instructions="hi", dialogue="User: hey"))

        trio.run(ask)
        assert models_called(server) == {"chat-llm"}
    mock = build_live_chat(persona="chitchat-32b20fa3", model="mock/chatty", base_url="http://x/v1")
    assert mock.open_model().name == "mock/chatty"


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


def test_generates_suggested_next_command_runs_as_printed_against_a_server_with_a_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_SERVER_KEY", "sk-local-server-key-1")
    topics = tmp_path / "topics.txt"
    topics.write_text("pets\n")
    reply = "User: [2024-05-01 10:00:00] hi\nResponse: [2024-05-01 10:00:09] hey there"
    with FakeOpenAIServer(reply=reply, expected_key="sk-local-server-key-1") as server:
        generate = ["generate", "--model", "openai/local-llm", "--base-url", server.base_url]
        options = ["--turns", "1", "--turns-per-topic", "1", "--topics", str(topics)]
        key = ["--api-key-env", "MY_SERVER_KEY"]
        assert main([*generate, *options, *key, "--out", "chains"]) == 0
        out = " ".join(capsys.readouterr().out.split())
        printed = out[out.index("sdtt simulate") : out.index(" and the style drift")]
        assert "--api-key-env MY_SERVER_KEY" in printed
        server.reply = "Response: [2024-05-01 10:00:09] hey there"
        (tmp_path / "script.txt").write_text("hi\n")
        live = ["--turns", "1", "--script", "script.txt", "--virtual-clock", "--quiet"]
        assert main([*shlex.split(printed)[1:], *live, "--out", "chats"]) == 0
    assert list((tmp_path / "chats").glob("*.jsonl"))
