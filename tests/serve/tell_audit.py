"""The tell audit: does anything the server sends tell a bot witness from a person?

A study of two-party rooms, half with the bot and half with a person, runs at speed 1 on
trio's virtual clock. Scripted participants arrive at random; a scripted interrogator
asks a question a few seconds after the chat opens and the next a few seconds after each
answer, then gives a verdict and, once, tries one message more than allowed; a scripted
person witness answers each question as the people of the chitchat corpus reply
(:func:`person_answer`: a burst of as many messages, each after a delay or gap drawn
from the corpus's own at that length; the texts from the same pool as the mock bot's, so
their lengths are alike), typing meanwhile, and like the bot drops the rest of a burst
when a new question comes. Every frame the interrogator's browser receives is kept with
its (virtual) arrival time.

Each room becomes a row of every timing feature the browser can compute from what it
received (:func:`features`, generated from the stream of frames, not chosen: every
count, every delay between two kinds of event and its spread, per character and per
message, the order of events, the bursts). A cross-validated classifier (a shallow
decision tree, which finds any one clean threshold; each of its leaves holds at least
:data:`LEAF` rooms) on the features should then be at chance: the exact binomial interval
of its accuracy contains 50%.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import trio
from scipy.stats import binomtest, rankdata
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.tree import DecisionTreeClassifier

from sdtt.models.mock import CHATTY_REPLIES
from sdtt.personas.corpus import load_corpus
from sdtt.personas.reply_timing import LENGTH_BINS, ReplySamples, length_bin, reply_samples
from sdtt.serve.server import StudyServer
from tests.serve.helpers import Browser, make_server

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
delays = ["{delays}"]
"""
LEAF = 4
"""The fewest rooms a leaf of the classifier's tree holds: one odd room (a page that
reconnected, a moment the machine stalled) cannot make a rule of its own. Replaying the
rooms of 25 Chromium audits (12 with a tell put back, 13 of the sound server) under 40
cross-validation seeds each, single-room leaves caught the tell in 87% of the replays and
found one in the sound server in 1.3%; leaves of four, in 94% and 0.4%."""


@cache
def human_samples() -> ReplySamples:
    """The chitchat corpus's replies, as measured (see :mod:`sdtt.personas.reply_timing`)."""
    return reply_samples(load_corpus().raw_conversations)


def person_answer(rng: random.Random) -> list[tuple[float, str]]:
    """How a scripted person answers a question: (seconds before, text) for each message
    of one burst, its size, delays and gaps each drawn from the corpus's replies (the
    delays and gaps of messages of about the same length)."""
    samples = human_samples()
    texts = rng.choice(CHATTY_REPLIES)[: rng.choice(samples.bursts)]
    plan = []
    for index, text in enumerate(texts):
        alike = _binned("delays" if index == 0 else "gaps")[length_bin(len(text))]
        plan.append((rng.choice(alike), text))
    return plan


@cache
def _binned(which: str) -> list[list[float]]:
    """The corpus's ``delays`` or ``gaps``, the seconds of each length bin."""
    rows: list[list[float]] = [[] for _ in LENGTH_BINS]
    for length, seconds in getattr(human_samples(), which):
        rows[length_bin(length)].append(seconds)
    return rows


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
    folder: Path,
    *,
    turns: int = 2,
    seed: int = 0,
    speed: float = 1,
    mode: str = "two-party",
    delays: str = "human",
) -> Path:
    """The audit's study spec in ``folder`` (its clock ``speed`` times real time; ``mode``
    two- or three-party; the bot's ``delays`` preset)."""
    path = folder / "audit.toml"
    text = SPEC.format(turns=turns, seed=seed, speed=speed, mode=mode, delays=delays)
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
    def questions() -> int:
        return sum(1 for f in browser.of("message") if f["from"] == "them")

    answered = 0
    while browser.phase() == "chat":
        if questions() == answered:
            count = len(browser.frames)
            await browser.wait(lambda count=count: len(browser.frames) > count)
            continue
        answered = questions()
        for delay, text in person_answer(rng):
            typed = 0.0
            while typed + 1.0 < delay:  # a keystroke a second while writing
                await trio.sleep(1.0)
                typed += 1.0
                if questions() > answered or browser.phase() != "chat":
                    break  # as the bot does, the rest of the burst is dropped
                await browser.say({"type": "typing"})
            else:
                await trio.sleep(delay - typed)
            if questions() > answered or browser.phase() != "chat":
                break
            await browser.say({"type": "send", "text": text})


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


def events(seen: Seen) -> list[tuple[float, str, int]]:
    """What the interrogator's browser knows, in the order it knew it: (time, kind, length).

    Every frame received becomes an event whose kind is its type and what it says of
    itself (``message_them``, ``typing_on``, ``phase_verdict``, ``refused``...; a new
    frame type is a new kind); the browser's own consent and questions are ``consent``
    and ``asked``. ``length``: a message's characters (0 for others)."""
    found = [(seen.consented, -2, "consent", 0)]
    found += [(t, -1, "asked", 0) for t in seen.sent]
    for index, (t, frame) in enumerate(seen.frames):
        kind = str(frame["type"])
        for key in ("from", "on", "phase"):
            if key in frame and not isinstance(frame[key], dict | list):
                value = frame[key]
                kind += "_" + ("on" if value is True else "off" if value is False else str(value))
        found.append((t, index, kind, len(str(frame.get("text", "")))))
    found.sort(key=lambda event: (event[0], event[1]))
    return [(t, kind, length) for t, _, kind, length in found]


def _stats(name: str, values: list[float]) -> dict[str, float]:
    """first, last, mean, sd, least and most of ``values`` (-1 for each when none)."""
    if not values:
        return {f"{name}:{stat}": -1.0 for stat in STATS}
    array = np.array(values)
    computed = (values[0], values[-1], array.mean(), array.std(), array.min(), array.max())
    return {f"{name}:{stat}": float(v) for stat, v in zip(STATS, computed, strict=True)}


STATS = ("first", "last", "mean", "sd", "min", "max")


def features(seen: Seen, refusals: dict[str, int]) -> dict[str, float]:
    """One room's row of features, generated from its interrogator's :func:`events`.

    For every kind: how many, and how many per question shown. For every ordered pair
    of kinds (A, B): the seconds from each A to the next B (the first, the last, their
    mean, spread, least and most; per character when B is a message), and the share of
    A events the next event is a B (the order of things). For the witness's bursts
    (messages with no question between): their sizes, durations, and duration per
    message and per character. And which text refused the message sent after the last
    turn (an index)."""
    stream = events(seen)
    kinds = sorted({kind for _, kind, _ in stream})
    row: dict[str, float] = {}
    questions = max(1, sum(1 for _, kind, _ in stream if kind == "message_you"))
    for kind in kinds:
        count = sum(1 for _, k, _ in stream if k == kind)
        row[f"{kind}:count"] = float(count)
        row[f"{kind}:per_question"] = count / questions
    for a in kinds:
        starts = [i for i, (_, k, _) in enumerate(stream) if k == a]
        for b in kinds:
            delays, per_char, followed = [], [], 0
            for i in starts:
                j = next((j for j in range(i + 1, len(stream)) if stream[j][1] == b), None)
                if j is None:
                    continue
                followed += j == i + 1
                delays.append(stream[j][0] - stream[i][0])
                if stream[j][2]:
                    per_char.append(delays[-1] / stream[j][2])
            row |= _stats(f"{a}>{b}", delays)
            if b.startswith("message"):
                row |= _stats(f"{a}>{b}/char", per_char)
            row[f"{a}>{b}:next_share"] = followed / len(starts)
    bursts: list[list[tuple[float, int]]] = []
    open_burst = False
    for t, kind, length in stream:
        if kind == "message_them":
            if not open_burst:
                bursts.append([])
            bursts[-1].append((t, length))
        open_burst = kind == "message_them" or (open_burst and kind not in ("asked", "message_you"))
    durations = [burst[-1][0] - burst[0][0] for burst in bursts]
    row |= _stats("burst:size", [float(len(burst)) for burst in bursts])
    row |= _stats("burst:duration", durations)
    row |= _stats(
        "burst:duration/message",
        [d / len(burst) for d, burst in zip(durations, bursts, strict=True)],
    )
    row |= _stats(
        "burst:duration/char",
        [
            d / max(1, sum(length for _, length in burst[1:]))
            for d, burst in zip(durations, bursts, strict=True)
            if len(burst) > 1
        ],
    )
    row["refusal"] = float(refusals.setdefault(seen.refusal, len(refusals)))
    return row


async def play(
    folder: Path, *, people: int, turns: int = 2, seed: int = 0, delays: str = "human"
) -> Audit:
    """Run the audit's study with ``people`` arriving participants (the bot timed by the
    ``delays`` preset); classify its rooms."""
    server = make_server(write_audit_spec(folder, turns=turns, seed=seed, delays=delays))
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


def matrix(rows: list[dict[str, float]]) -> tuple[list[str], Any]:
    """Every feature any row has (sorted) and the rows as a matrix (-1 where a row lacks
    one: a kind of frame its browser never received)."""
    names = sorted({name for row in rows for name in row})
    return names, np.array([[row.get(name, -1.0) for name in names] for row in rows])


def classify(rows: list[dict[str, float]], bot: list[bool], *, seed: int = 0) -> int:
    """How many rooms a 5-fold cross-validated tree (:func:`_tree`) classifies right."""
    _, x = matrix(rows)
    return _cross_validated(x, np.array(bot), seed)


def classify_pairs(
    pairs: list[tuple[dict[str, float], dict[str, float]]], first_bot: list[bool], *, seed: int = 0
) -> int:
    """How many three-party rooms the same tree tells right which chat is the bot's
    (``pairs``: chat 1's row, chat 2's). Trained on every chat of the other folds' rooms
    (bot or person), it names the chat of a room it scores more bot-like; a coin names
    one when it scores both alike, so a tree that has learnt nothing stays at chance
    however many rooms had the bot in chat 1."""
    _, both = matrix([row for pair in pairs for row in pair])
    one, two = both[::2], both[1::2]
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


def separation(audit: Audit) -> list[tuple[float, str]]:
    """Each feature's AUC at telling the bot's rows from a person's (0.5: not at all),
    the most separating first (by distance from 0.5)."""
    names, x = matrix(audit.rows)
    y = np.array(audit.bot)
    found = []
    for column, name in enumerate(names):
        values = x[:, column]
        if y.all() or not y.any() or len(set(values)) == 1:
            found.append((0.5, name))
            continue
        bots, people = values[y], values[~y]
        wins = (bots[:, None] > people[None, :]).sum() + 0.5 * (
            bots[:, None] == people[None, :]
        ).sum()
        found.append((float(wins / (len(bots) * len(people))), name))
    return sorted(found, key=lambda pair: -abs(pair[0] - 0.5))


def strongest(audit: Audit, permutations: int = 1000, seed: int = 0) -> tuple[str, float, float]:
    """The one feature that separates the bot's rows from a person's most, its AUC, and
    the share of random relabellings (three-party: each room's two chats swapped or not)
    under which some feature separates them as much: the p-value of the largest of all
    the features' AUCs, corrected for looking at every one. With about 1,600 features
    and a few dozen rooms the tree can miss one strong feature among many noisy ones: in
    a Chromium audit of 33 rooms whose person witnesses' pages typed late, the tree was
    at 54.5% while their delay per character alone had an AUC of 0.11 (p = 0.004)."""
    names, x = matrix(audit.rows)
    y = np.array(audit.bot)
    if y.all() or not y.any():
        return "", 0.5, 1.0
    ranks = rankdata(x, axis=0)
    rng = np.random.default_rng(seed)
    if audit.cases:
        flips = rng.random((permutations, len(y) // 2)) < 0.5
        pairs = y.reshape(-1, 2)
        shuffled = np.where(flips[:, :, None], pairs[None, :, ::-1], pairs[None]).reshape(
            permutations, -1
        )
    else:
        shuffled = np.array([rng.permutation(y) for _ in range(permutations)])
    bots, people = int(y.sum()), int((~y).sum())

    def aucs(labels: Any) -> Any:
        return (labels.astype(float) @ ranks - bots * (bots + 1) / 2) / (bots * people)

    observed = aucs(y[None, :])[0]
    best = int(np.argmax(np.abs(observed - 0.5)))
    null = np.abs(aucs(shuffled) - 0.5).max(axis=1)
    p = (1 + int((null >= abs(observed[best] - 0.5) - 1e-12).sum())) / (permutations + 1)
    return names[best], float(observed[best]), p


def describe(audit: Audit, top: int = 12) -> str:
    """The audit's result as lines of text: accuracy, interval, and the ``top`` features
    that separate the bot's rows from a person's most, each with its AUC and its mean
    with the bot and with a person (in three-party: in the bot's chat and the person's)."""
    low, high = audit.interval()
    cases = (
        f"three-party rooms {audit.trials} ({sum(audit.bot[::2])} with the bot in chat 1)"
        if audit.cases
        else f"rooms {len(audit.bot)} ({sum(audit.bot)} with the bot)"
    )
    names = matrix(audit.rows)[0]
    name, auc, p = strongest(audit)
    lines = [
        f"{cases}, classifier accuracy {audit.accuracy:.1%} (95% interval {low:.1%} to "
        f"{high:.1%}) on {len(names)} features; the strongest alone, {name}, AUC {auc:.2f} "
        f"(permutation p = {p:.3f}); the most separating:"
    ]
    for auc, name in separation(audit)[:top]:
        bots = [r.get(name, -1.0) for r, b in zip(audit.rows, audit.bot, strict=True) if b]
        people = [r.get(name, -1.0) for r, b in zip(audit.rows, audit.bot, strict=True) if not b]
        lines.append(
            f"  {name:<44} AUC {auc:.2f}  bot {_mean(bots):8.2f}   person {_mean(people):8.2f}"
        )
    return "\n".join(lines)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else math.nan
