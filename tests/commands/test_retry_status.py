"""A retried call shows one status line while the command runs; --verbose shows every call."""

from __future__ import annotations

from pathlib import Path

import pytest

from sdtt.cli import RETRY_LOGGER, main
from sdtt.models.model import status_log
from tests.fakes.openai_fake import FakeOpenAIServer, openai_error

TOPICS = "weekend plans\nfavourite food\nold films\n"


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)


def topics(base_url: str, *extra: str) -> list[str]:
    return [
        "topics",
        "--model",
        "openai/local-llm",
        "--base-url",
        base_url,
        "--count",
        "3",
        "--out",
        "topics.txt",
        *extra,
    ]


def failing_twice(server: FakeOpenAIServer) -> None:
    # retry-after 0: the test does not wait for the backoff.
    again = {"retry-after": "0"}
    server.enqueue(
        openai_error(500, "internal server error", headers=again),
        openai_error(503, "loading model", headers=again),
    )


def test_each_retry_is_one_line_saying_what_failed_which_attempt_and_the_wait(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with FakeOpenAIServer(reply=TOPICS) as server:
        failing_twice(server)
        assert main(topics(server.base_url)) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert lines == [
        "retrying: openai/local-llm: the provider failed (HTTP 500). The provider said: "
        "internal server error (attempt 1 of 5 failed; next try in 0 s)",
        "retrying: openai/local-llm: the provider failed (HTTP 503). The provider said: "
        "loading model (attempt 2 of 5 failed; next try in 0 s)",
    ]


def test_a_call_that_succeeds_at_once_prints_no_status(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with FakeOpenAIServer(reply=TOPICS) as server:
        assert main(topics(server.base_url)) == 0
    assert "retrying" not in capsys.readouterr().err


def test_verbose_shows_every_call_and_each_retry_once(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with FakeOpenAIServer(reply=TOPICS) as server:
        failing_twice(server)
        assert main(topics(server.base_url, "--verbose")) == 0
    err = capsys.readouterr().err
    assert err.count("retrying: ") == 2
    (call,) = [line for line in err.splitlines() if line.startswith("debug: model call")]
    assert "openai/local-llm" in call and "attempts=3" in call
    # Once the command is over, nothing is left printing.
    status_log.info("after the command")
    assert "after the command" not in capsys.readouterr().err


def test_the_command_line_listens_to_the_models_status_logger() -> None:
    assert status_log.name == RETRY_LOGGER


def test_a_hung_server_shows_each_attempt_that_timed_out(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SDTT_ATTEMPT_TIMEOUT", "0.2")
    monkeypatch.setenv("SDTT_MAX_ATTEMPTS", "2")
    with FakeOpenAIServer(reply=TOPICS, latency=3.0) as server:
        assert main(topics(server.base_url)) != 0
    (line,) = [line for line in capsys.readouterr().err.splitlines() if "retrying" in line]
    assert line.startswith("retrying: openai/local-llm: no answer within 0.2 s (attempt 1 of 2")
