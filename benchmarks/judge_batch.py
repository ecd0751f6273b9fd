"""``sdtt judge --batch`` against direct calls: 10,000 judge calls, wall time and memory.

A study of 5,000 pairs (the fixture study's pairs, each copy with its own id and text) is
judged by the paired judge in both orders: 10,000 calls, every answer readable, so each
path makes exactly that many. Both run as the real command (``sdtt judge``), each in a
child process of its own, against local fakes (``tests/fakes``) running in this process:

- direct: the OpenAI chat API fake, answering each call after ``--call-seconds``, at the
  judge's default concurrency;
- batch: the OpenAI Batch API fake, whose jobs end ``--batch-seconds`` after they were
  created, polled every ``--poll`` seconds.

The default latencies are real ones scaled by 1/200: a direct call of about a second
(5 ms) and a batch job of about 20 minutes (6 s). Printed per path: wall time of the
command, the CPU seconds of its process, its peak resident memory (and that of a child
that only loads the study, the floor both share), the HTTP requests the fake received,
and batch/direct ratios. The two output files must hold the same records.

Run from the repository root (about a minute on 2 cores; as root, ``nice -n -15``)::

    python benchmarks/judge_batch.py [--calls 10000] [--batch-seconds 6] [--call-seconds 0.005]

Measured, not asserted: the numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _quick import add_quick  # noqa: E402

MODEL = "openai/judge-bench"


def reply(body: Mapping[str, Any]) -> str:
    """A readable answer that depends on the pair shown."""
    return "AB"[len(json.dumps(body["messages"])) % 2]


def build_study(folder: Path, pairs: int) -> None:
    """``pairs`` pairs: copies of the fixture study's pairs, each with its own id and a
    number in its first line, so every prompt differs."""
    from sdtt.tasks.questionnaire import save_study
    from tests.questionnaires.helpers import fixture_study

    built = fixture_study()
    items, keys = [], {}
    for number in range(pairs):
        item = built.questionnaire.items[number % len(built.questionnaire.items)]
        truth = built.key.items[item.id]
        pair_id = f"p{number:07d}"
        first = item.chats[0][0].model_copy(update={"text": f"{item.chats[0][0].text} ({number})"})
        chats = ([first, *item.chats[0][1:]], item.chats[1])
        items.append(item.model_copy(update={"id": pair_id, "chats": chats}))
        keys[pair_id] = truth.model_copy(update={"pair_id": pair_id, "kind": "test"})
    questionnaire = built.questionnaire.model_copy(update={"items": items, "forms": []})
    key = built.key.model_copy(update={"items": keys})
    save_study(folder, questionnaire, key)


@dataclass(frozen=True)
class Run:
    """What one child process measured."""

    wall: float
    cpu: float
    peak_mb: float
    requests: int


def child(args: argparse.Namespace) -> None:
    """In the child: load the study (``floor``) or run ``sdtt judge`` on it."""
    from sdtt.cli import main
    from sdtt.tasks.questionnaire import load_key, load_questionnaire

    if args.child == "floor":
        # What both paths load before judging: the command, the SDK, the study.
        import openai  # noqa: F401

        import sdtt.commands.judge
        import sdtt.judges.batched  # noqa: F401

        load_key(args.study, load_questionnaire(args.study))
        return
    command = ["judge", str(args.study), "--model", MODEL, "--orders", "both"]
    command += ["--base-url", args.url, "--out", str(args.out)]
    if args.child == "batch":
        command += ["--batch", "--poll", str(args.poll)]
    started = time.perf_counter()
    code = main(command)
    print(json.dumps({"wall": time.perf_counter() - started}))
    sys.exit(code)


def spawn(args: argparse.Namespace, path: str, url: str, out: Path, study: Path) -> Run:
    """Run one path in a child process; its wall time, CPU and peak memory."""
    argv = [sys.executable, __file__, "--child", path, "--study", str(study)]
    argv += ["--url", url, "--out", str(out), "--poll", str(args.poll)]
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    with tempfile.TemporaryFile() as stdout:
        process = subprocess.Popen(argv, stdout=stdout, stderr=subprocess.PIPE, env=environment)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        error = process.stderr.read().decode() if process.stderr else ""
        if process.returncode != 0:
            raise SystemExit(f"{path} failed ({process.returncode}):\n{error[-3000:]}")
        stdout.seek(0)
        lines = stdout.read().decode().splitlines()
    wall = json.loads(lines[-1])["wall"] if path != "floor" else 0.0
    # ru_maxrss is in kilobytes on Linux.
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, 0)


def same_records(first: Path, second: Path) -> bool:
    """Whether two judgement files hold the same records (in any order)."""

    def read(path: Path) -> list[str]:
        lines = path.read_text(encoding="utf-8").splitlines()
        return sorted(json.dumps(json.loads(line), sort_keys=True) for line in lines)

    return read(first) == read(second)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=10_000, help="judge calls (even)")
    parser.add_argument("--batch-seconds", type=float, default=6.0, help="a job's latency")
    parser.add_argument("--call-seconds", type=float, default=0.005, help="a direct call's")
    parser.add_argument("--poll", type=float, default=1.0, help="seconds between job checks")
    parser.add_argument("--child", choices=("floor", "direct", "batch"), help=argparse.SUPPRESS)
    parser.add_argument("--study", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    add_quick(parser, calls=200, batch_seconds=1.0, poll=0.2)
    args = parser.parse_args()
    if args.child:
        child(args)
        return

    from tests.fakes.batch_fake import FakeOpenAIBatchServer
    from tests.fakes.openai_fake import FakeOpenAIServer

    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        study = folder / "study"
        build_study(study, args.calls // 2)
        runs: dict[str, Run] = {"floor": spawn(args, "floor", "", folder / "x", study)}
        with FakeOpenAIServer(reply=reply, latency=args.call_seconds) as server:
            run = spawn(args, "direct", server.base_url, folder / "direct.jsonl", study)
            runs["direct"] = Run(run.wall, run.cpu, run.peak_mb, len(server.requests))
        with FakeOpenAIBatchServer(reply, seconds_until_done=args.batch_seconds) as batch:
            run = spawn(args, "batch", batch.base_url, folder / "batch.jsonl", study)
            runs["batch"] = Run(run.wall, run.cpu, run.peak_mb, len(batch.requests))
            jobs = batch.created
        same = same_records(folder / "direct.jsonl", folder / "batch.jsonl")
        ledger = (folder / "batch.batches.jsonl").stat().st_size / 1e6

    print(
        f"{args.calls:,} judge calls ({args.calls // 2:,} pairs, both orders); direct call "
        f"{args.call_seconds * 1000:g} ms, batch job {args.batch_seconds:g} s, poll "
        f"{args.poll:g} s"
    )
    print(f"{'path':<8}{'wall s':>9}{'CPU s':>9}{'peak MB':>10}{'above floor':>13}{'requests':>10}")
    floor = runs["floor"].peak_mb
    for name in ("floor", "direct", "batch"):
        run = runs[name]
        wall = f"{run.wall:9.1f}" if name != "floor" else f"{'':9}"
        above = f"{run.peak_mb - floor:13.1f}" if name != "floor" else f"{'':13}"
        requests = f"{run.requests:10,}" if name != "floor" else f"{'':10}"
        print(f"{name:<8}{wall}{run.cpu:9.1f}{run.peak_mb:10.1f}{above}{requests}")
    direct, batched = runs["direct"], runs["batch"]
    print(
        f"batch/direct: wall {batched.wall / direct.wall:.2f}x, CPU "
        f"{batched.cpu / direct.cpu:.2f}x, peak memory {batched.peak_mb / direct.peak_mb:.2f}x "
        f"({(batched.peak_mb - floor) / max(direct.peak_mb - floor, 0.1):.2f}x above the floor)"
    )
    print(
        f"batch: {jobs} job(s), ledger {ledger:.1f} MB; same records as direct: "
        f"{'yes' if same else 'NO'}"
    )
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
