"""Batch API requests go through the model's API layer: typed errors, one retry policy.

The fakes are real HTTP servers (real clock), so the model's waits are recorded by a
``SleepLog`` instead of slept; the policy itself is tested on virtual time in
tests/models/test_model.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sdtt.generate.batch_api import run_chains_batched
from sdtt.generate.chainfile import read_chain
from sdtt.generate.runner import RunReport
from sdtt.models import Model, RetryPolicy
from sdtt.models.registry import create_api
from tests.fakes.anthropic_fake import anthropic_error
from tests.fakes.batch_fake import FakeAnthropicBatchServer, FakeOpenAIBatchServer
from tests.fakes.openai_fake import rate_limited
from tests.generate.helpers import make_persona
from tests.generate.test_batch_api import reply, specs
from tests.models.sdk_helpers import SleepLog

POLICY = RetryPolicy(jitter=0.0, initial_backoff=1.0)


async def batched(out: Path, model: str, base_url: str, sleep: SleepLog) -> RunReport:
    persona = make_persona()
    async with Model(create_api(model, base_url=base_url), retry=POLICY, sleep=sleep) as handle:
        return await run_chains_batched(
            specs(model),
            out,
            personas=lambda name: persona,
            models=lambda name: handle,
            poll_interval=0.01,
        )


def posts(server: Any, path: str) -> int:
    return sum(1 for r in server.requests if r.method == "POST" and r.path.startswith(path))


@pytest.mark.trio
async def test_a_rate_limited_batch_upload_waits_the_retry_after_and_goes_on(
    tmp_path: Path,
) -> None:
    sleep = SleepLog()
    with FakeOpenAIBatchServer(reply) as server:
        server.enqueue(rate_limited("7"))
        report = await batched(tmp_path, "openai/gpt-test", server.base_url, sleep)
    assert all(chain.status == "done" for chain in report.chains)
    assert sleep.waits == [7.0]
    # The refused upload was sent again; every round created one batch.
    assert posts(server, "/v1/files") == server.created + 1


@pytest.mark.trio
async def test_a_server_error_on_batch_create_is_retried(tmp_path: Path) -> None:
    sleep = SleepLog()
    with FakeAnthropicBatchServer(reply) as server:
        server.enqueue(anthropic_error(500, "overloaded for a moment"))
        report = await batched(tmp_path, "anthropic/claude-test", server.base_url, sleep)
    assert all(chain.status == "done" for chain in report.chains)
    assert sleep.waits == [1.0]
    assert posts(server, "/v1/messages/batches") == server.created + 1


@pytest.mark.trio
async def test_a_refused_batch_is_not_retried_and_keeps_the_providers_message(
    tmp_path: Path,
) -> None:
    sleep = SleepLog()
    refusal = anthropic_error(
        400, "requests.0.params.max_tokens: too large", kind="invalid_request_error"
    )
    with FakeAnthropicBatchServer(reply) as server:
        server.enqueue(refusal)
        report = await batched(tmp_path, "anthropic/claude-test", server.base_url, sleep)
    assert sleep.waits == []
    assert len(server.requests) == 1 and server.created == 0
    assert all(chain.status == "failed" for chain in report.chains)
    for chain in report.chains:
        assert "HTTP 400" in (chain.error or "")
        assert "max_tokens: too large" in (chain.error or "")
        assert "too large" in read_chain(chain.path).errors[0]["message"]
