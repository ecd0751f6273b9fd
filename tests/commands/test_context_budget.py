"""A prompt longer than the server's context: a message saying what to change, and
``simulate --context-tokens`` cutting the persona history to fit (issue 29)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sdtt.cli import main
from tests.fakes.http_fake import FakeHTTPServer, RecordedRequest, ScriptedReply
from tests.fakes.openai_fake import chat_completion, openai_error

CONTEXT = 8192
"""The context of llama.cpp servers started as the README says."""


def tokens(body: dict[str, object]) -> int:
    """A tokenizer's count, near enough: timestamped chat lines are about 2 characters a
    token (Gemma's counted 11,400 tokens in a 22,400-character prompt)."""
    messages = body.get("messages")
    assert isinstance(messages, list)
    return sum(len(str(message["content"])) for message in messages) // 2


def small_context_server(request: RecordedRequest) -> ScriptedReply:
    """Answers like llama-cpp-python's server with an 8192-token context."""
    body = request.json()
    wanted = tokens(body) + int(body.get("max_tokens") or 0)
    if wanted > CONTEXT:
        return openai_error(
            400,
            f"This model's maximum context length is {CONTEXT} tokens. However, you "
            f"requested {wanted} tokens. Please reduce the length of the messages or "
            "completion.",
            kind="invalid_request_error",
        )
    reply = "Response: [2024-05-01 10:00:09] hey there"
    return ScriptedReply(body=chat_completion(reply, prompt_tokens=tokens(body)))


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "script.txt").write_text("hey\n\nwhat are you up to\n")


def simulate(base_url: str, *extra: str) -> list[str]:
    return [
        "simulate",
        "--model",
        "openai/gemma",
        "--base-url",
        base_url,
        "--script",
        "script.txt",
        "--turns",
        "2",
        "--virtual-clock",
        "--quiet",
        "--out",
        "chats",
        *extra,
    ]


def test_the_default_history_overflowing_the_context_says_what_to_change(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with FakeHTTPServer(small_context_server) as server:
        code = main(simulate(f"{server.url}/v1"))
    err = " ".join(capsys.readouterr().err.split())
    assert code == 1
    assert "longer than the model's context (HTTP 400)" in err
    assert "--history-turns" in err and "--context-tokens" in err and "--n-ctx" in err
    # A request that cannot fit is not retried.
    assert "retrying" not in err and "Gave up" not in err


def test_context_tokens_cuts_the_history_so_every_call_fits(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with FakeHTTPServer(small_context_server) as server:
        code = main(simulate(f"{server.url}/v1", "--context-tokens", str(CONTEXT)))
    out = " ".join(capsys.readouterr().out.split())
    assert code == 0
    cut = re.search(r"history is cut from 100 to (\d+) turns", out)
    assert cut is not None and 0 < int(cut[1]) < 100, out
    sizes = [tokens(request.json()) for request in server.requests]
    assert sizes and all(size + 256 <= CONTEXT for size in sizes)
    # The cut is no bigger than it must be: the prompts use most of the context.
    assert max(sizes) > CONTEXT / 2


def long_pseudo_dialogue(path: Path, turns: int) -> Path:
    """A pseudo-dialogue transcript of ``turns`` turns, about 110 tokens each."""
    from datetime import UTC, datetime, timedelta

    from sdtt.dialogue.message import Message, Transcript
    from sdtt.dialogue.store import write_transcripts

    start = datetime(2024, 4, 1, 9, 0, tzinfo=UTC)
    messages = []
    for index in range(turns):
        at = start + timedelta(minutes=5 * index)
        question = f"so what did you end up doing about the thing number {index} last week?"
        messages.append(Message(side="user", text=question, time=at))
        for part in range(2):
            answer = f"honestly not much, i kept putting it off ({index}.{part}) haha"
            messages.append(Message(side="response", text=answer, time=at + timedelta(seconds=20)))
    write_transcripts(path, [Transcript(id="pseudo-long", messages=messages)])
    return path


def test_a_long_pseudo_dialogue_is_cut_from_its_oldest_turns_and_the_persona_kept(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Before: "cut from 100 to 0 turns", then 4 calls refused with HTTP 400 and rc 1.
    pseudo = long_pseudo_dialogue(tmp_path / "pseudo.jsonl", 100)
    with FakeHTTPServer(small_context_server) as server:
        code = main(
            simulate(f"{server.url}/v1", "--pseudo", str(pseudo), "--context-tokens", str(CONTEXT))
        )
    out = " ".join(capsys.readouterr().out.split())
    assert code == 0, out
    sizes = [tokens(request.json()) for request in server.requests]
    assert sizes and all(size + 256 <= CONTEXT for size in sizes)
    held = re.search(r"holds the last (\d+) of the pseudo-dialogue's 100 turns", out)
    assert held is not None, out
    cut = re.search(r"history is cut from 100 to (\d+) turns", out)
    assert cut is None or int(cut[1]) >= 20
    # The record keeps N true and says how many of its turns the prompt held.
    from sdtt.dialogue.store import read_transcripts

    (chat,) = read_transcripts(next((tmp_path / "chats").glob("chat-*[0-9a-f].jsonl")))
    assert chat.condition is not None and chat.condition.pseudo_turns == 100
    assert chat.meta["pseudo_turns_in_prompt"] == int(held[1])


def test_a_context_the_persona_cannot_fit_is_refused_before_any_call(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with FakeHTTPServer(small_context_server) as server:
        code = main(simulate(f"{server.url}/v1", "--context-tokens", "1500"))
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2
    assert "cannot fit a context of 1500 tokens" in err
    assert not server.requests
