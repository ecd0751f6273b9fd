"""The bot's reply timing against how people reply (the chitchat corpus's timestamps):
the schedule of a bot a study serves, run by the engine's session on a virtual clock,
puts its delays, delays per character, gaps inside a burst and burst sizes inside the
people's distributions at the same message lengths."""

from __future__ import annotations

import random
from collections import Counter
from functools import partial

import numpy as np
import pytest
import trio
import trio.testing
from scipy.stats import chisquare, ks_2samp

from sdtt.personas.corpus import load_corpus
from sdtt.personas.reply_timing import (
    HUMAN,
    LARGEST_BURST,
    ReplySamples,
    fit_reply_timing,
    reply_samples,
)
from sdtt.serve.spec import ChatSection, ConditionsSection
from tests.engine.helpers import reply_schedule


@pytest.fixture(scope="module")
def people() -> ReplySamples:
    return reply_samples(load_corpus().raw_conversations)


def _matched(bot: list[tuple[int, float]], people: list[tuple[int, float]]) -> np.ndarray:
    """For each of the bot's (length, seconds), a person's seconds at the same length."""
    rng = random.Random(0)
    by_length: dict[int, list[float]] = {}
    for length, seconds in people:
        by_length.setdefault(length, []).append(seconds)
    return np.array([rng.choice(by_length[length]) for length, _ in bot])


def _auc(a: np.ndarray, b: np.ndarray) -> float:
    wins = (a[:, None] > b[None, :]).sum() + 0.5 * (a[:, None] == b[None, :]).sum()
    return float(wins / (len(a) * len(b)))


def test_the_bundled_table_is_what_the_corpus_says(people: ReplySamples) -> None:
    assert fit_reply_timing(people) == HUMAN


def test_a_served_bot_replies_inside_the_human_distribution(people: ReplySamples) -> None:
    # Served with mock/chatty and the "paper" preset, the bot answered after a floor of
    # about 6 s (t1, then the model's own timestamps 3 s apart) in 2-3 fragments: delay
    # per character told it from a person with an AUC of 1.00.
    [preset] = ConditionsSection(models=["mock/chatty"], personas=["p"]).delays
    found = trio.run(
        partial(reply_schedule, preset, t1=ChatSection().t1),
        clock=trio.testing.MockClock(autojump_threshold=0),
    )
    delays, gaps, sizes = found.delays, found.gaps, found.sizes
    for bot, theirs in ((delays, people.delays), (gaps, people.gaps)):
        seconds = np.array([s for _, s in bot])
        person = _matched(bot, theirs)
        per_char = seconds / np.array([n for n, _ in bot])
        person_per_char = person / np.array([n for n, _ in bot])
        assert 0.42 <= _auc(per_char, person_per_char) <= 0.58, (
            preset,
            np.median(seconds),
            np.median(person),
        )
        assert ks_2samp(seconds, person).pvalue > 0.001, (
            preset,
            np.median(seconds),
            np.median(person),
        )
    # Burst sizes: as many answers of one message, two, three and more as people give.
    counts = Counter(min(size, 4) for size in sizes)
    shares = np.array([*HUMAN.burst_sizes[:3], sum(HUMAN.burst_sizes[3:LARGEST_BURST])])
    observed = [counts[size] for size in (1, 2, 3, 4)]
    assert chisquare(observed, shares / shares.sum() * len(sizes)).pvalue > 0.001, observed
