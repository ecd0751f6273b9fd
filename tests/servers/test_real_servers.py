"""The commands against real servers nobody here wrote (``-m real_server``).

llama-cpp-python's OpenAI-compatible server runs the embedded Gemma 3 270M on loopback;
LiteLLM's proxy speaks Anthropic's Messages API in front of it. The model is tiny and
writes poor chats: these tests check that the commands work end to end over both
protocols (and survive a server crash), not what the model writes.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sdtt.cli import main
from sdtt.dialogue.store import read_transcripts
from sdtt.generate.chainfile import read_chain
from sdtt.tasks.judgements import read_judgements
from sdtt.tasks.questionnaire import save_study
from tests.questionnaires.helpers import fixture_study
from tests.servers.conftest import PROXY_KEY, SERVED_MODEL, LlamaServer

pytestmark = pytest.mark.real_server

OPENAI_MODEL = f"openai/{SERVED_MODEL}"
ANTHROPIC_MODEL = "anthropic/claude-gemma"


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    # The server answers one request at a time and keeps working on one whose client gave
    # up: long attempts, not many short ones (a busy machine makes Gemma slow).
    monkeypatch.setenv("SDTT_ATTEMPT_TIMEOUT", "900")
    monkeypatch.setenv("SDTT_CALL_DEADLINE", "1800")
    monkeypatch.setenv("SDTT_STEP_DEADLINE", "3600")
    monkeypatch.chdir(tmp_path)


def topic_file(tmp_path: Path) -> Path:
    path = tmp_path / "topics.txt"
    path.write_text("weekend plans\nfavourite food\n")
    return path


def generate_args(model: str, base_url: str, topics: Path, out: str) -> list[str]:
    return [
        "generate",
        "--model",
        model,
        "--base-url",
        base_url,
        "--turns",
        "4",
        "--turns-per-topic",
        "2",
        "--topics",
        str(topics),
        "--max-tokens",
        "300",
        "--history-turns",
        "20",
        "--out",
        out,
    ]


def resume_until_done(code: int, args: list[str], reruns: int = 3) -> int:
    """Rerun a ``generate`` that failed, as its message tells users to: Gemma 270M is a
    base model, through a chat template it often writes no usable line and a topic gives
    up after a few calls; a rerun resumes the chain. The last run's exit code."""
    for _ in range(reruns):
        if code == 0:
            break
        code = main(args)
    return code


def simulate_args(model: str, base_url: str) -> list[str]:
    return [
        "simulate",
        "--model",
        model,
        "--base-url",
        base_url,
        "--turns",
        "2",
        "--history-turns",
        "20",
        "--virtual-clock",
        "--quiet",
        "--out",
        "chats",
    ]


def judge_args(model: str, base_url: str, study: Path) -> list[str]:
    return ["judge", str(study), "--model", model, "--base-url", base_url, "--attempts", "2"]


def turn_indices(path: Path) -> list[int]:
    return [turn.turn for turn in read_chain(path).turns]


def test_topics_on_the_llama_server(llama_server: LlamaServer, tmp_path: Path) -> None:
    code = main(
        [
            "topics",
            "--model",
            OPENAI_MODEL,
            "--base-url",
            llama_server.base_url,
            "--count",
            "3",
            "--out",
            "topics.txt",
        ]
    )
    assert code == 0
    assert (tmp_path / "topics.txt").read_text().strip()


def test_generate_survives_a_server_crash_without_losing_or_repeating_a_turn(
    llama_server: LlamaServer, tmp_path: Path
) -> None:
    topics = topic_file(tmp_path)
    command = [
        sys.executable,
        "-m",
        "sdtt.cli",
        *generate_args(OPENAI_MODEL, llama_server.base_url, topics, "chains"),
    ]
    log = (tmp_path / "generate.log").open("wb")
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path)
    chains = tmp_path / "chains"
    # Kill the server once the first answer is on disk, then start it again.
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and process.poll() is None:
        files = list(chains.glob("*.jsonl"))
        if files and '"pseudo_call"' in files[0].read_text():
            break
        time.sleep(0.2)
    llama_server.kill()
    time.sleep(2)
    llama_server.start()
    code = process.wait(timeout=1800)
    log.close()
    (path,) = chains.glob("*.jsonl")
    chain = read_chain(path)
    # The call that met the crash was retried until the server was back, and said so as
    # it went (chains keep no attempts: they are the same bytes however the server fared).
    assert not chain.errors or "ChainStuckError" in str(chain.errors), chain.errors
    assert "retrying:" in (tmp_path / "generate.log").read_text(errors="replace")
    code = resume_until_done(
        code, generate_args(OPENAI_MODEL, llama_server.base_url, topics, "chains")
    )
    indices = turn_indices(path)
    assert indices == list(range(len(indices))), "no turn lost or written twice"
    if code != 0:
        pytest.xfail("the tiny base model wrote no usable chat lines in four runs")
    assert indices == [0, 1, 2, 3]


def test_simulate_with_bot_and_interrogator_on_the_server(
    llama_server: LlamaServer, tmp_path: Path
) -> None:
    code = main(simulate_args(OPENAI_MODEL, llama_server.base_url))
    (transcript_file,) = (tmp_path / "chats").glob("*[!s].jsonl")
    (transcript,) = read_transcripts(transcript_file)
    caught = transcript.meta["out_of_character"]
    if code == 1 and not transcript.messages and caught["interrogator"] > 0:
        # Both sides reached the server and answered; the toy model's interrogator wrote
        # only copies of its format line ("message."), each caught and none sent.
        pytest.xfail(f"the embedded toy model's interrogator broke character {caught} times")
    assert code == 0
    assert {message.side for message in transcript.messages} == {"user", "response"}


def test_judge_on_the_llama_server(llama_server: LlamaServer, tmp_path: Path) -> None:
    study = fixture_study()
    save_study(tmp_path / "study", study.questionnaire, study.key)
    assert main(judge_args(OPENAI_MODEL, llama_server.base_url, tmp_path / "study")) == 0
    lines = (tmp_path / "study" / "judgements.jsonl").read_text().splitlines()
    reasons = [json.loads(line).get("exclusion_reason") or "" for line in lines]
    assert lines and not any(reason.startswith("model_error") for reason in reasons)


def test_the_whole_demo_on_the_llama_server(llama_server: LlamaServer, tmp_path: Path) -> None:
    args = ["demo", "--model", OPENAI_MODEL, "--base-url", llama_server.base_url, "--out", "out"]
    assert main(args) == 0
    assert list((tmp_path / "out").glob("demo-*-report/*"))


def test_the_anthropic_protocol_through_litellm(
    anthropic_proxy: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # As the README says: the proxy's master key, named with --api-key-env (sdtt never
    # sends ANTHROPIC_API_KEY to a host other than Anthropic's).
    monkeypatch.setenv("LITELLM_MASTER_KEY", PROXY_KEY)
    key = ["--api-key-env", "LITELLM_MASTER_KEY"]
    assert main([*simulate_args(ANTHROPIC_MODEL, anthropic_proxy), *key]) == 0
    chains = [
        *generate_args(ANTHROPIC_MODEL, anthropic_proxy, topic_file(tmp_path), "chains"),
        *key,
    ]
    code = resume_until_done(main(chains), chains)
    (path,) = (tmp_path / "chains").glob("*.jsonl")
    indices = turn_indices(path)
    assert indices == list(range(len(indices))), "no turn lost or written twice"
    study = fixture_study()
    save_study(tmp_path / "study", study.questionnaire, study.key)
    assert main([*judge_args(ANTHROPIC_MODEL, anthropic_proxy, tmp_path / "study"), *key]) == 0
    # LiteLLM reports Anthropic's cache fields itself (0 here), so cache use is shown as
    # reported; what must hold is that every judge answer was written.
    assert read_judgements(tmp_path / "study" / "judgements.jsonl")
    if code != 0:
        pytest.xfail("the tiny base model wrote no usable chat lines in four runs")
    assert indices == [0, 1, 2, 3]


def test_a_long_pseudo_dialogue_fits_the_servers_context_and_keeps_the_persona(
    llama_server: LlamaServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Issue 49: a 100-turn pseudo-dialogue with --context-tokens 8192 cut the history to
    # 0 turns and still sent prompts of 10.8-11k tokens: 4 calls, all HTTP 400, rc 1.
    from tests.commands.test_context_budget import long_pseudo_dialogue

    pseudo = long_pseudo_dialogue(tmp_path / "pseudo.jsonl", 100)
    (tmp_path / "script.txt").write_text("hey\n")
    args = [
        "simulate",
        "--model",
        OPENAI_MODEL,
        "--base-url",
        llama_server.base_url,
        "--pseudo",
        str(pseudo),
        "--context-tokens",
        "8192",
        "--script",
        "script.txt",
        "--turns",
        "1",
        "--virtual-clock",
        "--out",
        "chats",
    ]
    code = main(args)
    out = " ".join(capsys.readouterr().out.split())
    assert "HTTP 400" not in out
    assert "holds the last" in out and "of the pseudo-dialogue's 100 turns" in out
    assert "to 0 turns" not in out
    assert code == 0


def test_simulate_sends_its_seeds_and_the_server_logs_each_request(
    llama_server: LlamaServer, tmp_path: Path
) -> None:
    before = llama_server.log.read_text(errors="replace")
    assert main([*simulate_args(OPENAI_MODEL, llama_server.base_url), "--seed", "5"]) == 0
    lines = llama_server.log.read_text(errors="replace")[len(before) :].splitlines()
    requests = [line for line in lines if " POST /v1/chat/completions " in line]
    assert requests, lines[-20:]
    assert all(" 200 tokens in=" in line for line in requests)
    # Every call carried a sampling seed (none did before), and no key was logged.
    bodies = [json.loads(json.loads(line.split(" request=", 1)[1])) for line in requests]
    assert all(isinstance(body.get("seed"), int) for body in bodies)
    assert 5 in {body["seed"] for body in bodies}


def test_neither_side_on_the_embedded_model_sends_its_instructions_or_says_it_is_an_ai(
    llama_server: LlamaServer, tmp_path: Path
) -> None:
    # Through the launcher 11 of 12 interrogator messages echoed their prompt.
    from sdtt.engine.interrogator import interrogator_instructions
    from sdtt.personas.character import out_of_character
    from sdtt.personas.prompt import bot_instructions

    code = main([*simulate_args(OPENAI_MODEL, llama_server.base_url), "--turns", "3"])
    assert code in (0, 1)  # 1: the bot answered no turn, which the tiny model may not
    (transcript_file,) = (tmp_path / "chats").glob("*[!s].jsonl")
    (transcript,) = read_transcripts(transcript_file)
    said = {
        "user": interrogator_instructions(transcript.topic, "burst"),
        "response": bot_instructions("burst"),
    }
    broken = [
        m.text for m in transcript.messages if out_of_character(m.text, said[m.side]) is not None
    ]
    assert not broken
    # What was caught is recorded, per side, where the report counts it; the bot's event
    # log says which calls held it.
    from sdtt.engine.events import ModelCallFinished, read_event_log

    caught = transcript.meta["out_of_character"]
    assert set(caught) == {"bot", "interrogator"}
    # The toy model's interrogator mostly copies its format line ("message."): either it
    # wrote chat lines, or what it wrote instead was caught and counted, never sent.
    users = [m.text for m in transcript.messages if m.side == "user"]
    assert users or caught["interrogator"] > 0, (
        "the interrogator wrote nothing, and nothing was caught"
    )
    log = read_event_log(transcript_file.with_name(f"{transcript.id}.events.jsonl"))
    calls = [event for event in log.events if isinstance(event, ModelCallFinished)]
    assert sum(call.out_of_character for call in calls) == caught["bot"]
