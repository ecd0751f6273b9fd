"""How fast ``sdtt generate`` writes many chains, and what prefix reuse saves.

**Concurrency.** 20 chains x 10 topics (3 turns each) run against a local fake
OpenAI-compatible server (``tests/fakes``) that answers every call after a fixed latency
with exactly the rounds asked for, so each topic takes one call and each chain ten calls
in a row. Printed: the wall time, the sequential baseline (every call one after another:
the sum of the calls' latencies), and the critical-path bound (the slowest chain's calls
in a row; with fewer call slots than chains, the total work divided by the slots if that
is longer). The target is a wall time within 1.2x of the bound. Every chain writes its
JSONL file as in real use.

**Where the CPU goes.** On a small machine the bound can be the CPU, not the server: the
same chains against an instant server give the CPU floor. To show how much of it is ours,
the run prints this process's CPU seconds per call, the fake server's (its own process,
competing for the same cores), and those of the bare SDK making the same calls (the same
request bodies, concurrency and server, no sdtt code): the part of the floor sdtt cannot
remove. All are measured in the same run, so a loaded machine shifts them together.
Last, the bare SDK makes the same calls against the server with the latency, for its own
wall time against the critical path.

**Prefix reuse.** The prompts of a chain only grow by appending, so a provider's prefix
cache (OpenAI's automatic one, Anthropic's cache marks, llama.cpp's KV cache) can serve
everything but the new part. For the fake server run this prints the prompt words sent
and the part shared with the chain's previous call. Then one small chain (2 topics x 2
turns, ping-pong, a 10-turn history) runs on ``local/gemma-3-270m`` twice, reusing the KV
cache and evaluating every prompt from scratch, and prints the prompt tokens each way.

Run from the repository root; about a minute without the local part::

    python benchmarks/generation_throughput.py [--latency 1.0] [--sequential] [--skip-local]

Measured, not asserted: the numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import multiprocessing
import re
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import trio
from _quick import add_quick

from sdtt.errors import SdttError
from sdtt.generate.chain import ChainSettings, ChainSpec, topic_targets
from sdtt.generate.chainfile import read_chain
from sdtt.generate.runner import RunReport, run_chains
from sdtt.models.model import get_model
from sdtt.personas.persona import Persona
from sdtt.personas.store import DEFAULT_PERSONA, find_persona
from tests.fakes.openai_fake import FakeOpenAIServer

TOPICS = (
    "weekend plans",
    "a show you are watching",
    "cooking at home",
    "the weather lately",
    "old school friends",
    "a trip you want to take",
    "pets",
    "music you have on repeat",
    "work or classes this week",
    "something funny that happened",
)
_ROUNDS = re.compile(r"(\d+) (?:more )?rounds?")


def reply(body: Mapping[str, Any]) -> str:
    """Exactly the rounds the task asks for, so every topic takes one call."""
    task = str(body["messages"][-1]["content"])
    found = _ROUNDS.findall(task)
    rounds = int(found[-1]) if found else 1
    lines = []
    for index in range(rounds):
        lines.append(f"User: [2030-01-01 00:00:00] so what about part {index}?")
        lines.append("Response: [2030-01-01 00:00:00] hmm not sure tbh")
        lines.append("Response: [2030-01-01 00:00:00] maybe later lol")
    return "\n".join(lines)


def chain_specs(chains: int, turns_per_topic: int, model: str) -> list[ChainSpec]:
    """``chains`` chains over all ten topics."""
    return [
        ChainSpec(
            persona=DEFAULT_PERSONA,
            model=model,
            seed=seed,
            topics=topic_targets(TOPICS, turns_per_topic * len(TOPICS), turns_per_topic),
        )
        for seed in range(chains)
    ]


async def run_against_fake(
    persona: Persona, specs: list[ChainSpec], out: Path, base_url: str, slots: int
) -> tuple[RunReport, float]:
    """Run the chains against the fake server; return the report and the wall time."""
    async with get_model(specs[0].model, base_url=base_url, max_concurrency=slots) as model:
        started = time.perf_counter()
        report = await run_chains(
            specs, out, personas=lambda name: persona, models=lambda name: model
        )
        return report, time.perf_counter() - started


def request_bodies(report: RunReport) -> list[dict[str, Any]]:
    """The chat completions request of every call of a finished run, as sent."""
    from sdtt.generate.chainfile import rebuild_prompt
    from sdtt.models.base import GenerateConfig
    from sdtt.models.openai_api import OpenAIAPI

    api = OpenAIAPI("bench-fake", base_url="http://127.0.0.1:1/v1")
    bodies = []
    for chain in report.chains:
        for index, call in enumerate(read_chain(chain.path).calls):
            config = GenerateConfig(**call.config)
            bodies.append(api.request(rebuild_prompt(chain.path, index), config))
    return bodies


async def bare_sdk(bodies: list[dict[str, Any]], base_url: str, slots: int) -> float:
    """The same requests through the SDK alone, ``slots`` at a time; the wall time.

    Sent and read as sdtt sends and reads them (the SDK's generic post, the answer as
    plain JSON), so the difference to a full run is sdtt's own work."""
    from openai import AsyncOpenAI

    # A connection the busy fake server drops is tried again, as sdtt's policy would.
    client = AsyncOpenAI(api_key="not-needed", base_url=base_url, max_retries=3)
    limiter = trio.CapacityLimiter(slots)

    async def one(body: dict[str, Any]) -> None:
        async with limiter:
            await client.post("/chat/completions", body=body, cast_to=object)

    started = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for body in bodies:
            nursery.start_soon(one, body)
    wall = time.perf_counter() - started
    await client.close()
    return wall


def cpu_seconds(measure: Any) -> tuple[Any, float]:
    """``measure()``'s result and this process's CPU seconds while it ran."""
    started = time.process_time()
    result = measure()
    return result, time.process_time() - started


def shared_prefix_words(previous: str, current: str) -> int:
    """Words of ``current`` at its start that ``previous`` had too."""
    count = 0
    for a, b in zip(previous.split(), current.split(), strict=False):
        if a != b:
            break
        count += 1
    return count


def prefix_report(report: RunReport) -> tuple[int, int]:
    """Prompt words sent over all calls, and the words shared with the previous call."""
    from sdtt.generate.chainfile import rebuild_prompt

    sent = shared = 0
    for chain in report.chains:
        calls = read_chain(chain.path).calls
        previous = ""
        for index in range(len(calls)):
            prompt = rebuild_prompt(chain.path, index)
            text = f"{prompt.system_text()}\n{prompt.user_text()}"
            sent += len(text.split())
            shared += shared_prefix_words(previous, text)
            previous = text
    return sent, shared


def _serve(latency: float, urls: Any, stop: Any, asked: Any) -> None:
    """Run the fake server in a child process until ``stop`` is set; on each request
    through ``asked``, report the CPU seconds the server process has used so far."""
    with FakeOpenAIServer(reply=reply, latency=latency) as server:
        urls.put(server.base_url)
        while not stop.wait(0.05):
            if asked.poll():
                asked.recv()
                asked.send(time.process_time())


class ServerProcess:
    """A fake server in its own process; ``cpu()`` asks it for its CPU seconds so far."""

    def __init__(self, base_url: str, pipe: Any) -> None:
        self.base_url = base_url
        self._pipe = pipe

    def cpu(self) -> float:
        """The CPU seconds the server process has used so far."""
        self._pipe.send("cpu")
        return float(self._pipe.recv())


@contextmanager
def server_process(latency: float) -> Iterator[ServerProcess]:
    """A fake OpenAI-compatible server in its own process (so its work does not compete
    with the generator for this process's interpreter lock)."""
    context = multiprocessing.get_context("fork")
    urls = context.Queue()
    stop = context.Event()
    ours, theirs = context.Pipe()
    child = context.Process(target=_serve, args=(latency, urls, stop, theirs), daemon=True)
    child.start()
    try:
        yield ServerProcess(urls.get(timeout=30), ours)
    finally:
        stop.set()
        child.join(timeout=10)


@contextmanager
def fake_server(latency: float) -> Iterator[str]:
    """A fake server in its own process; yields its base URL."""
    with server_process(latency) as server:
        yield server.base_url


def concurrency_part(args: argparse.Namespace, persona: Persona) -> None:
    """Wall time against the sequential baseline and the critical-path bound."""
    specs = chain_specs(args.chains, args.turns_per_topic, "openai/bench-fake")
    slots = args.slots or args.chains
    with tempfile.TemporaryDirectory() as folder:
        with server_process(0.0) as server:
            instant = server.base_url
            # A first chain warms up what is paid once per process (SDK import, client);
            # the same chains against an instant server then measure the CPU floor.
            trio.run(run_against_fake, persona, specs[:1], Path(folder) / "warm", instant, 1)
            served = server.cpu()
            (floor_report, floor), client_cpu = cpu_seconds(
                lambda: trio.run(
                    run_against_fake, persona, specs, Path(folder) / "floor", instant, slots
                )
            )
            server_cpu = server.cpu() - served
            bodies = request_bodies(floor_report)
            served = server.cpu()
            sdk_wall, sdk_cpu = cpu_seconds(lambda: trio.run(bare_sdk, bodies, instant, slots))
            sdk_server_cpu = server.cpu() - served
        with fake_server(args.latency) as base_url:
            report, wall = trio.run(
                run_against_fake, persona, specs, Path(folder) / "run", base_url, slots
            )
            sdk_at_latency = trio.run(bare_sdk, bodies, base_url, slots)
            one_by_one = None
            if args.sequential:
                _, one_by_one = trio.run(
                    run_against_fake, persona, specs, Path(folder) / "seq", base_url, 1
                )
        failed = [chain for chain in report.chains if chain.status != "done"]
        if failed:
            raise SystemExit(f"{len(failed)} chain(s) failed: {failed[0].error}")
        # Chains keep no latencies (they are not reproducible): the fake answers each
        # call after args.latency seconds, so one by one the calls take that many times.
        counts = [len(read_chain(chain.path).calls) for chain in report.chains]
        calls = sum(counts)
        sequential = calls * args.latency
        in_a_row = max(counts)
        path = max(in_a_row, calls / slots) * args.latency
        bound = max(path, floor)
        print(
            f"\n{args.chains} chains x {len(TOPICS)} topics x {args.turns_per_topic} turns: "
            f"{calls} calls, {in_a_row} in a row per chain, server latency "
            f"{args.latency:.3f} s, {slots} call slots"
        )
        print(f"  wall time                      {wall:8.2f} s")
        print(
            f"  sequential baseline            {sequential:8.2f} s   "
            f"(the calls one by one; {sequential / wall:.1f}x the wall time)"
        )
        if one_by_one is not None:
            print(f"  measured one call at a time    {one_by_one:8.2f} s")
        print(
            f"  critical path                  {path:8.2f} s   "
            "(a chain's calls in a row x the server latency)"
        )
        print(
            f"  CPU floor                      {floor:8.2f} s   "
            "(the same run against an instant server)"
        )
        per_call = 1000 / len(bodies)
        print(
            f"    this process's CPU           {client_cpu:8.2f} s   "
            f"({client_cpu * per_call:.1f} ms a call); the server's {server_cpu:.2f} s "
            f"({server_cpu * per_call:.1f} ms a call)"
        )
        print(
            f"  bare SDK, same calls           {sdk_wall:8.2f} s   "
            f"(CPU {sdk_cpu * per_call:.1f} ms a call here, {sdk_server_cpu * per_call:.1f} "
            "ms in the server: the floor without sdtt)"
        )
        print(
            f"  floor / bare SDK               {floor / sdk_wall:8.2f}     "
            f"(CPU {client_cpu / sdk_cpu:.2f}x the bare SDK's)"
        )
        print(
            f"  bare SDK at this latency       {sdk_at_latency:8.2f} s   "
            f"({sdk_at_latency / path:.2f}x the critical path; its calls do not take turns)"
        )
        verdict = "within" if wall <= 1.2 * bound else "NOT within"
        print(
            f"  wall / bound                   {wall / bound:8.2f}     "
            f"(bound = the larger of the two; {verdict} the 1.2x target)"
        )
        mean = sequential / calls
        print(
            f"  mean call latency seen         {mean:8.3f} s   "
            f"(server {args.latency:.3f} s + client, network and queueing)"
        )
        sent, shared = prefix_report(report)
        print(
            f"  prompt words sent              {sent:8d}     of which {shared} "
            f"({100 * shared / sent:.0f}%) repeat the chain's previous prompt's start:"
        )
        print("                                           a prefix cache serves those")


async def run_local(persona: Persona, out: Path, prefix_reuse: bool) -> tuple[RunReport, float]:
    """One small chain on the embedded model."""
    spec = ChainSpec(
        persona=DEFAULT_PERSONA,
        model="local/gemma-3-270m",
        mode="pingpong",
        seed=1,
        topics=topic_targets(TOPICS, 4, 2),
        settings=ChainSettings(style="lines", history_turns=10, max_tokens=48),
    )
    async with get_model(spec.model, n_ctx=4096, prefix_reuse=prefix_reuse) as model:
        started = time.perf_counter()
        report = await run_chains(
            [spec], out, personas=lambda name: persona, models=lambda name: model
        )
        return report, time.perf_counter() - started


def local_part(persona: Persona) -> None:
    """Prompt tokens evaluated with and without the KV cache's prefix reuse."""
    print("\nlocal/gemma-3-270m, 1 chain, 2 topics x 2 ping-pong turns, 10-turn history:")
    print(f"  {'':22}{'calls':>6}{'prompt tok':>12}{'from cache':>12}{'evaluated':>11}{'s':>8}")
    for reuse in (True, False):
        with tempfile.TemporaryDirectory() as folder:
            try:
                report, wall = trio.run(run_local, persona, Path(folder), reuse)
            except SdttError as error:
                print(f"  skipped: {error}")
                return
            chain = report.chains[0]
            usage = chain.usage
            label = "with prefix reuse" if reuse else "without (from scratch)"
            print(
                f"  {label:22}{chain.calls:>6}{usage.input_tokens:>12}"
                f"{usage.cached_input_tokens:>12}"
                f"{usage.input_tokens - usage.cached_input_tokens:>11}{wall:>8.1f}"
            )


def main() -> None:
    """Run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chains", type=int, default=20)
    parser.add_argument("--turns-per-topic", type=int, default=3)
    parser.add_argument(
        "--latency", type=float, default=1.0, help="seconds the server takes per call"
    )
    parser.add_argument("--slots", type=int, help="calls in flight (default: one per chain)")
    parser.add_argument(
        "--sequential", action="store_true", help="also run one call at a time, for real"
    )
    parser.add_argument("--skip-local", action="store_true", help="skip the embedded model")
    add_quick(parser, chains=2, turns_per_topic=1, latency=0.05)
    args = parser.parse_args()
    persona = find_persona(DEFAULT_PERSONA)
    concurrency_part(args, persona)
    if not args.skip_local:
        local_part(persona)


if __name__ == "__main__":
    main()
