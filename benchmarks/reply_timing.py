"""The bot's reply timing beside people's: draws ``docs/img/reply-timing.png``.

People: the chitchat corpus's real timestamps (:mod:`sdtt.personas.reply_timing`). The
bot: the engine's session on a virtual clock, timed by the ``human`` delay preset (what
``sdtt serve`` uses unless a study names another) and by ``paper`` (what it used
before), answering ``--questions`` questions with the mock bot's lines, a few seconds
after each answer. Four panels: the delay of an answer's first message by its length
(median and middle half; Jones & Bergen's published model for reference), the delay per
character and the gap inside a burst per character at the same lengths as the bot's,
and how many messages an answer has. Prints the AUC of each at telling the bot's from
people's (0.5: not at all).

Usage: PYTHONPATH=. python benchmarks/reply_timing.py [--questions 400] [--out PATH]
"""

from __future__ import annotations

import argparse
import random
import tempfile
from collections import Counter
from functools import partial
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import trio
import trio.testing
from _quick import add_quick

from sdtt.models.mock import chatty_script
from sdtt.personas.corpus import load_corpus
from sdtt.personas.reply_timing import LENGTH_BINS, ReplySamples, length_bin, reply_samples
from tests.engine.helpers import Schedule, reply_schedule

ROOT = Path(__file__).resolve().parents[1]
PRESETS = {
    "human": ("bot, 'human' delays (now)", "#d62728"),
    "paper": ("bot, 'paper' delays (before)", "#7f7f7f"),
}
PEOPLE = ("people (chitchat corpus)", "#1f77b4")


def matched(bot: list[tuple[int, float]], people: list[tuple[int, float]]) -> np.ndarray:
    """For each of the bot's (length, seconds), a person's seconds at the same length."""
    rng = random.Random(0)
    by_length: dict[int, list[float]] = {}
    for length, seconds in people:
        by_length.setdefault(length, []).append(seconds)
    return np.array([rng.choice(by_length[length]) for length, _ in bot])


def auc(a: np.ndarray, b: np.ndarray) -> float:
    """The chance a value of ``a`` exceeds one of ``b`` (ties count half)."""
    wins = (a[:, None] > b[None, :]).sum() + 0.5 * (a[:, None] == b[None, :]).sum()
    return float(wins / (len(a) * len(b)))


def per_char(pairs: list[tuple[int, float]]) -> np.ndarray:
    return np.array([seconds / length for length, seconds in pairs])


def ecdf(axis: plt.Axes, values: np.ndarray, label: str, colour: str) -> None:
    ordered = np.sort(values)
    axis.step(
        ordered,
        np.arange(1, len(ordered) + 1) / len(ordered),
        where="post",
        label=label,
        color=colour,
    )


def by_bin(pairs: list[tuple[int, float]]) -> tuple[list[float], list[np.ndarray]]:
    """Each length bin's middle (characters) and seconds, for bins that have any."""
    rows: list[list[float]] = [[] for _ in LENGTH_BINS]
    for length, seconds in pairs:
        rows[length_bin(length)].append(seconds)
    edges = [*LENGTH_BINS, 320]
    middles = [float(np.sqrt(edges[k] * edges[k + 1])) for k in range(len(LENGTH_BINS))]
    kept = [(m, np.array(r)) for m, r in zip(middles, rows, strict=True) if len(r) >= 5]
    return [m for m, _ in kept], [r for _, r in kept]


def draw(people: ReplySamples, bots: dict[str, Schedule], out: Path) -> None:
    """The four panels, written to ``out``."""
    fig, axes = plt.subplots(2, 2, figsize=(10, 7.2), dpi=80)
    delay, per_delay, per_gap, bursts = axes.flat
    for pairs, (label, colour) in [
        (people.delays, PEOPLE),
        *[(s.delays, PRESETS[n]) for n, s in bots.items()],
    ]:
        middles, rows = by_bin(pairs)
        median = [np.median(r) for r in rows]
        delay.plot(middles, median, "o-", color=colour, label=label)
        low = [np.percentile(r, 25) for r in rows]
        high = [np.percentile(r, 75) for r in rows]
        delay.fill_between(middles, low, high, color=colour, alpha=0.15)
    lengths = np.geomspace(2, 300, 50)
    delay.plot(
        lengths,
        1 + 0.3 * lengths + 0.03 * 25 + 2.5 * 0.25,
        "k--",
        lw=1,
        label="Jones & Bergen's model (reading 25 chars)",
    )
    delay.set(
        xscale="log",
        yscale="log",
        xlabel="characters of the answer's first message",
        ylabel="seconds after the question",
        title="Delay of an answer (median, middle half)",
    )
    delay.legend(fontsize=7)
    for axis, kind, title in [
        (per_delay, "delays", "Delay per character of an answer's first message"),
        (per_gap, "gaps", "Gap per character inside a burst"),
    ]:
        human = getattr(bots["human"], kind)
        if human:
            theirs = matched(human, getattr(people, kind)) / np.array([n for n, _ in human])
            ecdf(axis, theirs, PEOPLE[0] + ", at the bot's lengths", PEOPLE[1])
        for name, schedule in bots.items():
            if getattr(schedule, kind):
                ecdf(axis, per_char(getattr(schedule, kind)), *PRESETS[name])
        axis.set(
            xscale="log",
            xlabel="seconds per character",
            ylabel="share of messages at most",
            title=title,
        )
        axis.legend(fontsize=7)
    sizes = np.arange(1, 7)
    width = 0.27
    people_counts = Counter(min(size, 6) for size in people.bursts)
    shares = [("people", np.array([people_counts[s] for s in sizes]) / len(people.bursts), PEOPLE)]
    for name, schedule in bots.items():
        counts = Counter(min(size, 6) for size in schedule.sizes)
        shares.append(
            (name, np.array([counts[s] for s in sizes]) / len(schedule.sizes), PRESETS[name])
        )
    for offset, (_, values, (label, colour)) in enumerate(shares):
        bursts.bar(sizes + (offset - 1) * width, values, width, color=colour, label=label)
    bursts.set(
        xlabel="messages in an answer (6: six or more)",
        ylabel="share of answers",
        title="Burst size",
    )
    bursts.legend(fontsize=7)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=400, help="questions to each bot (400)")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "reply-timing.png")
    add_quick(
        parser, questions=30, out=Path(tempfile.mkdtemp(prefix="sdtt-timing-")) / "reply-timing.png"
    )
    args = parser.parse_args()
    people = reply_samples(load_corpus().raw_conversations)
    # The bot before wrote as mock/chatty does (two to four messages, all sent); the
    # human preset's bot eight, so that the burst sizes are the preset's own.
    scripts = {"human": None, "paper": chatty_script()}
    bots = {
        name: trio.run(
            partial(reply_schedule, name, args.questions, script=scripts[name]),
            clock=trio.testing.MockClock(autojump_threshold=0),
        )
        for name in PRESETS
    }
    for name, schedule in bots.items():
        for kind in ("delays", "gaps"):
            bot = getattr(schedule, kind)
            if bot:
                person = matched(bot, getattr(people, kind)) / np.array([n for n, _ in bot])
                found = auc(per_char(bot), person)
                print(f"{name:<6} {kind:<6} per character: AUC {found:.2f} (n={len(bot)})")
        mean, theirs = np.mean(schedule.sizes), np.mean(people.bursts)
        print(f"{name:<6} messages per answer: mean {mean:.2f} (people {theirs:.2f})")
    draw(people, bots, args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
