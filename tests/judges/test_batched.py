"""LLM judges through the batch APIs: the records of direct calls, resumable, retried.

Every test runs the real command (or judge) against local fakes of the OpenAI Batch API
and Anthropic Message Batches (``tests/fakes/batch_fake.py``), and the direct path
against the fakes of the chat APIs, both answering with the same function of the
request body: so the two paths can be compared record for record.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import trio

from sdtt.beliefs.traces import BeliefTrace
from sdtt.cli import main
from sdtt.jsonl import JsonlWriter
from sdtt.judges.batched import batched, ledger_path
from sdtt.judges.reveal import run_reveal_judge
from sdtt.models.model import get_model
from sdtt.tasks.questionnaire import load_key, load_questionnaire, save_study
from tests.align.helpers import write_sources
from tests.fakes.anthropic_fake import FakeAnthropicServer, anthropic_error
from tests.fakes.batch_fake import FakeAnthropicBatchServer, FakeBatchServer, FakeOpenAIBatchServer
from tests.fakes.openai_fake import FakeOpenAIServer
from tests.questionnaires.helpers import fixture_study

FAKES: dict[str, tuple[Any, Any]] = {
    "openai": (FakeOpenAIServer, FakeOpenAIBatchServer),
    "anthropic": (FakeAnthropicServer, FakeAnthropicBatchServer),
}
_SCALE = re.compile(r"one whole number from (\d+) to (\d+) only")


def _hash(body: Mapping[str, Any]) -> int:
    text = json.dumps([body.get("system"), body["messages"]], sort_keys=True)
    return int(hashlib.sha1(text.encode()).hexdigest()[:8], 16)


def answer(body: Mapping[str, Any], *, unreadable: bool = True) -> str:
    """A judge's answer, a function of the request alone; about one in four cannot be
    read (so some questions are asked again), unless ``unreadable`` is off."""
    text = json.dumps(body["messages"])
    value = _hash(body)
    if unreadable and value % 4 == 0:
        return "Hard to say, honestly."
    if "0 to 100" in text:
        return str(value % 101)
    if "A or B" in text:
        return "AB"[value % 2]
    if "human or AI" in text:
        return ("human", "AI")[value % 2]
    scale = _SCALE.search(text)
    assert scale is not None, text
    low, high = int(scale.group(1)), int(scale.group(2))
    return str(low + value % (high - low + 1))


def readable(body: Mapping[str, Any]) -> str:
    return answer(body, unreadable=False)


def records(path: Path) -> list[str]:
    """A file's records, each as canonical JSON, in a fixed order (a batch writes them in
    the order jobs end, direct calls in the order they come back)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return sorted(json.dumps(json.loads(line), sort_keys=True) for line in lines)


def good(path: Path) -> list[str]:
    """The records that are not model errors (those a rerun asks again)."""
    return [r for r in records(path) if '"model_error: ' not in r]


@pytest.fixture
def study(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    built = fixture_study()
    save_study(tmp_path / "study", built.questionnaire, built.key)
    return tmp_path / "study"


@pytest.fixture
def task(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write_sources(tmp_path)
    (tmp_path / "study.toml").write_text(
        'name = "align-demo"\nseed = 3\n\n[rating]\nunit = "burst"\nitems_per_source = 2\n\n'
        '[[rating.sources]]\npath = "bots.jsonl"\nside = "bot"\n\n'
        '[[rating.sources]]\npath = "humans.jsonl"\nside = "human"\n',
        encoding="utf-8",
    )
    assert main(["align", "build", "study.toml", "--out", "task"]) == 0
    return tmp_path / "task"


def direct(provider: str, command: list[str], reply: Any = answer) -> None:
    """Run ``command`` with direct calls to the chat API fake."""
    with FAKES[provider][0](reply=reply) as server:
        assert main([*command, "--base-url", server.base_url]) == 0


def run_batched(command: list[str], server: FakeBatchServer, *extra: str) -> int:
    """Run ``command`` with ``--batch`` against a batch API fake, into ``batch.jsonl``."""
    batch = ["--out", "batch.jsonl", "--batch", "--poll", "0", "--base-url", server.url]
    if isinstance(server, FakeOpenAIBatchServer):
        batch[-1] = server.base_url
    return main([*command, *batch, *extra])


def first_requests(server: FakeBatchServer) -> int:
    """Requests in the first job of a fake (each id sent once by then)."""
    if isinstance(server, FakeOpenAIBatchServer):
        return len(server.files["file-1"].decode().splitlines())
    assert isinstance(server, FakeAnthropicBatchServer)
    return server.results["msgbatch_1"].decode().count("\n")


@pytest.mark.parametrize("provider", sorted(FAKES))
@pytest.mark.parametrize("kind", ["paired", "zero-shot"])
def test_a_batched_judge_writes_exactly_the_records_of_direct_calls(
    study: Path, provider: str, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    model = f"{provider}/judge-test"
    command = ["judge", str(study), "--model", model, "--judge", kind]
    direct(provider, [*command, "--out", "direct.jsonl"])
    with FAKES[provider][1](answer) as server:
        code = run_batched(command, server)
        assert code == 0
    assert records(Path("batch.jsonl")) == records(Path("direct.jsonl"))
    said = capsys.readouterr().out
    # Every pair's first question went in the first job (3 pairs, both orders or both
    # chats); the unreadable answers were asked again in later jobs.
    assert first_requests(server) == 6
    assert server.created >= 2
    assert f"batch: {server.created} job(s) submitted" in said
    # Every request was sent once, and each job is in the ledger.
    assert set(server.sent.values()) == {1}
    ledger = Path("batch.batches.jsonl").read_text()
    assert all(f'"id":"{job}"' in ledger for job in server.batches)


def test_reveal_mode_sends_one_job_per_turn_across_all_pairs(
    study: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    command = ["judge", str(study), "--model", "openai/judge-test", "--reveal"]
    direct("openai", [*command, "--out", "direct.jsonl"], readable)
    with FakeOpenAIBatchServer(readable) as server:
        assert run_batched(command, server) == 0
    assert records(Path("batch.jsonl")) == records(Path("direct.jsonl"))
    # 3 pairs of 3 turns: job k asks turn k of every pair.
    assert server.created == 3
    for turn, file_id in enumerate(["file-1", "file-3", "file-5"], start=1):
        asked = [json.loads(line) for line in server.files[file_id].decode().splitlines()]
        texts = [entry["body"]["messages"][-1]["content"] for entry in asked]
        assert len(texts) == 3
        assert all(f"You have seen turn {turn} of 3" in text for text in texts)


def test_cohorts_with_identities_in_both_orders_batch_every_participant_together(
    task: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    command = ["align", "judge", str(task), "--model", "anthropic/rater", "-n", "3"]
    command += ["--identities", "--orders", "both", "--temperature", "0.7"]
    command += ["--temperature", "1.5"]
    direct("anthropic", [*command, "--out", "direct.jsonl"])
    with FakeAnthropicBatchServer(answer) as server:
        assert run_batched(command, server) == 0
    made = records(Path("batch.jsonl"))
    assert made == records(Path("direct.jsonl"))
    # Both cohorts' participants rated every pair in both orders; all first questions
    # went in one job.
    assert first_requests(server) == len(made) == 2 * 3 * 2 * 6
    identities = {json.loads(r)["rater"]["identity"] for r in made}
    assert identities == {"Ms. Snyder", "Mr. Snyder", "Dr. Snyder"}
    assert set(server.sent.values()) == {1}


def test_an_expired_job_is_said_and_its_unanswered_requests_go_in_a_new_job(
    study: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    command = ["judge", str(study), "--model", "openai/judge-test"]
    direct("openai", [*command, "--out", "direct.jsonl"])
    with FakeOpenAIBatchServer(answer) as server:
        server.end_next("expired", answered=2)
        assert run_batched(command, server) == 0
    said = " ".join(capsys.readouterr().out.split())
    assert server.endings == {"batch_1": "expired"}
    assert (
        "batch batch_1: 4 request(s) without an answer (4 This request was not run: the "
        "batch expired.); 4 sent again in a new job" in said
    )
    # Nothing lost, nothing asked twice that had an answer: the result is the direct one.
    assert records(Path("batch.jsonl")) == records(Path("direct.jsonl"))
    first = [json.loads(line)["custom_id"] for line in server.files["file-1"].decode().splitlines()]
    assert [server.sent[key] for key in first] == [1, 1, 2, 2, 2, 2]


def test_a_cancelled_job_keeps_what_it_answered_and_a_rerun_asks_the_rest(
    study: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    command = ["judge", str(study), "--model", "anthropic/judge-test", "--judge", "zero-shot"]
    direct("anthropic", [*command, "--out", "direct.jsonl"], readable)
    with FakeAnthropicBatchServer(readable) as server:
        server.end_next("cancelled", answered=4)
        assert run_batched(command, server, "--batch-retries", "0") == 0
        said = " ".join(capsys.readouterr().out.split())
        assert (
            "batch msgbatch_1: 2 request(s) without an answer (2 canceled); 2 recorded as "
            "errors after 1 tries" in said
        )
        # The pairs whose both chats were answered are written, the others are model
        # errors, held back and written last (the job's order decides which pairs).
        first = Path("batch.jsonl").read_text(encoding="utf-8")
        failed = len(records(Path("batch.jsonl"))) - len(good(Path("batch.jsonl")))
        assert len(good(Path("batch.jsonl"))) == 3 - failed and failed in (1, 2)
        assert "model_error: ProviderError: batch request failed 1 times: canceled" in first
        assert run_batched(command, server, "--batch-retries", "0") == 0
        said = " ".join(capsys.readouterr().out.split())
    assert Path("batch.jsonl").read_text(encoding="utf-8").startswith(first)
    assert good(Path("batch.jsonl")) == records(Path("direct.jsonl"))
    # The rerun sent only the two cancelled requests again; the other chat of a failed
    # pair, answered before, came from the ledger.
    assert server.created == 2
    assert sorted(server.sent.values()) == [1, 1, 1, 1, 2, 2]
    if failed == 2:
        assert "2 answer(s) from an earlier run used, not asked again" in said


async def _reveal(study: Path, out: Path, base_url: str) -> list[BeliefTrace]:
    questionnaire = load_questionnaire(study)
    key = load_key(study, questionnaire)
    model = get_model("openai/judge-test", base_url=base_url)
    async with model, batched(model, ledger_path(out), poll_interval=0.01) as judge:
        with JsonlWriter(out) as writer:
            return await run_reveal_judge(
                judge, questionnaire, key, concurrency=100, on_trace=writer.write
            )


@pytest.mark.trio
async def test_a_killed_reveal_run_resumes_its_job_and_repeats_no_call(
    study: Path,
) -> None:
    direct_out, out = study.parent / "direct.jsonl", study.parent / "batch.jsonl"
    with FakeOpenAIServer(reply=answer) as server:
        await _reveal_direct(study, direct_out, server.base_url)
    with FakeOpenAIBatchServer(answer) as server:
        server.hold_from = 2
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_reveal, study, out, server.base_url)
            # Killed while the second job runs, once its id is in the ledger.
            while '"id":"batch_2"' not in _text(ledger_path(out)):
                await trio.sleep(0.01)
            nursery.cancel_scope.cancel()
        assert server.created == 2
        assert not out.exists() or out.read_text() == ""
        server.hold_from = None
        await _reveal(study, out, server.base_url)
    assert records(out) == records(direct_out)
    # Turn 1's answers came from the ledger, turn 2's job was picked up: no request was
    # sent twice, and no job was submitted for what a job already held.
    assert set(server.sent.values()) == {1}
    jobs = [json.loads(line) for line in ledger_path(out).read_text().splitlines()]
    submitted = [job["requests"] for job in jobs if job["type"] == "batch"]
    assert len(submitted) == server.created
    assert sum(map(len, submitted)) == len(server.sent)


def _text(path: Path) -> str:
    return path.read_text() if path.exists() else ""


async def _reveal_direct(study: Path, out: Path, base_url: str) -> None:
    questionnaire = load_questionnaire(study)
    key = load_key(study, questionnaire)
    async with get_model("openai/judge-test", base_url=base_url) as model:
        with JsonlWriter(out) as writer:
            await run_reveal_judge(model, questionnaire, key, on_trace=writer.write)


def test_batch_is_refused_for_a_model_without_a_batch_api(
    study: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["judge", str(study), "--model", "mock/chatty", "--batch"])
    assert code == 2
    assert "--batch works with openai/ and anthropic/ models only" in capsys.readouterr().err
    assert not (study / "judgements.jsonl").exists()
    assert not (study / "judgements.batches.jsonl").exists()


@pytest.mark.parametrize("command", ["judge", "align judge"])
@pytest.mark.parametrize("option", [["--poll", "5"], ["--batch-retries", "1"]])
def test_a_batch_option_without_batch_is_refused_before_anything_is_written(
    request: pytest.FixtureRequest,
    command: str,
    option: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    # (--batch with --poll and --batch-retries is what run_batched and the tests above run.)
    target = request.getfixturevalue("study" if command == "judge" else "task")
    args = [*command.split(), str(target), "--model", "openai/judge-test", "--out", "out.jsonl"]
    assert main([*args, *option]) == 2
    err = " ".join(capsys.readouterr().err.split())  # unwrapped
    assert f"{option[0]} only applies with --batch" in err
    assert f"Add --batch, or leave out {option[0]}." in err
    assert not Path("out.jsonl").exists()


def test_a_refused_batch_stops_the_run_with_the_providers_message_and_a_rerun_goes_on(
    study: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    command = ["judge", str(study), "--model", "anthropic/judge-test"]
    direct("anthropic", [*command, "--out", "direct.jsonl"], readable)
    refusal = anthropic_error(400, "requests.0.params.max_tokens: too large", kind="x")
    with FakeAnthropicBatchServer(readable) as server:
        server.enqueue(refusal)
        assert run_batched(command, server) == 2
        error = " ".join(capsys.readouterr().err.split())
        assert "HTTP 400" in error and "max_tokens: too large" in error
        assert server.created == 0 and not Path("batch.jsonl").exists()
        assert run_batched(command, server) == 0
    assert records(Path("batch.jsonl")) == records(Path("direct.jsonl"))
