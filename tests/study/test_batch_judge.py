"""A study's LLM judge with ``batch = true``: the batch API path of ``sdtt judge --batch``.

The chats come from the mock models; the judge is ``openai/judge-test`` (or
``anthropic/judge-test``), answered by the local fakes of the chat API (direct) and of the
batch API, both with the same function of the request (as tests/judges/test_batched.py).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sdtt.errors import InputError
from sdtt.models.base import ModelAPI
from sdtt.models.prices import BATCH_DISCOUNT
from sdtt.models.registry import create_api
from sdtt.study.ledger import read_ledger
from sdtt.study.runner import RunResult, StudyRunner
from sdtt.study.spec import read_spec
from tests.fakes.batch_fake import FakeAnthropicBatchServer, FakeOpenAIBatchServer
from tests.judges.test_batched import FAKES, answer, records
from tests.study.helpers import CountingMocks, drive, write_spec

PRICE = "input = 2.0\noutput = 8.0\ncached_input = 1.0\n"


def judge_spec(folder: Path, provider: str, *, batch: bool, study_extra: str = "") -> Path:
    """The small study with its judge on ``provider``'s fake (priced), batched or not."""
    model = f"{provider}/judge-test"
    extra = "batch = true\npoll = 0\n" if batch else ""
    extra += f'\n[prices."{model}"]\n{PRICE}'
    path = write_spec(folder, extra=extra, study_extra=study_extra)
    text = path.read_text("utf-8").replace(
        '[judges.llm]\nmodel = "mock/chatty"', f'[judges.llm]\nmodel = "{model}"'
    )
    path.write_text(text, "utf-8")
    return path


def factory(mocks: CountingMocks, base_url: str) -> Callable[[str], ModelAPI]:
    """Mock models for the chats; the judge's provider at the fake's address."""

    def make(name: str) -> ModelAPI:
        if name.startswith(("openai/", "anthropic/")):
            return create_api(name, base_url=base_url)
        return mocks(name)

    return make


def base_url(server: Any) -> str:
    """The address the provider is given (as tests/judges/test_batched.py gives them)."""
    return str(server.url if isinstance(server, FakeAnthropicBatchServer) else server.base_url)


def run(spec: Path, server: Any) -> RunResult:
    api = factory(CountingMocks(), base_url(server))
    return StudyRunner(read_spec(spec), drive=drive, api_factory=api).run()


def judge_dollars(out: Path) -> float:
    return sum(r["cost"] for r in read_ledger(out / "ledger.jsonl") if r["stage"] == "judges")


@pytest.mark.parametrize("provider", sorted(FAKES))
def test_a_batch_judge_writes_the_direct_judgements_at_half_the_price(
    tmp_path: Path, provider: str
) -> None:
    direct_spec = judge_spec(tmp_path / "direct", provider, batch=False)
    with FAKES[provider][0](reply=answer) as server:
        assert run(direct_spec, server).finished
    batch_spec = judge_spec(tmp_path / "batch", provider, batch=True)
    with FAKES[provider][1](answer) as batch_server:
        assert run(batch_spec, batch_server).finished
    # The calls went through the batch API, each request once.
    assert batch_server.created >= 1
    assert set(batch_server.sent.values()) == {1}
    expected = records(tmp_path / "direct" / "out" / "judgements" / "llm.jsonl")
    assert not any("model_error" in r for r in expected)
    made = records(tmp_path / "batch" / "out" / "judgements" / "llm.jsonl")
    # Record for record, but for the chats' own folder named in their conditions.
    made = [r.replace(str(tmp_path / "batch"), str(tmp_path / "direct")) for r in made]
    assert made == expected
    direct_cost = judge_dollars(tmp_path / "direct" / "out")
    assert direct_cost > 0
    assert judge_dollars(tmp_path / "batch" / "out") == pytest.approx(direct_cost * BATCH_DISCOUNT)


def test_a_rerun_answers_a_batch_judge_from_the_ledger_without_a_new_job(
    tmp_path: Path,
) -> None:
    spec = judge_spec(tmp_path, "openai", batch=True)
    out = tmp_path / "out"
    with FakeOpenAIBatchServer(answer) as first:
        assert run(spec, first).finished
    judged = records(out / "judgements" / "llm.jsonl")
    # As after a kill mid-judging: the judgements and the batch jobs' ledger are gone,
    # the study's cost ledger (written as each answer came) is kept.
    (out / "judgements" / "llm.jsonl").unlink()
    (out / "judgements" / "llm.batches.jsonl").unlink()
    for mark in (out / ".done").glob("*"):
        if "judge" in mark.name:
            mark.unlink()
    calls = len(read_ledger(out / "ledger.jsonl"))
    with FakeOpenAIBatchServer(answer) as second:
        assert run(spec, second).finished
    assert second.created == 0
    assert records(out / "judgements" / "llm.jsonl") == judged
    assert len(read_ledger(out / "ledger.jsonl")) == calls


def test_the_budget_stops_a_batch_judge_before_its_job_is_sent(tmp_path: Path) -> None:
    spec = judge_spec(tmp_path, "openai", batch=True, study_extra="budget = 0.0001")
    with FakeOpenAIBatchServer(answer) as server:
        result = run(spec, server)
    assert not result.finished and result.budget is not None
    assert "judge" in str(result.budget)
    assert server.created == 0


def test_a_batch_judge_of_a_model_without_a_batch_api_is_refused_at_load(
    tmp_path: Path,
) -> None:
    spec = write_spec(tmp_path, extra="batch = true")
    with pytest.raises(InputError, match="mock/chatty has no batch API") as caught:
        read_spec(spec)
    assert caught.value.field == "judges.llm.batch"
    assert caught.value.line == spec.read_text("utf-8").splitlines().index("batch = true") + 1
    assert str(spec) in str(caught.value)
