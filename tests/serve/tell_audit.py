"""The tell audit: does anything the server sends tell a bot witness from a person?

A study of two-party rooms, half with the bot and half with a person, runs at speed 1 on
trio's virtual clock. Scripted participants arrive at random; a scripted interrogator
asks a question a few seconds after the chat opens and the next a few seconds after each
answer, then gives a verdict and, once, tries one message more than allowed; a scripted
person witness answers each question after a delay drawn from the same range as the
bot's answers take (and, as the bot does, sometimes several messages in a row), typing
meanwhile. Every frame the interrogator's browser receives is
kept with its (virtual) arrival time, and each room becomes a row of features:

- ``wait``: seconds from consent to the chat page (the lobby's wait);
- ``typing_delay``/``typing_spread``: mean and spread of the time from the
  interrogator's latest message to each "typing on" frame;
- ``off_before``: share of answers whose "typing off" frame came just before the
  message (rather than after it);
- ``typing_per_question``: typing frames per message of the interrogator (as shown);
- ``indicators_per_question``: times the indicator went on per message of the
  interrogator (as shown);
- ``indicator_first``: share of the interrogator's messages whose answer (the witness's
  next message after it was shown) came after the indicator went on;
- ``end_gap``: seconds from the last witness message to the verdict page;
- ``refusal``: which text refused the message sent after the last turn (an index).

What the witness itself writes, and when, is what a study measures, not a tell of the
server: the features leave out the answers' text, count and latency. A cross-validated
classifier (a shallow decision tree, which finds any one clean threshold; each of its
leaves holds at least :data:`LEAF` rooms) on the features should then be at chance: the
exact binomial interval of its accuracy contains 50%.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import trio
from scipy.stats import binomtest
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.tree import DecisionTreeClassifier

from sdtt.serve.server import StudyServer
from tests.serve.helpers import Browser, make_server

FEATURES = (
    "wait",
    "typing_delay",
    "typing_spread",
    "off_before",
    "typing_per_question",
    "indicators_per_question",
    "indicator_first",
    "end_gap",
    "refusal",
)
SPEC = """
[study]
name = "audit"
mode = "{mode}"
turns = {turns}
human_witness_share = 0.5
consent = "Audit."
instructions = "Audit."
completion_code = "AUDIT"

[lobby]
timeout = 105
timeout_sd = 7

[chat]
min_interval = 0.3
seed = {seed}
speed = {speed}

[conditions]
models = ["mock/chatty"]
personas = ["chitchat-32b20fa3"]
delays = ["paper"]
"""
LEAF = 4
"""The fewest rooms a leaf of the classifier's tree holds: one odd room (a page that
reconnected, a moment the machine stalled) cannot make a rule of its own. Replaying the
rooms of 25 Chromium audits (12 with a tell put back, 13 of the sound server) under 40
cross-validation seeds each, single-room leaves caught the tell in 87% of the replays and
found one in the sound server in 1.3%; leaves of four, in 94% and 0.4%."""
ANSWER_DELAY = (3.0, 14.0)
"""Seconds a scripted person takes to answer (about what the mock bot takes)..."""
BURST = (1, 1, 2, 3)
"""...how many messages they send in a row..."""
BURST_GAP = (4.0, 15.0)
"""...and the seconds between them."""


@dataclass
class Seen:
    """What one interrogator's browser received, with virtual arrival times."""

    frames: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    sent: list[float] = field(default_factory=list)
    consented: float = 0.0
    refusal: str = ""


@dataclass(frozen=True)
class Audit:
    """The features of every chat, whether its witness was the bot, and the classifier."""

    rows: list[dict[str, float]]
    bot: list[bool]
    correct: int
    """Cases the classifier got right: rooms (in three-party, which chat is the bot's)."""
    cases: int = 0
    """How many cases it classified (0: one per row, as in two-party rooms)."""

    @property
    def trials(self) -> int:
        """How many cases the classifier classified."""
        return self.cases or len(self.bot)

    @property
    def accuracy(self) -> float:
        """Cross-validated share of cases the classifier got right."""
        return self.correct / self.trials

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        """The exact (Clopper-Pearson) interval of the accuracy."""
        ci = binomtest(self.correct, self.trials).proportion_ci(level, method="exact")
        return float(ci.low), float(ci.high)


def write_audit_spec(
    folder: Path, *, turns: int = 2, seed: int = 0, speed: float = 1, mode: str = "two-party"
) -> Path:
    """The audit's study spec in ``folder`` (its clock ``speed`` times real time; ``mode``
    two- or three-party)."""
    path = folder / "audit.toml"
    text = SPEC.format(turns=turns, seed=seed, speed=speed, mode=mode)
    path.write_text(text, encoding="utf-8")
    return path


async def _interrogator(browser: Browser, seen: Seen, rng: random.Random, turns: int) -> None:
    asked = 0

    def answers() -> int:
        return sum(1 for _, f in seen.frames if f["type"] == "message" and f["from"] == "them")

    while asked < turns:
        await trio.sleep(rng.uniform(2.0, 6.0))
        if browser.phase() != "chat":
            break
        seen.sent.append(trio.current_time())
        await browser.say({"type": "send", "text": f"question {asked + 1}?"})
        asked += 1
        before = answers()

        def answered(before: int = before) -> bool:
            return answers() > before or browser.phase() != "chat"

        await browser.wait(answered)
    # One message too many, soon after the last answer: how is it refused?
    await trio.sleep(rng.uniform(0.5, 2.0))
    refusals = len(browser.of("refused"))
    await browser.say({"type": "send", "text": "one more?"})
    await browser.wait(lambda: len(browser.of("refused")) > refusals)
    seen.refusal = browser.of("refused")[-1]["message"]
    await browser.wait_phase("verdict")
    await browser.say({"type": "verdict", "human": "yes", "confidence": 50, "reason": "audit"})
    await browser.wait_phase("done")


async def _witness(browser: Browser, rng: random.Random) -> None:
    answered = 0
    while True:
        questions = [f for f in browser.of("message") if f["from"] == "them"]
        if browser.phase() != "chat":
            return
        if len(questions) > answered:
            answered = len(questions)
            # Like the bot, sometimes several messages in a row.
            for part in range(rng.choice(BURST)):
                delay = rng.uniform(*(ANSWER_DELAY if part == 0 else BURST_GAP))
                typed = 0.0
                while typed + 1.0 < delay:  # a keystroke a second while writing
                    await trio.sleep(1.0)
                    typed += 1.0
                    await browser.say({"type": "typing"})
                await trio.sleep(delay - typed)
                if browser.phase() != "chat":
                    return
                await browser.say({"type": "send", "text": f"answer {answered}.{part}"})
            continue
        count = len(browser.frames)

        def more(count: int = count) -> bool:
            return len(browser.frames) > count

        await browser.wait(more)


async def _participant(
    server: StudyServer,
    nursery: trio.Nursery,
    pid: str,
    rng: random.Random,
    turns: int,
    interrogators: dict[str, Seen],
) -> None:
    browser = Browser(server, pid)
    seen = Seen()

    def keep(frame: dict[str, Any]) -> None:
        seen.frames.append((trio.current_time(), frame))

    browser.on_frame = keep
    await browser.open(nursery)
    await browser.wait_phase("consent")
    await trio.sleep(rng.uniform(1.0, 4.0))
    seen.consented = trio.current_time()
    await browser.say({"type": "consent"})
    await browser.wait(lambda: browser.phase() in ("chat", "done"))
    if browser.phase() != "chat":
        return
    if browser.of("phase")[-1]["role"] == "interrogator":
        interrogators[pid] = seen
        await _interrogator(browser, seen, rng, turns)
    else:
        await _witness(browser, rng)
    await browser.close()


def features(seen: Seen, refusals: dict[str, int]) -> dict[str, float]:
    """One room's row of features, from what its interrogator's browser received."""
    frames = seen.frames
    opened = next(t for t, f in frames if f["type"] == "phase" and f["phase"] == "chat")
    verdict = next(t for t, f in frames if f["type"] == "phase" and f["phase"] == "verdict")
    theirs = [(t, f) for t, f in frames if f["type"] == "message" and f["from"] == "them"]
    typing = [(t, f) for t, f in frames if f["type"] == "typing"]
    delays = []
    for at, frame in typing:
        asked = [sent for sent in seen.sent if sent <= at]
        if frame["on"] and asked:
            delays.append(at - asked[-1])
    # An indicator going off just before a message, not just after the one before it.
    off_before = sum(
        1
        for (_, before), (_, frame), (_, after) in zip(frames, frames[1:], frames[2:], strict=False)
        if frame["type"] == "typing"
        and not frame["on"]
        and after.get("from") == "them"
        and before.get("from") != "them"
    )
    ons = [t for t, frame in typing if frame["on"]]
    # From each question as shown (the server's order): in real browsers an answer's
    # last part sent as the question went may cross it.
    shown = [t for t, f in frames if f["type"] == "message" and f["from"] == "you"]
    first = []
    for question in shown:
        answer = next((t for t, _ in theirs if t > question), None)
        if answer is not None:
            first.append(any(question < t <= answer for t in ons))
    return {
        "wait": opened - seen.consented,
        "typing_delay": float(np.mean(delays)) if delays else -1.0,
        "typing_spread": float(np.std(delays)) if len(delays) > 1 else -1.0,
        "off_before": off_before / max(1, len(theirs)),
        "typing_per_question": len(typing) / max(1, len(shown)),
        "indicators_per_question": len(ons) / max(1, len(shown)),
        "indicator_first": float(np.mean(first)) if first else -1.0,
        "end_gap": verdict - theirs[-1][0] if theirs else -1.0,
        "refusal": float(refusals.setdefault(seen.refusal, len(refusals))),
    }


async def play(folder: Path, *, people: int, turns: int = 2, seed: int = 0) -> Audit:
    """Run the audit's study with ``people`` arriving participants; classify its rooms."""
    server = make_server(write_audit_spec(folder, turns=turns, seed=seed))
    rng = random.Random(seed)
    interrogators: dict[str, Seen] = {}
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        async with trio.open_nursery() as crowd:
            for number in range(people):
                pid = f"A{number:04d}"
                crowd.start_soon(
                    _participant,
                    server,
                    crowd,
                    pid,
                    random.Random(f"{seed}:{pid}"),
                    turns,
                    interrogators,
                )
                await trio.sleep(rng.expovariate(1 / 30))
        nursery.cancel_scope.cancel()
    rooms = {r.interrogator: r for r in server.store.rooms()}
    refusals: dict[str, int] = {}
    rows, bot = [], []
    for pid, seen in interrogators.items():
        room = rooms[pid]
        if room.end_reason != "finished":
            continue
        rows.append(features(seen, refusals))
        bot.append(room.witness == "bot")
    return Audit(rows=rows, bot=bot, correct=classify(rows, bot, seed=seed))


def classify(rows: list[dict[str, float]], bot: list[bool], *, seed: int = 0) -> int:
    """How many rooms a 5-fold cross-validated tree (:func:`_tree`) classifies right."""
    x = np.array([[row[name] for name in FEATURES] for row in rows])
    return _cross_validated(x, np.array(bot), seed)


def classify_pairs(
    pairs: list[tuple[dict[str, float], dict[str, float]]], first_bot: list[bool], *, seed: int = 0
) -> int:
    """How many three-party rooms the same tree tells right which chat is the bot's
    (``pairs``: chat 1's row, chat 2's). Trained on every chat of the other folds' rooms
    (bot or person), it names the chat of a room it scores more bot-like; a coin names
    one when it scores both alike, so a tree that has learnt nothing stays at chance
    however many rooms had the bot in chat 1."""
    one = np.array([[row[name] for name in FEATURES] for row, _ in pairs])
    two = np.array([[row[name] for name in FEATURES] for _, row in pairs])
    y = np.array(first_bot)
    coin = np.random.default_rng(seed)
    correct = 0
    for train, test in _folds(seed).split(one, y):
        tree = _tree(seed)
        tree.fit(np.vstack([one[train], two[train]]), np.concatenate([y[train], ~y[train]]))
        # Each training room gives a bot chat and a person's: classes_ is [False, True].
        for room in test:
            p_one, p_two = tree.predict_proba([one[room], two[room]])[:, 1]
            first = p_one > p_two if p_one != p_two else coin.random() < 0.5
            correct += first == y[room]
    return int(correct)


def _cross_validated(x: Any, y: Any, seed: int) -> int:
    predicted = cross_val_predict(_tree(seed), x, y, cv=_folds(seed))
    return int((predicted == y).sum())


def _folds(seed: int) -> StratifiedKFold:
    """The audit's cross-validation: five folds, each with the share of bot rooms (in
    three-party: of rooms with the bot in chat 1) of the whole."""
    return StratifiedKFold(n_splits=5, shuffle=True, random_state=seed)


def _tree(seed: int) -> DecisionTreeClassifier:
    """The audit's classifier: at most three splits deep, at least :data:`LEAF` rooms (or
    chats) in a leaf."""
    return DecisionTreeClassifier(max_depth=3, min_samples_leaf=LEAF, random_state=seed)


def describe(audit: Audit) -> str:
    """The audit's result as lines of text: accuracy, interval, and each feature's mean
    with the bot and with a person (in three-party: in the bot's chat and the person's)."""
    low, high = audit.interval()
    cases = (
        f"three-party rooms {audit.trials} ({sum(audit.bot[::2])} with the bot in chat 1)"
        if audit.cases
        else f"rooms {len(audit.bot)} ({sum(audit.bot)} with the bot)"
    )
    lines = [
        f"{cases}, classifier accuracy {audit.accuracy:.1%} (95% interval {low:.1%} to {high:.1%})"
    ]
    for name in FEATURES:
        bots = [r[name] for r, b in zip(audit.rows, audit.bot, strict=True) if b]
        people = [r[name] for r, b in zip(audit.rows, audit.bot, strict=True) if not b]
        lines.append(f"  {name:<24} bot {_mean(bots):8.2f}   person {_mean(people):8.2f}")
    return "\n".join(lines)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else math.nan
