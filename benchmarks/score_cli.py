"""``sdtt score`` on a million judgements, as a user runs it: wall time and peak memory.

Writes a judgement file shaped as ``sdtt judge`` writes them (paired LLM judges, both
orders of every pair, varied judge ids and bot conditions), then times, each in a
process of its own, the command ``sdtt score FILE --bootstrap 0`` end to end and the
two floors: the same file read line by line with orjson alone, every record parsed and
dropped, and read by the reader the command uses (pyarrow's JSON reader, same blocks,
on every core) alone. Peak resident memory comes from ``wait4`` (each process's own
``ru_maxrss``, which counts this small parent's pages from before the child started the
program), CPU seconds from it too.
Targets: the command under 1 GiB and within 3x the pyarrow floor's time.

With ``--traces N`` it also writes N belief traces (six slider readings each, as a
reveal judge or a live study writes them) and times ``sdtt score TRACES --bootstrap 0``
the same way, against Arrow's reader alone on that file.

Usage: PYTHONPATH=. python benchmarks/score_cli.py [--records 1000000] [--keep FILE]
       [--traces 100000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson
from _quick import add_quick

MAX_RSS_BYTES = 1 << 30
MAX_RATIO = 3.0
ARROW_FLOOR = """
import sys, pyarrow as pa, pyarrow.json as pj
options = pj.ReadOptions(block_size=1 << 20, use_threads=True)
carry = b""
with open(sys.argv[1], "rb") as handle:
    while chunk := handle.read(16 << 20):
        data = carry + chunk
        cut = data.rfind(b"\\n") + 1
        carry = data[cut:]
        pj.read_json(pa.BufferReader(data[:cut]), read_options=options)
if carry.strip():
    pj.read_json(pa.BufferReader(carry), read_options=options)
"""
"""The reader the command uses, alone: the same 16 MB blocks of whole lines, Arrow's
1 MB blocks on every core, each table dropped."""
FLOOR = """
import sys, orjson
with open(sys.argv[1], "rb", buffering=1 << 20) as handle:
    for line in handle:
        orjson.loads(line)
"""
MODELS = ("openai/gpt-4o-2024-08-06", "anthropic/claude-sonnet-4-5", "mock/chatty", "local/gemma")
PERSONAS = ("chitchat-5e1f9a7b", "chitchat-32b20fa3", "chitchat-0c4d2e11")


def write_judgements(path: Path, records: int, judges: int = 20) -> int:
    """About ``records`` judgement records as ``sdtt judge`` writes them: ``judges``
    judge runs (judge ids) of four models, each answering every pair in both orders;
    returns the file's size."""
    pairs = max(1, records // (2 * judges))
    with path.open("wb") as out:
        for judge in range(judges):
            model = MODELS[judge % len(MODELS)]
            judge_id = f"llm-paired:{model}#run-{judge:04d}"
            lines = []
            for pair in range(pairs):
                bot_model = MODELS[pair % 3]
                live_to = 3 + 3 * (pair % 4)
                for order, position in (("original", 1 + pair % 2), ("swapped", 2 - pair % 2)):
                    correct = (judge * 7 + pair * 3 + position) % 5 < 3
                    choice = "AB"[(position - 1) ^ (not correct)]
                    lines.append(
                        orjson.dumps(
                            {
                                "version": 1,
                                "study": "bench",
                                "judge_id": judge_id,
                                "judge_type": "llm",
                                "judge_model": model,
                                "pair_id": f"p{pair:05d}",
                                "pair_kind": "catch" if pair % 50 == 0 else "test",
                                "choice": choice,
                                "bot_position": position,
                                "correct": correct,
                                "witness": None,
                                "verdict": None,
                                "response_time_s": None,
                                "topic_answer": None,
                                "topic_correct": None,
                                "demographics": {},
                                "strategy": None,
                                "excluded": False,
                                "exclusion_reason": None,
                                "source": f"llm:{model}",
                                "shown": {
                                    "bot": {
                                        "persona": PERSONAS[pair % 3],
                                        "model": bot_model,
                                        "mode": "burst",
                                        "pseudo": None,
                                        "pseudo_turns": 0,
                                        "live_turns": None,
                                        "delays": None,
                                        "seed": None,
                                        "interrogator": "anthropic/claude-sonnet-4-5",
                                        "index": None,
                                    },
                                    "bot_conversation": f"bot-conv-{pair}",
                                    "human_conversation": f"human-conv-{pair}",
                                    "conversation": None,
                                    "speaker": None,
                                    "view": "last",
                                    "live_from": live_to - 2,
                                    "live_to": live_to,
                                    "topic": f"Topic number {pair % 40}?",
                                    "judge_kind": "paired",
                                    "order": order,
                                    "labels": None,
                                    "design_view": None,
                                    "kept_counts": None,
                                },
                                "notes": None,
                            }
                        )
                    )
            out.write(b"\n".join(lines) + b"\n")
    return path.stat().st_size


def write_traces(path: Path, traces: int, judges: int = 20) -> int:
    """``traces`` belief traces of paired items, as a reveal judge writes them (a belief
    after each of six turns); returns the file's size."""
    with path.open("wb") as out:
        lines = []
        for index in range(traces):
            judge, item = index % judges, index // judges
            human = (index * 7) % 3 != 0
            points = [
                {
                    "turn": turn,
                    "message": None,
                    "time_s": None,
                    "belief": float((index * 37 + turn * 11) % 101),
                    "ask": None,
                    "source": "slider",
                    "text": None,
                    "reason": None,
                }
                for turn in range(1, 7)
            ]
            record = {
                "version": 1,
                "study": "bench",
                "judge_id": f"judge-{judge:03d}",
                "judge_type": "human",
                "judge_model": None,
                "item_id": f"q{item:06d}",
                "item_kind": "pair",
                "pair_kind": "test",
                "target": "chat 1",
                "target_human": human,
                "bot_position": 2 if human else 1,
                "points": points,
                "excluded": False,
                "exclusion_reason": None,
                "source": "bench",
                "shown": {
                    "bot": {"model": MODELS[item % 3], "mode": "burst"},
                    "live_from": 1,
                    "live_to": 6,
                },
                "notes": None,
            }
            lines.append(orjson.dumps(record))
            if len(lines) == 10_000:
                out.write(b"\n".join(lines) + b"\n")
                lines = []
        if lines:
            out.write(b"\n".join(lines) + b"\n")
    return path.stat().st_size


def measure(
    command: list[str], stdout: Path, cwd: Path | None = None
) -> tuple[float, float, int, int]:
    """Wall seconds, CPU seconds, peak resident bytes and exit status of ``command``."""
    started = time.perf_counter()
    with stdout.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=cwd)
        _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    cpu = usage.ru_utime + usage.ru_stime
    return time.perf_counter() - started, cpu, usage.ru_maxrss * 1024, process.returncode


def main() -> None:
    """Generate the file, time the floor and the command, print both and the targets."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--keep", type=Path, help="write the file here and keep it")
    parser.add_argument(
        "--traces", type=int, default=0, help="also time a file of this many belief traces"
    )
    parser.add_argument("--write", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--write-traces", type=Path, help=argparse.SUPPRESS)
    add_quick(parser, records=4000, traces=500)
    args = parser.parse_args()
    if args.write:
        write_judgements(args.write, args.records)
        return
    if args.write_traces:
        write_traces(args.write_traces, args.traces)
        return
    with tempfile.TemporaryDirectory() as folder:
        path = args.keep or Path(folder) / "judgements.jsonl"
        if not path.exists():
            # In a process of its own: a forked child's peak counts the parent's pages
            # from before it started the command, so the parent stays small.
            subprocess.run(
                [sys.executable, __file__, "--write", str(path), "--records", str(args.records)],
                check=True,
            )
        size = path.stat().st_size
        with path.open("rb") as handle:
            records = sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))
        floor_s, floor_cpu, floor_rss, floor_code = measure(
            [sys.executable, "-c", FLOOR, str(path)], Path(folder) / "floor.out"
        )
        arrow_s, arrow_cpu, arrow_rss, arrow_code = measure(
            [sys.executable, "-c", ARROW_FLOOR, str(path)], Path(folder) / "arrow.out"
        )
        output = Path(folder) / "score.out"
        command = [sys.executable, "-m", "sdtt", "score", str(path), "--bootstrap", "0"]
        score_s, score_cpu, score_rss, score_code = measure(command, output)
        printed = output.read_text(encoding="utf-8", errors="replace")
        traced = _time_traces(args.traces, Path(folder)) if args.traces else None
    if floor_code or arrow_code or score_code or "pass rates" not in printed:
        sys.exit(
            f"a run failed (floors {floor_code}, {arrow_code}, score {score_code}):\n"
            f"{printed[-3000:]}"
        )
    ratio = score_s / arrow_s
    load = os.getloadavg()
    print(f"{records:,} judgement records, {size / 1e6:,.0f} MB; load average {load[0]:.2f}")
    for name, wall, cpu, rss in (
        ("floor (orjson, line by line)", floor_s, floor_cpu, floor_rss),
        ("floor (pyarrow, its blocks)", arrow_s, arrow_cpu, arrow_rss),
        ("sdtt score --bootstrap 0", score_s, score_cpu, score_rss),
    ):
        print(f"  {name:30} {wall:7.2f} s wall {cpu:7.2f} s CPU {rss / 2**20:7,.0f} MiB peak")
    print(
        f"  targets: peak under 1 GiB: {'met' if score_rss < MAX_RSS_BYTES else 'MISSED'}; "
        f"within {MAX_RATIO:g}x the pyarrow floor's time: {ratio:.2f}x, "
        f"{'met' if ratio <= MAX_RATIO else 'MISSED'} (CPU: {score_cpu / arrow_cpu:.2f}x; "
        f"against orjson: {score_s / floor_s:.2f}x wall, {score_cpu / floor_cpu:.2f}x CPU)"
    )
    if traced is not None:
        print(traced)


def _time_traces(traces: int, folder: Path) -> str:
    """Write ``traces`` belief traces in ``folder`` and time the command on them against
    Arrow's reader alone; the lines to print."""
    path = folder / "traces.jsonl"
    subprocess.run(
        [sys.executable, __file__, "--write-traces", str(path), "--traces", str(traces)],
        check=True,
    )
    arrow_s, arrow_cpu, arrow_rss, arrow_code = measure(
        [sys.executable, "-c", ARROW_FLOOR, str(path)], folder / "arrow-traces.out"
    )
    output = folder / "score-traces.out"
    command = [sys.executable, "-m", "sdtt", "score", str(path), "--bootstrap", "0"]
    score_s, score_cpu, score_rss, score_code = measure(command, output)
    printed = output.read_text(encoding="utf-8", errors="replace")
    if arrow_code or score_code or "calibration" not in printed:
        sys.exit(f"a run failed (floor {arrow_code}, score {score_code}):\n{printed[-3000:]}")
    ratio = score_s / arrow_s
    lines = [f"{traces:,} belief traces, {path.stat().st_size / 1e6:,.0f} MB"]
    for name, wall, cpu, rss in (
        ("floor (pyarrow, its blocks)", arrow_s, arrow_cpu, arrow_rss),
        ("sdtt score TRACES --bootstrap 0", score_s, score_cpu, score_rss),
    ):
        lines.append(
            f"  {name:31} {wall:7.2f} s wall {cpu:7.2f} s CPU {rss / 2**20:7,.0f} MiB peak"
        )
    lines.append(
        f"  targets: peak under 1 GiB: {'met' if score_rss < MAX_RSS_BYTES else 'MISSED'}; "
        f"within {MAX_RATIO:g}x the pyarrow floor's time: {ratio:.2f}x, "
        f"{'met' if ratio <= MAX_RATIO else 'MISSED'}"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
