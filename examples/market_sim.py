"""A simulated Turing Trade market: see the calibration figures before paying anyone.

Starts ``sdtt serve`` on 127.0.0.1 with a market study (the ``mock/chatty`` bot as the
target of half the games, a scripted person in the others, its clock ``--speed`` times
faster than real time), and plays it with scripted participants over the real websocket, as
browsers would. Each is a bettor (or, when the lobby picks them, a person target who
answers every question):

- **Noisy Bayesian bettors.** For every answer of the target a bettor sees, it draws a
  private signal from the chat: "a person wrote this" or "the bot did", right with
  probability ``--accuracy`` (whether a scripted person typed the answer is what the
  signal is noisy about). It updates its belief that the target is human by Bayes' rule,
  taking each signal to be right with probability ``--believed`` (default: the true
  accuracy, a well-informed crowd), from the prior ``human_witness_share``. Then it trades
  every security whose price is below what it believes it is worth (buying human
  securities under its belief, computer ones above it), within its points (100000, so
  the budget does not cap its belief) and the spec's largest trade. It asks the target
  a question when its game starts and, after each answer, with chance one in
  ``--bettors``.
- A **misinformed crowd**: signals that point the wrong way more often than not
  (``--accuracy 0.3``) taken as right (``--believed 0.7``); its prices are confidently
  wrong, and the figures show it.

Each participant plays ``--per-bettor`` games (reading each reveal a moment, then
pressing Continue; every question and trade names its game, so one sent as a game ends
is refused, not taken into the next) and a new one takes their place; a target plays
one. When ``--games`` games have been revealed, no one new comes, those waiting in the
lobby leave, the games under way finish, and the server stops. The script then runs
``sdtt serve export`` and ``sdtt report`` into ``OUT``: ``OUT/report/report.html`` has
the market's calibration and sharpness at fixed seconds (Turing Trade's Figures 7 and
8, ``market-calibration.png`` and ``market-sharpness.png``) beside the per-turn figures,
and the terminal shows the summary per second. Everything is seeded (``--seed``), but the
server runs in real time, so two runs can differ in which bettor traded first.

Usage: ``python examples/market_sim.py OUT [--games 60] [--accuracy 0.75]
[--believed P] [--bettors 3] [--per-bettor 3] [--seed 0] [--speed 20]``. A few minutes
for 60 games.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import trio

from sdtt.beliefs.market import Kind, Side, TradeRefused, TuringTradeMaker
from sdtt.beliefs.market_calibration import MarketCalibration, market_prices, summary
from sdtt.beliefs.traces import read_traces
from sdtt.cli import main as sdtt
from sdtt.serve.wsclient import WebSocketClient

SPEC = """
[study]
name = "market-sim"
title = "Simulated market"
mode = "market"
turns = {turns}
human_witness_share = {share}
consent = "A simulated market."
instructions = "Question the target and bet on whether it is a person."
completion_code = "SIM"

[lobby]
timeout = 30
timeout_sd = 0

[chat]
t1 = 1
min_interval = 0.2
time_limit = 120
speed = {speed}

[conditions]
models = ["mock/chatty"]
personas = ["chitchat-32b20fa3"]
delays = ["paper"]

[market]
bettors = {bettors}
games = {per_bettor}
start_points = 100000
"""


@dataclass(frozen=True)
class Crowd:
    """How well the bettors are informed."""

    accuracy: float = 0.75
    """Chance that a private signal points at the truth."""
    believed: float | None = None
    """The accuracy the bettors take their signals to have (None: the true one)."""
    prior: float = 0.5
    """Their belief that a target is human before any answer."""

    @property
    def weight(self) -> float:
        """How far one signal moves a bettor's log-odds."""
        taken = self.accuracy if self.believed is None else self.believed
        return math.log(taken / (1 - taken))


@dataclass
class Play:
    """What the participants share: the texts the scripted people typed as targets (what
    the bettors' signals are about), the games revealed, and when to stop."""

    games: int
    bettors: int
    speed: float
    """How many times faster than real time the study's clock runs."""
    person_texts: set[str] = field(default_factory=set)
    reveals: int = 0
    stop: trio.Event = field(default_factory=trio.Event)

    def revealed(self) -> None:
        self.reveals += 1
        if self.reveals >= self.games * self.bettors:
            self.stop.set()


def orders(
    belief: float, level: int, points: float, kind: Kind | None, held: int, most: int
) -> tuple[Kind, Side, int] | None:
    """The next trade of a bettor who believes the target human with ``belief`` (0-1),
    at human price ``level`` with its ``points`` and holding: every security whose price
    is below the worth the belief gives it, at most ``most`` at once, or None."""
    worth = 100 * belief
    kind_now: Kind
    side: Side = "buy"
    if worth > level + 1:  # the ask is below the worth: move the price up
        wanted, kind_now = math.ceil(worth - level) - 1, "human"
    elif worth < level - 1:  # the bid is above the worth: move it down
        wanted, kind_now = math.ceil(level - worth) - 1, "computer"
    else:
        return None
    if kind is not None and kind != kind_now:
        # Holding the other kind: selling it moves the price the same way, and must
        # come first (a bettor holds one kind at a time).
        kind_now, side, wanted = kind, "sell", min(wanted, held)
    maker = TuringTradeMaker(level)
    for count in range(min(wanted, most), 0, -1):
        try:
            if maker.cost(kind_now, side, count) <= points:
                return kind_now, side, count
        except TradeRefused:
            continue  # it would leave 0-100: fewer
    return None


async def participant(port: int, pid: str, crowd: Crowd, seed: int, play: Play) -> None:
    """One scripted participant, from the study link to the done page (or, once enough
    games were revealed, leaving the lobby)."""
    rng = random.Random(f"{seed}:{pid}")
    client = await WebSocketClient.connect("127.0.0.1", port, "/ws/market-sim")
    await client.send({"type": "join", "pid": pid})
    role = ""
    game = None  # the game shown: every question, answer and trade names it
    log_odds = 0.0
    level, points, kind, held, most = 50, 0.0, None, 0, 1
    trading = opened = False
    answered: set[int] = set()

    async def trade() -> None:
        nonlocal trading
        order = orders(1 / (1 + math.exp(-log_odds)), level, points, kind, held, most)
        trading = order is not None
        if order is not None:
            what, side, count = order
            await client.send(
                {"type": "trade", "kind": what, "side": side, "count": count, "game": game}
            )

    async def say(text: str) -> None:
        # Whatever a scripted person types is a person's text (as a target's answer).
        play.person_texts.add(text)
        await client.send({"type": "send", "text": text, "game": game})

    async def ask() -> None:
        await say(f"question from {pid}: are you a person?")

    try:
        while (frame := await client.receive()) is not None:
            kind_of = frame["type"]
            if kind_of == "phase":
                phase = frame["phase"]
                if phase == "consent":
                    await client.send({"type": "consent"})
                elif phase == "lobby" and play.stop.is_set():
                    return  # enough games: leave instead of waiting for another
                elif phase == "chat":
                    role, game = frame["role"], frame["game"]
                    log_odds = math.log(crowd.prior / (1 - crowd.prior))
                    trading = opened = False
                elif phase == "done":
                    return
            elif kind_of == "market":
                level = round(frame["prices"][-1])
                points, kind, held = frame["points"], frame["kind"], frame["count"]
                most = frame["max_trade"]
                if trading:
                    await trade()  # the last trade went through: the next, if any
                elif not opened:
                    opened = True
                    await ask()  # the game has started: the first question
            elif kind_of == "price":
                level = round(frame["price"])
            elif kind_of == "refused" and "question" not in frame["message"]:
                # A trade refused (or sent as its game ended); a question refused, too
                # soon after the last, is let go.
                trading = False
            elif kind_of == "reveal":
                trading = False  # (a last order of this game is refused)
                play.revealed()
                if role != "witness":
                    await trio.sleep(rng.uniform(1, 5) / play.speed)  # reads it, then on
                    await client.send({"type": "continue"})
            elif role == "witness" and kind_of in ("message", "history"):
                # A question asked before this page joined comes in the history.
                for message in frame.get("messages", [frame]):
                    if message["from"] == "them" and message["id"] not in answered:
                        answered.add(message["id"])
                        await trio.sleep(rng.uniform(1, 4) / play.speed)  # 1-4 s of the study's
                        await say(f"answer {len(play.person_texts)} from a person")
            elif kind_of == "message" and frame["from"] == "them":
                person = frame["text"] in play.person_texts
                right = rng.random() < crowd.accuracy
                says_human = person if right else not person
                log_odds += crowd.weight if says_human else -crowd.weight
                await trade()
                if rng.random() < 1 / play.bettors:
                    await ask()
    finally:
        await client.aclose()


async def simulate(
    port: int, crowd: Crowd, *, games: int, bettors: int, seed: int, speed: float
) -> int:
    """Play until ``games`` games were revealed; returns how many participants took part."""
    play = Play(games=games, bettors=bettors, speed=speed)
    started = 0

    async def one(nursery: trio.Nursery) -> None:
        nonlocal started
        started += 1
        pid = f"sim{started:04d}"
        await participant(port, pid, crowd, seed, play)
        if not play.stop.is_set():
            nursery.start_soon(one, nursery)  # someone new takes their place

    async with trio.open_nursery() as nursery:
        # Three games at once, and one person more per game to be a target.
        for _ in range(3 * (bettors + 1)):
            nursery.start_soon(one, nursery)
            await trio.sleep(0.005)
    return started


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _serve(spec: Path, port: int) -> subprocess.Popen[bytes]:
    """``sdtt serve SPEC`` on 127.0.0.1, once it answers."""
    process = subprocess.Popen(
        [sys.executable, "-m", "sdtt.cli", "serve", str(spec), "--port", str(port)],
        env={**os.environ, "SDTT_ADMIN_TOKEN": "market-sim"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(300):
        if process.poll() is not None:
            raise SystemExit("sdtt serve did not start")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/static/style.css", timeout=2).close()
            return process
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit("sdtt serve did not start")


def run(
    out: Path,
    crowd: Crowd,
    *,
    games: int = 60,
    bettors: int = 3,
    turns: int = 4,
    per_bettor: int = 3,
    seed: int = 0,
    speed: float = 20,
    limit: float = 600,
    report: bool = True,
) -> MarketCalibration:
    """Write the study into ``out``, play it, export it and (with ``report``) write the
    report; returns the market's prices at fixed seconds, read from the export."""
    out.mkdir(parents=True, exist_ok=True)
    spec = out / "study.toml"
    spec.write_text(
        SPEC.format(
            turns=turns,
            share=crowd.prior,
            bettors=bettors,
            per_bettor=per_bettor,
            speed=speed,
        ),
        encoding="utf-8",
    )
    (out / "market-sim.sqlite3").unlink(missing_ok=True)  # a rerun starts afresh
    port = _free_port()
    server = _serve(spec, port)
    try:

        async def bounded() -> int:
            with trio.fail_after(limit):
                return await simulate(
                    port, crowd, games=games, bettors=bettors, seed=seed, speed=speed
                )

        trio.run(bounded)
        time.sleep(1)  # a game the last leavers were matched into ends (partner_left)
    finally:
        server.terminate()
        server.wait(timeout=30)
    export = out / "export"
    if sdtt(["serve", "export", str(spec), "--out", str(export)]) != 0:
        raise SystemExit("sdtt serve export failed")
    judgements, beliefs = export / "judgements.jsonl", export / "beliefs.jsonl"
    command = ["report", str(judgements), str(beliefs), "--out", str(out / "report")]
    if report and sdtt([*command, "--bootstrap", "0", "--title", "Simulated market"]) != 0:
        raise SystemExit("sdtt report failed")
    return market_prices(read_traces(beliefs))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder for the study, its export and report")
    parser.add_argument("--games", type=int, default=60, help="games to reveal (default 60)")
    parser.add_argument(
        "--accuracy",
        type=float,
        default=0.75,
        help="probability that a bettor's signal about an answer is right (default 0.75)",
    )
    parser.add_argument(
        "--believed", type=float, help="the accuracy bettors assume (default: --accuracy)"
    )
    parser.add_argument("--bettors", type=int, default=3, help="bettors per game (default 3)")
    parser.add_argument(
        "--per-bettor", type=int, default=3, help="games each bettor plays (default 3)"
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of signals, questions and trades (default 0)"
    )
    parser.add_argument(
        "--speed", type=float, default=20, help="study clock vs real time (default 20)"
    )
    args = parser.parse_args(argv)
    for name in ("accuracy", "believed"):
        value = getattr(args, name)
        if value is not None and not 0 < value < 1:
            parser.error(f"--{name} must be between 0 and 1 (not {value:g})")
    crowd = Crowd(accuracy=args.accuracy, believed=args.believed)
    found = run(
        args.out,
        crowd,
        games=args.games,
        bettors=args.bettors,
        per_bettor=args.per_bettor,
        seed=args.seed,
        speed=args.speed,
    )
    print(found.note())
    for row in summary(found).to_dict("records"):
        print(
            f"after {row['seconds']:g} s: {row['runs']} games, Brier {row['brier']:.3f}, "
            f"ECE {row['ece']:.3f}, sharpness {row['sharpness']:.0%}"
        )
    print(f"figures: {args.out / 'report' / 'market-calibration.png'}, market-sharpness.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
