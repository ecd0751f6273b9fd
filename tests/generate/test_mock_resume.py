"""``--seed`` makes mock runs repeatable: a killed and resumed run of several concurrent
chains on a built-in mock model writes exactly the files of an uninterrupted run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import trio

from sdtt.cli import main
from sdtt.generate.chain import ChainSpec, topic_targets
from sdtt.generate.runner import run_chains
from sdtt.models.model import get_model
from tests.generate.helpers import TOPICS, make_persona
from tests.generate.test_runner import Budget, CrashingWriter, crash, files

TIMING_FIELDS = frozenset({"latency"})
"""Fields measured on the wall clock, which no two runs share."""
CLI = "import sys; from sdtt.cli import main; sys.exit(main(sys.argv[1:]))"


def chains() -> list[ChainSpec]:
    return [
        ChainSpec(
            persona="tester",
            model=model,
            mode=mode,
            seed=seed,
            topics=topic_targets(TOPICS, 6, 2),
        )
        for model, mode, seed in (
            ("mock/chatty", "burst", 1),
            ("mock/chatty", "burst", 2),
            ("mock/chatty", "pingpong", 1),
            ("mock/chatty", "pingpong", 3),
        )
    ]


async def run(out: Path, budget: Budget | None = None) -> None:
    """One process's run: fresh models (no state carried over), all chains at once."""
    persona = make_persona()
    models = {"mock/chatty": get_model("mock/chatty")}
    writers = (lambda path: CrashingWriter(path, budget)) if budget else None
    await run_chains(
        chains(),
        out,
        personas=lambda name: persona,
        models=models.__getitem__,
        writer_factory=writers,
    )


@pytest.mark.trio
async def test_a_killed_and_resumed_mock_run_matches_an_uninterrupted_one(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    reference = tmp_path / "reference"
    await run(reference)
    expected = files(reference)
    assert len(expected) == 4
    records = sum(content.count(b"\n") for content in expected.values())
    for torn in (False, True):
        for writes in range(1, records, 3):
            out = tmp_path / f"crash-{torn}-{writes}"
            await crash(run(out, Budget(writes, torn=torn)))
            await run(out)
            assert files(out) == expected, f"killed after {writes} records (torn={torn})"


def _without_timing(value: object) -> object:
    if isinstance(value, dict):
        return {k: _without_timing(v) for k, v in value.items() if k not in TIMING_FIELDS}
    if isinstance(value, list):
        return [_without_timing(v) for v in value]
    return value


def _records(folder: Path) -> dict[str, list[object]]:
    return {
        path.name: [_without_timing(json.loads(line)) for line in path.read_text().splitlines()]
        for path in sorted(folder.glob("*.jsonl"))
    }


def _generate_args(out: Path) -> list[str]:
    topics = out.parent / "topics.txt"
    topics.write_text("\n".join(TOPICS) + "\n")
    return [
        "generate",
        *("--model", "mock/chatty", "--mode", "burst", "--mode", "pingpong"),
        *("--seed", "1", "--seed", "2", "--turns", "15", "--turns-per-topic", "3"),
        *("--topics", str(topics), "--history-turns", "20", "--out", str(out)),
    ]


def test_a_generate_killed_with_sigkill_resumes_to_the_same_files(tmp_path: Path) -> None:
    reference = tmp_path / "reference" / "out"
    reference.parent.mkdir()
    assert main(_generate_args(reference)) == 0
    expected = _records(reference)
    assert len(expected) == 4

    out = tmp_path / "killed" / "out"
    out.parent.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-c", CLI, *_generate_args(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "COLUMNS": "100"},
    )
    # Kill it hard once the chains have written a few records, before they are done.
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if sum(p.read_bytes().count(b"\n") for p in out.glob("*.jsonl")) >= 6:
            process.send_signal(signal.SIGKILL)
            break
        time.sleep(0.01)
    process.wait(timeout=60)
    assert process.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    assert _records(out) != expected
    assert main(_generate_args(out)) == 0
    assert _records(out) == expected
