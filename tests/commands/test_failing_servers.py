"""A run that produced nothing usable exits non-zero and says why (issue 16, item 7)."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from sdtt.cli import main
from sdtt.tasks.questionnaire import save_study
from tests.fakes.http_fake import FakeHTTPServer, RecordedRequest, ScriptedReply
from tests.fakes.openai_fake import FakeOpenAIServer, chat_completion, openai_error
from tests.questionnaires.helpers import fixture_study


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-wrong-key-123456")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    # Failing calls give up quickly: two attempts, within two seconds.
    monkeypatch.setenv("SDTT_CALL_DEADLINE", "2")
    monkeypatch.setenv("SDTT_MAX_ATTEMPTS", "2")
    monkeypatch.chdir(tmp_path)


def refused_url() -> str:
    """A loopback URL where nothing listens."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def always_500(request: RecordedRequest) -> ScriptedReply:
    return openai_error(503, "model overloaded, try later")


def simulate(base_url: str) -> list[str]:
    script = Path("script.txt")
    script.write_text("hey\n\nwhat are you up to\n")
    return [
        "simulate",
        "--model",
        "openai/local-llm",
        "--base-url",
        base_url,
        "--script",
        str(script),
        "--turns",
        "2",
        "--virtual-clock",
        "--quiet",
        "--out",
        "out",
    ]


def test_simulate_against_a_server_that_rejects_the_key_exits_non_zero(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with FakeOpenAIServer(expected_key="sk-the-right-one") as server:
        code = main(simulate(server.base_url))
    err = " ".join(capsys.readouterr().err.split())
    assert code == 1
    assert "no turn was answered" in err and "HTTP 401" in err and "OPENAI_API_KEY" in err
    assert "wrong-key" not in err


def test_simulate_against_a_refused_connection_exits_non_zero(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(simulate(refused_url()))
    err = " ".join(capsys.readouterr().err.split())
    # Found before anything is loaded (issue 49): a setup error, not a failed run.
    assert code == 2
    assert "could not reach" in err and "Start the server first" in err
    assert not Path("out").exists()


def test_a_refused_base_url_is_reported_before_the_command_is_imported() -> None:
    # It was reported only after every import, 1.5-3 minutes on a loaded machine.
    code = (
        "import sys; from sdtt.cli import main; "
        f"rc = main(['simulate', '--model', 'openai/x', '--base-url', {refused_url()!r}]); "
        "print(rc, 'sdtt.commands.simulate' in sys.modules, 'pandas' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.stdout.split() == ["2", "False", "False"], done.stderr
    assert "could not reach 127.0.0.1" in done.stderr


def test_a_malformed_base_url_is_left_to_the_provider_to_explain(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(simulate("127.0.0.1:8080/v1")) == 2
    assert "not a usable URL" in capsys.readouterr().err


def test_simulate_against_a_server_that_always_fails_exits_non_zero(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with FakeHTTPServer(always_500) as server:
        code = main(simulate(f"{server.url}/v1"))
    err = " ".join(capsys.readouterr().err.split())
    assert code == 1
    assert "HTTP 503" in err and "model overloaded" in err


def judge(study: Path, base_url: str) -> list[str]:
    return ["judge", str(study), "--model", "openai/judge", "--base-url", base_url]


def test_judge_against_a_rejected_key_exits_non_zero_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = fixture_study()
    save_study(tmp_path / "study", study.questionnaire, study.key)
    with FakeOpenAIServer(expected_key="sk-the-right-one") as server:
        code = main(judge(tmp_path / "study", server.base_url))
    err = " ".join(capsys.readouterr().err.split())
    assert code == 1
    assert "every judge call failed" in err and "HTTP 401" in err
    assert "wrong-key" not in err
    assert not (tmp_path / "study" / "judgements.jsonl").exists()


def test_an_llm_cohort_whose_every_call_fails_says_so_on_stderr_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The same ending as sdtt judge: one error line on stderr, exit 1, no ratings file.
    from tests.align.helpers import write_sources
    from tests.align.test_cli import SPEC

    write_sources(tmp_path)
    Path("study.toml").write_text(SPEC, encoding="utf-8")
    assert main(["align", "build", "study.toml", "--out", "task"]) == 0
    capsys.readouterr()
    with FakeOpenAIServer(expected_key="sk-the-right-one") as server:
        judge = ["align", "judge", "task", "--model", "openai/judge", "-n", "1"]
        code = main([*judge, "--base-url", server.base_url])
    out, err = capsys.readouterr()
    err = " ".join(err.split())
    assert code == 1
    assert "error: every judge call failed" in err and "HTTP 401" in err
    assert "every" not in out
    assert not (tmp_path / "task" / "ratings.jsonl").exists()


def test_judge_prints_the_providers_message_when_every_call_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = fixture_study()
    save_study(tmp_path / "study", study.questionnaire, study.key)
    with FakeHTTPServer(always_500) as server:
        code = main(judge(tmp_path / "study", f"{server.url}/v1"))
    err = capsys.readouterr().err
    assert code == 1
    final = " ".join(err[err.index("error:") :].split())
    assert "HTTP 503" in final and "model overloaded, try later" in final
    # Said once: the error quoted already says what the provider said (issue 49).
    assert final.count("The provider said") == 1


def test_concurrent_judge_retries_say_which_pair_and_order_each_line_is_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = fixture_study()
    save_study(tmp_path / "study", study.questionnaire, study.key)
    failed: set[str] = set()

    def first_call_of_each_prompt_fails(request: RecordedRequest) -> ScriptedReply:
        prompt = str(request.json()["messages"])
        if prompt not in failed:
            failed.add(prompt)
            return openai_error(500, "busy", headers={"retry-after": "0"})
        return ScriptedReply(body=chat_completion("A"))

    with FakeHTTPServer(first_call_of_each_prompt_fails) as server:
        code = main([*judge(tmp_path / "study", f"{server.url}/v1"), "--concurrency", "4"])
    assert code == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if "retrying:" in line]
    assert len(lines) >= 4
    labels = [line.split("retrying: ", 1)[1].split(": openai/", 1)[0] for line in lines]
    assert all(label.startswith("pair ") and ", order " in label for label in labels), lines
    assert len(set(labels)) == len(labels)  # each line tells its call apart


def test_judge_against_a_hung_server_stops_after_the_first_calls_time_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Long enough for both of the first pair's requests to reach the server on a loaded
    # machine (0.3 s was not, at load 13): the server never answers either way.
    monkeypatch.setenv("SDTT_ATTEMPT_TIMEOUT", "3")
    monkeypatch.setenv("SDTT_MAX_ATTEMPTS", "1")
    study = fixture_study()
    save_study(tmp_path / "study", study.questionnaire, study.key)
    with FakeOpenAIServer() as server:
        server.enqueue(*[ScriptedReply(delay=30)] * 100)  # never answers in time
        code = main([*judge(tmp_path / "study", server.base_url), "--concurrency", "1"])
        asked = len(server.requests)
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2
    assert "no answer within" in err and "run the same command again: it resumes" in err
    assert asked == 2  # the first pair's two orders (asked at once), not every pair in turn
    assert not (tmp_path / "study" / "judgements.jsonl").exists()
