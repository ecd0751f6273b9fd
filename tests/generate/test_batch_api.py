"""Batch APIs against local fakes: same files as direct calls, resume without paying twice."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import trio

from sdtt.errors import ConfigError
from sdtt.generate.batch_api import LEDGER_NAME, run_chains_batched
from sdtt.generate.chain import ChainSpec, topic_targets
from sdtt.generate.chainfile import read_chain
from sdtt.generate.runner import RunOptions, run_chains
from sdtt.models.batch import batch_backend
from sdtt.models.model import get_model
from tests.fakes.batch_fake import FakeAnthropicBatchServer, FakeOpenAIBatchServer
from tests.fakes.openai_fake import FakeOpenAIServer
from tests.generate.helpers import TOPICS, chat_lines, make_persona


def reply(body: Mapping[str, Any]) -> str:
    """One to three rounds, chosen by a hash of the request's messages."""
    key = int(hashlib.sha1(json.dumps(body["messages"]).encode()).hexdigest()[:6], 16)
    return chat_lines(1 + key % 3, f"b{key % 991}")


def specs(model: str, seeds: tuple[int, ...] = (1, 2, 3)) -> list[ChainSpec]:
    return [
        ChainSpec(persona="tester", model=model, seed=seed, topics=topic_targets(TOPICS, 4, 2))
        for seed in seeds
    ]


def comparable(path: Path) -> list[dict[str, Any]]:
    """A chain file's records without the fields that depend on wall-clock time."""
    records = []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        record.pop("latency", None)
        record.pop("attempts", None)
        records.append(record)
    return records


async def batched(out: Path, model: str, base_url: str, **kwargs: Any):
    persona = make_persona()
    async with get_model(model, base_url=base_url) as handle:
        return await run_chains_batched(
            specs(model),
            out,
            personas=lambda name: persona,
            models=lambda name: handle,
            poll_interval=0.01,
            **kwargs,
        )


@pytest.mark.trio
async def test_openai_batches_write_the_same_chains_as_direct_calls(tmp_path):
    persona = make_persona()
    with FakeOpenAIServer(reply=reply) as direct:
        async with get_model("openai/gpt-test", base_url=direct.base_url) as model:
            await run_chains(
                specs("openai/gpt-test"),
                tmp_path / "direct",
                personas=lambda name: persona,
                models=lambda name: model,
            )
    with FakeOpenAIBatchServer(reply, polls_until_done=2) as server:
        report = await batched(tmp_path / "batch", "openai/gpt-test", server.base_url)
    assert all(chain.status == "done" for chain in report.chains)
    for chain in report.chains:
        assert comparable(chain.path) == comparable(tmp_path / "direct" / chain.path.name)
    # One batch per round; every chain advanced by one call per round.
    rounds = max(len(read_chain(chain.path).calls) for chain in report.chains)
    assert server.created == rounds
    uploaded = json.loads(next(iter(server.files.values())).decode().splitlines()[0])
    assert uploaded["url"] == "/v1/chat/completions"
    assert uploaded["body"]["messages"][0]["role"] == "system"


@pytest.mark.trio
async def test_anthropic_message_batches_keep_the_cache_mark_and_record_usage(
    tmp_path, monkeypatch
):
    # The fake stands in for Anthropic itself, which gets cache marks.
    monkeypatch.setenv("SDTT_ANTHROPIC_CACHE_MARKS", "1")
    with FakeAnthropicBatchServer(reply) as server:
        report = await batched(tmp_path, "anthropic/claude-test", server.base_url)
    assert all(chain.status == "done" and chain.turns_done == 4 for chain in report.chains)
    system = server.requests_seen[0]["system"]
    assert system[0]["cache_control"] == {"type": "ephemeral"}
    # Once a topic is finished, later requests also mark its chat in the user message.
    user_blocks = [r["messages"][0]["content"] for r in server.requests_seen]
    assert isinstance(user_blocks[0], str)
    split = [blocks for blocks in user_blocks if isinstance(blocks, list)]
    assert split and all(blocks[0]["cache_control"] == {"type": "ephemeral"} for blocks in split)
    chain = read_chain(report.chains[0].path)
    assert chain.calls[0].usage["input_tokens"] > 0


@pytest.mark.trio
async def test_a_run_killed_while_a_batch_runs_picks_that_batch_up_again(tmp_path):
    with FakeAnthropicBatchServer(reply, polls_until_done=10**6) as server:
        with trio.move_on_after(1.0):
            await batched(tmp_path, "anthropic/claude-test", server.base_url)
        assert server.created == 1
        ledger = (tmp_path / LEDGER_NAME).read_text()
        assert "msgbatch_1" in ledger
        server.polls_until_done = 0
        report = await batched(tmp_path, "anthropic/claude-test", server.base_url)
        rounds = max(len(read_chain(chain.path).calls) for chain in report.chains)
        # The interrupted round's batch was reused, not paid for again.
        assert server.created == rounds
    assert all(chain.status == "done" for chain in report.chains)


@pytest.mark.trio
async def test_failed_batch_requests_are_retried_and_a_hopeless_chain_is_reported(tmp_path):
    from sdtt.generate.batch_api import custom_id

    chains = specs("openai/gpt-test")
    with FakeOpenAIBatchServer(reply) as server:
        server.fail_once.add(custom_id(chains[0].chain_id, 0))
        server.always_fail.add(custom_id(chains[1].chain_id, 0).rsplit("-", 1)[0])
        report = await batched(
            tmp_path,
            "openai/gpt-test",
            server.base_url,
            options=RunOptions(step_retries=2),
        )
    status = {chain.chain: chain for chain in report.chains}
    assert status[chains[0].chain_id].status == "done"
    assert status[chains[2].chain_id].status == "done"
    hopeless = status[chains[1].chain_id]
    assert hopeless.status == "failed" and "failed 3 times" in (hopeless.error or "")


def test_batch_mode_refuses_models_without_a_batch_api():
    with pytest.raises(ConfigError, match="openai/ and anthropic/ models only"):
        batch_backend(get_model("mock/chatty"))
