"""How punctually the burst engine sends, with many sessions in one process (real clock).

Runs 1, 100 and 1,000 concurrent chat sessions against a fake model that answers every
call after a fixed latency (``trio.sleep``), each session with its own simulated partner
writing a message or two every few seconds. Every session writes its JSONL event log, as
in real use. Prints, per size:

- lateness of sends: actual send time minus the time the typing schedule set, p50, p99
  and max, in milliseconds;
- CPU seconds (``time.process_time``) per session-minute of chat;
- for comparison, how late a bare ``trio.sleep_until`` wakes up in the same process at
  the same time: the floor the operating system and trio set, which no engine can beat
  (on a shared, busy machine it dominates).

The target is a p99 lateness under 5 ms at 1,000 sessions. The largest size runs a
second time inside :func:`sdtt.engine.latency.low_latency_gc`: with default settings the
tail at 1,000 sessions is CPython's garbage collector pausing the whole process, not the
engine. Measured, not asserted: the numbers depend on the machine and its load.

    python benchmarks/engine_timing.py            # about 80 seconds
    python benchmarks/engine_timing.py --sizes 1 100 --seconds 10 --no-log
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _quick import add_quick

from sdtt.engine.events import Event, MessageSent
from sdtt.engine.latency import low_latency_gc
from sdtt.engine.schedule import preset_decides
from sdtt.engine.session import SessionSettings, open_session
from sdtt.models.base import GenerateConfig, Prompt
from sdtt.models.mock import MockModelAPI
from sdtt.personas.bot import PersonaBot
from sdtt.personas.prompt import BotPromptBuilder

REPLY = "Response: haha yeah\nResponse: same here honestly\nResponse: what about you?"
PARTNER_LINES = ("hey", "how's it going?", "not bad", "just got back from work", "lol", "nice")


@dataclass
class Collector:
    """An event sink keeping the lateness of every send."""

    lateness: list[float] = field(default_factory=list)

    def emit(self, event: Event) -> None:
        if isinstance(event, MessageSent):
            self.lateness.append(event.lateness)


def fake_bot(latency: float) -> PersonaBot:
    def answer(prompt: Prompt, config: GenerateConfig) -> str:
        return REPLY

    return PersonaBot(
        model=MockModelAPI(answer, name="mock/bench", delay=latency),
        prompts=BotPromptBuilder(instructions="be the person", history=""),
        resample=preset_decides,
    )


async def one_session(
    index: int, seconds: float, latency: float, sink: Collector, log_dir: Path | None
) -> None:
    rng = random.Random(index)
    settings = SessionSettings(t1=2.0, seed=index, max_messages=3)
    log = log_dir / f"s{index}.events.jsonl" if log_dir is not None else None
    # Stagger the starts as real participants would arrive.
    await trio.sleep(rng.uniform(0, 2.0))
    deadline = trio.current_time() + seconds
    with trio.move_on_at(deadline):
        async with open_session(fake_bot(latency), settings, sink=sink, log_path=log) as session:
            while True:
                for _ in range(rng.choice((1, 1, 2))):
                    await session.send_user_message(rng.choice(PARTNER_LINES))
                    await trio.sleep(rng.uniform(0.5, 2.0))
                await trio.sleep(rng.uniform(3.0, 8.0))


async def probe(seconds: float, lateness: list[float]) -> None:
    """The floor set by the OS and trio: how late a bare ``trio.sleep_until`` wakes up."""
    rng = random.Random(-1)
    end = trio.current_time() + seconds + 2.0
    while trio.current_time() < end:
        due = trio.current_time() + rng.uniform(0.05, 0.5)
        await trio.sleep_until(due)
        lateness.append(trio.current_time() - due)


def percentiles(values: list[float]) -> tuple[float, float, float]:
    """p50, p99 and max, in milliseconds."""
    ordered = sorted(values)
    cuts = statistics.quantiles(ordered, n=100, method="inclusive")
    return cuts[49] * 1000, cuts[98] * 1000, ordered[-1] * 1000


async def run_size(sessions: int, seconds: float, latency: float, log: bool) -> dict[str, float]:
    """Run ``sessions`` sessions for ``seconds`` and measure them."""
    sink = Collector()
    floor: list[float] = []
    with tempfile.TemporaryDirectory() as folder:
        log_dir = Path(folder) if log else None
        cpu = time.process_time()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(probe, seconds, floor)
            for index in range(sessions):
                nursery.start_soon(one_session, index, seconds, latency, sink, log_dir)
        cpu = time.process_time() - cpu
    if len(sink.lateness) < 2:
        raise SystemExit("too few messages were sent; run longer (--seconds)")
    p50, p99, worst = percentiles(sink.lateness)
    floor_p50, floor_p99, _ = percentiles(floor)
    return {
        "sessions": sessions,
        "sends": len(sink.lateness),
        "p50": p50,
        "p99": p99,
        "max": worst,
        "cpu_per_session_minute": cpu / (sessions * seconds / 60),
        "floor_p50": floor_p50,
        "floor_p99": floor_p99,
    }


COLUMNS = ("sessions", "sends", "p50 ms", "p99 ms", "max ms", "CPU s/sess-min", "bare p50/p99 ms")
ROW = "{:>8} {:>7} {:>8} {:>8} {:>8} {:>15} {:>16}"


def main() -> None:
    """Run every size and print one row each."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 100, 1000])
    parser.add_argument("--seconds", type=float, default=15.0, help="chat time per size")
    parser.add_argument("--latency", type=float, default=1.0, help="fake model latency (s)")
    parser.add_argument("--no-log", action="store_true", help="don't write event logs")
    parser.add_argument(
        "--no-tuned",
        action="store_true",
        help="skip the extra run of the largest size with low_latency_gc()",
    )
    add_quick(parser, sizes=[10], seconds=6.0, latency=0.2)
    args = parser.parse_args()
    print(
        f"burst engine timing, real clock: {args.seconds:g} s of chat per size, model latency "
        f"{args.latency:g} s, event logs {'off' if args.no_log else 'on'}"
    )
    print(ROW.format(*COLUMNS))
    runs = [(size, False) for size in args.sizes]
    if not args.no_tuned:
        runs.append((max(args.sizes), True))
    for size, tuned in runs:
        if tuned:
            print("with sdtt.engine.latency.low_latency_gc():")
            with low_latency_gc():
                row = trio.run(run_size, size, args.seconds, args.latency, not args.no_log)
        else:
            row = trio.run(run_size, size, args.seconds, args.latency, not args.no_log)
        print(
            ROW.format(
                f"{row['sessions']:.0f}",
                f"{row['sends']:.0f}",
                f"{row['p50']:.3f}",
                f"{row['p99']:.3f}",
                f"{row['max']:.3f}",
                f"{row['cpu_per_session_minute']:.4f}",
                f"{row['floor_p50']:.3f}/{row['floor_p99']:.3f}",
            ),
            flush=True,
        )
        if size >= 1000:
            verdict = "met" if row["p99"] < 5.0 else "MISSED"
            print(f"target p99 < 5 ms at {size} sessions: {verdict}")


if __name__ == "__main__":
    main()
