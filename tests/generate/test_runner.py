"""Running chains: resume after a crash at any write, failures stay with their chain."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import trio

from sdtt.errors import InputError
from sdtt.generate.chain import ChainSettings, ChainSpec, topic_targets
from sdtt.generate.chainfile import load_pseudo_messages, read_chain
from sdtt.generate.runner import ChainProgress, run_chains
from sdtt.jsonl import JsonlWriter
from tests.generate.helpers import (
    TOPICS,
    FakeChatModel,
    FakeCompletionModel,
    hashed_script,
    make_persona,
    mock_chat_model,
)


class Crash(BaseException):
    """Stands in for the process being killed."""


class Budget:
    def __init__(self, writes: int | None, *, torn: bool = False) -> None:
        self.left = writes
        self.torn = torn


class CrashingWriter:
    """A JSONL writer that dies after a number of records (optionally mid-line)."""

    def __init__(self, path: Path, budget: Budget) -> None:
        self.inner = JsonlWriter(path)
        self.path = path
        self.budget = budget

    def write(self, record: Any) -> None:
        if self.budget.left is not None:
            if self.budget.left == 0:
                if self.budget.torn:
                    line = (
                        record.model_dump_json()
                        if hasattr(record, "model_dump_json")
                        else (json.dumps(record))
                    )
                    with self.path.open("a", encoding="utf-8") as handle:
                        handle.write(line[: len(line) // 2])
                raise Crash
            self.budget.left -= 1
        self.inner.write(record)

    def close(self) -> None:
        self.inner.close()


def specs() -> list[ChainSpec]:
    return [
        ChainSpec(
            persona="tester",
            model="mock/fake",
            mode="burst",
            seed=seed,
            topics=topic_targets(TOPICS, 6, 3),
        )
        for seed in (1, 2)
    ] + [
        ChainSpec(
            persona="tester",
            model="local/fake",
            mode="pingpong",
            seed=3,
            topics=topic_targets(TOPICS, 4, 2),
            settings=ChainSettings(style="lines"),
        )
    ]


def models() -> dict[str, Any]:
    return {
        "mock/fake": mock_chat_model(hashed_script(1, 4, burst=2)),
        "local/fake": FakeCompletionModel(empty_every=3),
    }


async def run(out: Path, budget: Budget | None = None, chains: list[ChainSpec] | None = None):
    persona = make_persona()
    fakes = models()
    writers = (lambda path: CrashingWriter(path, budget)) if budget else None
    return await run_chains(
        chains or specs(),
        out,
        personas=lambda name: persona,
        models=fakes.__getitem__,
        writer_factory=writers,
    ), fakes


async def crash(running: Any) -> None:
    """Await ``running`` and check that it died of :class:`Crash` (alone or in a group)."""
    try:
        await running
    except Crash:
        return
    except BaseExceptionGroup as group:
        assert group.split(Crash)[1] is None
        return
    raise AssertionError("the run did not crash")


def files(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.glob("*.jsonl"))}


@pytest.mark.trio
async def test_a_rerun_after_a_crash_at_any_write_gives_the_same_files(tmp_path, autojump_clock):
    reference = tmp_path / "reference"
    report, _ = await run(reference)
    assert all(chain.status == "done" for chain in report.chains)
    expected = files(reference)
    records = sum(content.count(b"\n") for content in expected.values())
    assert records > 20
    for torn in (False, True):
        for writes in range(records):
            out = tmp_path / f"crash-{torn}-{writes}"
            await crash(run(out, Budget(writes, torn=torn)))
            await run(out)
            assert files(out) == expected, f"crash after {writes} records (torn={torn})"


def padded_script(low: int, high: int) -> Any:
    """``hashed_script`` with every answer made long, so call records exceed 8 KB."""
    inner = hashed_script(low, high)

    def script(prompt: Any, config: Any) -> str:
        return inner(prompt, config).replace("answer", "answer " + "la " * 1500)

    return script


class DieAtWrite:
    """Replaces the JSONL writer's system call: dies at call ``at``, leaving ``keep``
    bytes of that record in the file (none, all but its newline, or half of it)."""

    def __init__(self, at: int | None, keep: str) -> None:
        self.at = at
        self.keep = keep
        self.calls = 0

    def __call__(self, fd: int, data: bytes) -> None:
        if self.calls == self.at:
            cut = {"none": 0, "no-newline": len(data) - 1, "half": len(data) // 2}[self.keep]
            os.write(fd, data[:cut])
            raise Crash
        self.calls += 1
        os.write(fd, data)


@pytest.mark.trio
async def test_a_kill_at_any_write_of_large_records_resumes_to_the_same_file(
    tmp_path, autojump_clock, monkeypatch
):
    import sdtt.jsonl as jsonl

    persona = make_persona()
    long_text = "a long remembered message " * 400
    persona.conversations[0].messages[0] = (
        persona.conversations[0].messages[0].model_copy(update={"text": long_text})
    )
    chain = ChainSpec(
        persona="tester", model="mock/fake", seed=1, topics=topic_targets(TOPICS, 4, 2)
    )

    async def generate(out: Path) -> None:
        await run_chains(
            [chain],
            out,
            personas=lambda name: persona,
            models={"mock/fake": mock_chat_model(padded_script(1, 2))}.__getitem__,
        )

    reference = tmp_path / "reference"
    await generate(reference)
    expected = files(reference)
    lines = next(iter(expected.values())).split(b"\n")
    assert len(lines[0]) > 8192 and max(len(line) for line in lines[1:]) > 8192
    for keep in ("none", "no-newline", "half"):
        for at in range(len(lines) - 1):
            out = tmp_path / f"{keep}-{at}"
            monkeypatch.setattr(jsonl, "write_all", DieAtWrite(at, keep))
            await crash(generate(out))
            monkeypatch.undo()
            await generate(out)
            assert files(out) == expected, f"killed at write {at} keeping {keep}"


@pytest.mark.trio
async def test_a_finished_chain_makes_no_more_calls(tmp_path, autojump_clock):
    await run(tmp_path)
    before = files(tmp_path)
    report, fakes = await run(tmp_path)
    assert fakes["mock/fake"].calls == 0 and not fakes["local/fake"].prompts
    assert files(tmp_path) == before
    assert [chain.turns_done for chain in report.chains] == [6, 6, 4]


@pytest.mark.trio
async def test_a_failing_chain_is_reported_and_the_others_finish(tmp_path, autojump_clock):
    persona = make_persona()
    good = FakeChatModel(hashed_script(1, 3))
    bad = FakeChatModel(hashed_script(1, 3), name="mock/bad", fail=lambda prompt: True)
    chains = [
        ChainSpec(persona="tester", model=name, seed=seed, topics=topic_targets(TOPICS, 6, 3))
        for name in ("mock/fake", "mock/bad")
        for seed in (1, 2)
    ]
    updates: list[ChainProgress] = []

    class Recorder:
        def chain_update(self, progress: ChainProgress) -> None:
            updates.append(progress)

    started = trio.current_time()
    report = await run_chains(
        chains,
        tmp_path,
        personas=lambda name: persona,
        models={"mock/fake": good, "mock/bad": bad}.__getitem__,
        display=Recorder(),
    )
    status = {chain.chain: chain for chain in report.chains}
    failed = [chain for chain in report.chains if chain.status == "failed"]
    assert len(failed) == 2 and all("ServerError" in (c.error or "") for c in failed)
    done = [chain for chain in report.chains if chain.status == "done"]
    assert len(done) == 2 and all(chain.turns_done == 6 for chain in done)
    # Retrying is the model's business: the runner calls a failing step once, at once.
    assert len(bad.prompts) == 2
    assert trio.current_time() - started == pytest.approx(0.0)
    for chain in failed:
        assert read_chain(chain.path).errors[0]["error"] == "ServerError"
    assert report.failed == failed and status


@pytest.mark.trio
async def test_a_chain_file_from_another_persona_history_is_not_continued(tmp_path):
    await run(tmp_path)
    other = make_persona(conversations=1)
    with pytest.raises(InputError, match="different 'history'"):
        await run_chains(
            specs()[:1],
            tmp_path,
            personas=lambda name: other,
            models=models().__getitem__,
        )


@pytest.mark.trio
async def test_the_pseudo_dialogue_is_read_back_for_the_live_phase(tmp_path, autojump_clock):
    report, _ = await run(tmp_path)
    path = report.chains[0].path
    messages = load_pseudo_messages(path)
    assert messages == read_chain(path).messages
    assert {m.side for m in messages} == {"user", "response"}
