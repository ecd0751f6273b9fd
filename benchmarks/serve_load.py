"""Load test of ``sdtt serve``: N rooms of simulated participants over real websockets.

Starts ``sdtt serve`` on localhost (a temporary study with the ``mock/chatty`` bot and
the paper delays), plays ``--rooms`` rooms at once (``--human-share`` of them with two
participants, the rest with the bot), and prints:

- how many rooms were live at once at the peak (each from its creation to its verdict);
- delivery lateness, p50/p99: for bot messages the engine's planned vs actual send
  (``message_sent.lateness``); for human witness messages the server's receipt (the time
  it stored the message) to the interrogator's receipt, and, stricter, the witness's send
  to the interrogator's receipt (both ends in this process), each less the time the
  typing-indicator policy held the answer on purpose (event ``answer_held``); for
  questions to a human witness, the server's receipt to the witness's; beside the floor
  of a bare ``trio.sleep_until`` loop measured in the same run, on the same machine. Human
  lateness and the floor are also given for just the time people were still arriving:
  on a small machine the servers are busiest then, and this process's own pauses (it
  opens every websocket) count most in what it measures;
- the floor inside each server: a heartbeat in its own trio loop
  (``benchmarks/_heartbeat.py``) notes how late it wakes every 10 ms, which is what the
  server's own timers met;
- the server's CPU time against the wall time, and how long its threads waited for a
  CPU they were ready to use (the kernel's run-queue delay, ``/proc/PID/schedstat``),
  with the machine's load average before and after: a server whose loop woke late while
  it used most of a core and waited little is slow; one that woke late while it waited
  for a CPU was starved by the machine;
- the server's CPU seconds per room-minute of chat;
- lost and duplicated messages (every stored message against what each browser got;
  both must be 0);
- how many websockets a server too busy to answer reset on opening (each is opened
  again a second later, as the page does).

Participants open the study link spread evenly over ``--arrival-seconds`` (as they do
when a study is published; 0 sends everyone at once, a join stampede rather than a
delivery test). Bounded and self-stopping: every participant finishes after ``--turns``
turns, and the whole run is cut at ``--limit`` seconds. Only 127.0.0.1 is contacted.

``--store postgresql --processes 2`` measures the multi-process path: a temporary
PostgreSQL server (Debian's binaries, as the tests use) holds the study, ``--processes``
servers share it and participants open the link on each in turn, so a human witness and
their interrogator are often on different processes. ``--quick`` is a small run for the
test suite (tests/serve/test_serve_load.py); it exits 1 if a message was lost.

Usage: PYTHONPATH=. python benchmarks/serve_load.py [--rooms 300] [--turns 4]
  [--arrival-seconds 15] [--store sqlite|postgresql] [--processes 1] [--quick]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import trio
from _quick import add_quick

from sdtt.engine.latency import low_latency_gc
from sdtt.serve.wsclient import WebSocketClient

SPEC = """
[study]
name = "load"
turns = {turns}
human_witness_share = {share}
consent = "load test"
instructions = "load test"
completion_code = "LOAD"

[lobby]
timeout = 30
on_timeout = "bot"
{storage}
[chat]
t1 = 1
min_interval = 0.2

[conditions]
models = ["mock/chatty"]
personas = ["chitchat-32b20fa3"]
delays = ["paper"]
"""


OPEN_ATTEMPTS = 10


@dataclass
class Seen:
    """What one simulated browser received."""

    pid: str
    role: str = ""
    ids: list[int] = field(default_factory=list)
    arrivals: dict[int, float] = field(default_factory=dict)
    sent: dict[str, float] = field(default_factory=dict)
    """Text of each message this participant sent → when it was sent."""
    done: bool = False
    retries: int = 0
    """Times opening the websocket failed and was tried again (as the page does)."""


def connect(url: str, path: Path) -> Any:
    """The study's database, queried with ``?`` placeholders either way."""
    if not url:
        return sqlite3.connect(path)
    import psycopg

    class Postgres:
        def __init__(self) -> None:
            self.db = psycopg.connect(url, autocommit=True)

        def execute(self, sql: str, args: tuple[Any, ...] = ()) -> Any:
            sql = sql.replace("?", "%s").replace("NOT NULL", "IS NOT NULL")
            return self.db.execute(sql, args).fetchall()

    return Postgres()


def free_port() -> int:
    """A localhost port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


HEARTBEAT = Path(__file__).with_name("_heartbeat.py")


def start_server(spec: Path, port: int, heartbeat: Path) -> subprocess.Popen[bytes]:
    """``sdtt serve SPEC`` on 127.0.0.1, with a heartbeat in its loop writing to
    ``heartbeat``, once it answers."""
    process = subprocess.Popen(
        [sys.executable, str(HEARTBEAT), "serve", str(spec), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "SDTT_HEARTBEAT": str(heartbeat)},
    )
    for _ in range(300):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/static/style.css", timeout=2).close()
            return process
        except OSError:
            if process.poll() is not None:
                raise SystemExit("sdtt serve did not start") from None
            time.sleep(0.2)
    process.kill()
    raise SystemExit("sdtt serve did not start")


def stop_server(process: subprocess.Popen[bytes]) -> None:
    """Stop the server."""
    process.terminate()
    process.wait(timeout=30)


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0-100) of ``values`` (nan when empty)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def peak(spans: list[tuple[float, float]]) -> int:
    """The most intervals open at one moment."""
    edges = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    live = most = 0
    for _, step in edges:
        live += step
        most = max(most, live)
    return most


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def waited_seconds(pid: int) -> float:
    """Seconds the process's threads spent ready to run but waiting for a CPU so far
    (the run-queue delay of ``/proc/PID/task/*/schedstat``; 0 where it is not kept)."""
    total = 0
    for stat in Path(f"/proc/{pid}/task").glob("*/schedstat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            total += int(stat.read_text().split()[1])
    return total / 1e9


def heartbeats(path: Path) -> list[tuple[float, float]]:
    """(wall time, lateness in seconds) of each heartbeat a server wrote to ``path``."""
    if not path.exists():
        return []
    beats = []
    for line in path.read_text().splitlines():
        when, *late = line.split()
        beats += [(float(when), float(ms) / 1000) for ms in late]
    return beats


async def open_socket(port: int, seen: Seen) -> WebSocketClient:
    """The participant's websocket; a server too busy to answer in time resets it, and
    the page tries again a second later (counted: a busy server's first sign)."""
    while True:
        try:
            return await WebSocketClient.connect("127.0.0.1", port, "/ws/load")
        except (OSError, trio.BrokenResourceError, ConnectionError):
            seen.retries += 1
            if seen.retries >= OPEN_ATTEMPTS:
                raise
            await trio.sleep(1.0)


async def participant(port: int, pid: str, seen: Seen, rng: random.Random, turns: int) -> None:
    client = await open_socket(port, seen)
    await client.send({"type": "join", "pid": pid})
    turn = 0
    awaiting = False  # (interrogator) a question is out and its answer not yet begun

    async def say(text: str) -> None:
        seen.sent[text] = time.time()
        await client.send({"type": "send", "text": text})

    async def later(delay: float, text: str) -> None:
        # A person's pause before writing, off the receive loop: frames that come
        # meanwhile are read (and timed) as they arrive.
        await trio.sleep(delay)
        await say(text)

    try:
        async with trio.open_nursery() as pauses:
            while True:
                frame = await client.receive()
                if frame is None:
                    break
                kind = frame["type"]
                if kind == "phase" and frame["phase"] == "consent":
                    await client.send({"type": "consent"})
                elif kind == "phase" and frame["phase"] == "chat":
                    seen.role = frame["role"]
                    if seen.role == "interrogator":
                        turn = 1
                        await say(f"hi from {pid}, turn {turn}")
                elif kind == "message":
                    seen.ids.append(frame["id"])
                    seen.arrivals[frame["id"]] = time.time()
                    if frame["from"] == "you" and seen.role == "interrogator":
                        # The question is in the chat: the first of the witness's
                        # messages shown after it is its answer. (Counted from sending
                        # instead, a witness message shown just after the question was
                        # sent started another turn the server did not count, and the
                        # chat waited for a question that never came.)
                        awaiting = True
                    elif frame["from"] == "them":
                        if seen.role == "witness":
                            text = f"reply {frame['id']} from {pid}"
                            pauses.start_soon(later, rng.uniform(0.5, 1.5), text)
                        elif seen.role == "interrogator" and awaiting and turn < turns:
                            # The first message of each answer starts the next turn; the
                            # rest of that answer, come during the pause, starts none.
                            awaiting = False
                            turn += 1
                            text = f"next {turn} from {pid}"
                            pauses.start_soon(later, rng.uniform(1.0, 2.0), text)
                elif kind == "phase" and frame["phase"] == "verdict":
                    await client.send(
                        {"type": "verdict", "human": "no", "confidence": 50, "reason": "load"}
                    )
                elif kind == "phase" and frame["phase"] == "done":
                    seen.done = True
                    break
            pauses.cancel_scope.cancel()  # a reply still waiting to be written is dropped
    finally:
        await client.aclose()


async def floor(lateness: list[tuple[float, float]], stop: trio.Event) -> None:
    """A bare trio.sleep_until loop: the lateness any timer has on this machine now
    (each with its wall time)."""
    due = trio.current_time()
    while not stop.is_set():
        due += 0.01
        await trio.sleep_until(due)
        lateness.append((time.time(), trio.current_time() - due))


async def play(
    ports: list[int], participants: int, turns: int, arrival: float, limit: float
) -> tuple[list[Seen], list[tuple[float, float]], float, float]:
    """Every participant's view, the floor's lateness, when the last one opened the link
    (wall time) and the seconds it all took."""
    seen = [Seen(f"L{i:04d}") for i in range(participants)]
    gap = arrival / participants
    floor_lateness: list[tuple[float, float]] = []
    stop = trio.Event()
    started = time.monotonic()
    arrived = time.time() + arrival  # (if the limit cuts the arrivals short)
    with trio.move_on_after(limit):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(floor, floor_lateness, stop)
            async with trio.open_nursery() as players:
                for index, one in enumerate(seen):
                    rng = random.Random(index)
                    port = ports[index % len(ports)]  # each process in turn
                    players.start_soon(participant, port, one.pid, one, rng, turns)
                    await trio.sleep(gap)
                arrived = time.time()
            stop.set()
    return seen, floor_lateness, arrived, time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=300)
    parser.add_argument("--turns", type=int, default=4, help="turns per chat (default 4)")
    parser.add_argument(
        "--arrival-seconds",
        type=float,
        default=15.0,
        help="participants open the link spread over this many seconds (default 15)",
    )
    parser.add_argument("--human-share", type=float, default=0.2)
    parser.add_argument("--limit", type=float, default=600.0, help="seconds at most")
    parser.add_argument("--store", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument(
        "--processes", type=int, default=1, help="server processes (postgresql only)"
    )
    add_quick(parser, rooms=10, turns=2, arrival_seconds=2.0, limit=120.0)
    args = parser.parse_args()
    if args.processes > 1 and args.store != "postgresql":
        parser.error("--processes above 1 needs --store postgresql")
    with contextlib.ExitStack() as stack:
        url = ""
        if args.store == "postgresql":
            from tests.serve.conftest import postgres_server

            url = stack.enter_context(postgres_server())
        run(args, url)


def run(args: argparse.Namespace, url: str) -> None:
    """Play the load and print the figures (``url``: a PostgreSQL study, else SQLite)."""
    humans = round(args.rooms * args.human_share)
    participants = args.rooms + humans
    folder = Path(tempfile.mkdtemp(prefix="sdtt-load-"))
    spec = folder / "load.toml"
    storage = f'\n[storage]\nurl = "{url}"\n' if url else ""
    spec.write_text(SPEC.format(turns=args.turns, share=args.human_share, storage=storage))
    ports = [free_port() for _ in range(args.processes)]
    beat_files = [folder / f"heartbeat-{n}.txt" for n in range(args.processes)]
    load_before = os.getloadavg()
    servers = [start_server(spec, port, beat) for port, beat in zip(ports, beat_files, strict=True)]
    try:
        cpu_before = sum(cpu_seconds(server.pid) for server in servers)
        waited_before = sum(waited_seconds(server.pid) for server in servers)
        # The simulated people's own pauses count as lateness: full scans of their many
        # objects by the garbage collector paused this process for up to 150 ms.
        with low_latency_gc():
            seen, floor_lateness, arrived, wall = trio.run(
                play, ports, participants, args.turns, args.arrival_seconds, args.limit
            )
        cpu = sum(cpu_seconds(server.pid) for server in servers) - cpu_before
        waited = sum(waited_seconds(server.pid) for server in servers) - waited_before
    finally:
        for server in servers:
            stop_server(server)
    load_after = os.getloadavg()
    beats = [beat for path in beat_files for beat in heartbeats(path)]

    db = connect(url, folder / "load.sqlite3")
    rooms = {
        row[0]: row
        for row in db.execute("SELECT id, witness, interrogator, witness_pid FROM rooms")
    }
    spans = [
        (datetime.fromisoformat(created).timestamp(), datetime.fromisoformat(ended).timestamp())
        for created, ended in db.execute("SELECT created, ended FROM rooms WHERE ended NOT NULL")
    ]
    by_pid = {one.pid: one for one in seen}
    lost = duplicated = 0
    human_lateness: list[float] = []
    human_arriving: list[float] = []
    human_after: list[float] = []
    """human_lateness split: stored while people were still opening the link, and after."""
    human_end_to_end: list[float] = []
    question_lateness: list[float] = []
    # The typing-indicator policy holds a quick answer from the interrogator on purpose
    # (event answer_held, "for" seconds): that wait is the policy, not the server's delay.
    holds: dict[tuple[str, int], float] = {}
    for room_id, data in db.execute("SELECT room, data FROM events WHERE kind = 'answer_held'"):
        held = data if isinstance(data, dict) else json.loads(data)
        holds[(room_id, held["seq"])] = held["for"]
    chat_minutes = 0.0
    for room_id, witness, interrogator, witness_pid in rooms.values():
        stored = list(
            db.execute(
                "SELECT seq, sender, text, time FROM messages WHERE room = ? ORDER BY seq",
                (room_id,),
            )
        )
        people = [interrogator] + ([witness_pid] if witness_pid else [])
        for pid in people:
            got = by_pid[pid].ids
            duplicated += len(got) - len(set(got))
            lost += len({row[0] for row in stored} - set(got))
        for seq, sender, text, stamp in stored:
            if witness == "human" and sender == "witness":
                arrival = by_pid[interrogator].arrivals.get(seq)
                if arrival is not None:
                    hold = holds.get((room_id, seq), 0.0)
                    stored_at = datetime.fromisoformat(stamp).timestamp()
                    human_lateness.append(arrival - stored_at - hold)
                    part = human_arriving if stored_at <= arrived else human_after
                    part.append(human_lateness[-1])
                    human_end_to_end.append(arrival - by_pid[witness_pid].sent[text] - hold)
            elif witness == "human" and sender == "interrogator":
                arrival = by_pid[witness_pid].arrivals.get(seq)
                if arrival is not None:
                    stored_at = datetime.fromisoformat(stamp).timestamp()
                    question_lateness.append(arrival - stored_at)
        if stored:
            first = datetime.fromisoformat(stored[0][3]).timestamp()
            last = datetime.fromisoformat(stored[-1][3]).timestamp()
            chat_minutes += (last - first) / 60
    bot_lateness = [
        json.loads(data)["lateness"]
        for (data,) in db.execute("SELECT data FROM events WHERE kind = 'engine'")
        if json.loads(data).get("type") == "message_sent"
    ]
    finished = sum(1 for one in seen if one.done)
    ms = 1000.0
    print(
        f"rooms {len(rooms)} ({humans} with a human witness), participants {participants}, "
        f"finished {finished}, wall {wall:.1f} s"
    )
    print(f"store {args.store}, {args.processes} server process(es)")
    print(f"rooms live at once: {peak(spans)} at the peak")
    floor_all = [late for _, late in floor_lateness]
    floor_arriving = [late for when, late in floor_lateness if when <= arrived]
    print(
        f"floor (bare trio.sleep_until, same run): p50 {percentile(floor_all, 50) * ms:.2f} ms, "
        f"p99 {percentile(floor_all, 99) * ms:.2f} ms; while people were arriving "
        f"p99 {percentile(floor_arriving, 99) * ms:.2f} ms"
    )
    server_all = [late for _, late in beats]
    server_arriving = [late for when, late in beats if when <= arrived]
    print(
        f"floor inside the server (its loop's heartbeat, every 10 ms): "
        f"p50 {percentile(server_all, 50) * ms:.2f} ms, p99 {percentile(server_all, 99) * ms:.2f} "
        f"ms, most {max(server_all, default=float('nan')) * ms:.0f} ms; while people were "
        f"arriving p99 {percentile(server_arriving, 99) * ms:.2f} ms (n={len(server_all)})"
    )
    cores = os.cpu_count() or 1
    print(
        f"server CPU {cpu:.1f} s over {wall:.1f} s wall ({cpu / wall / args.processes:.0%} of a "
        f"core per process); ready but waiting for a CPU {waited:.1f} s, its threads' waits "
        f"summed ({waited / wall / args.processes:.0%} of the wall time per process)"
    )
    print(
        f"machine: {cores} cores, load average (1 min) {load_before[0]:.2f} before, "
        f"{load_after[0]:.2f} after"
    )
    print(
        f"bot messages, planned vs sent: p50 {percentile(bot_lateness, 50) * ms:.2f} ms, "
        f"p99 {percentile(bot_lateness, 99) * ms:.2f} ms (n={len(bot_lateness)})"
    )
    human_p50, human_p99 = percentile(human_lateness, 50), percentile(human_lateness, 99)
    print(
        f"human messages, server receipt to partner (less the indicator's hold): "
        f"p50 {human_p50 * ms:.2f} ms, p99 {human_p99 * ms:.2f} ms (n={len(human_lateness)}, "
        f"{len(holds)} held)"
    )
    print(
        f"  of which while people were arriving: p99 {percentile(human_arriving, 99) * ms:.2f} ms "
        f"(n={len(human_arriving)}); after: p99 {percentile(human_after, 99) * ms:.2f} ms "
        f"(n={len(human_after)})"
    )
    ask_p50, ask_p99 = percentile(question_lateness, 50), percentile(question_lateness, 99)
    print(
        f"questions to a human witness, server receipt to witness: p50 {ask_p50 * ms:.2f} ms, "
        f"p99 {ask_p99 * ms:.2f} ms (n={len(question_lateness)})"
    )
    e2e_p50, e2e_p99 = percentile(human_end_to_end, 50), percentile(human_end_to_end, 99)
    print(
        f"human messages, witness's send to partner (less the hold): p50 {e2e_p50 * ms:.2f} ms, "
        f"p99 {e2e_p99 * ms:.2f} ms"
    )
    print(
        f"server CPU: {cpu:.1f} s for {chat_minutes:.1f} room-minutes = "
        f"{cpu / chat_minutes if chat_minutes else float('nan'):.3f} s per room-minute"
    )
    retried = sum(one.retries for one in seen)
    print(f"websockets reset on opening (tried again 1 s later, as the page does): {retried}")
    print(f"lost messages: {lost}, duplicated messages: {duplicated}")
    if lost or duplicated:
        sys.exit(1)


if __name__ == "__main__":
    main()
