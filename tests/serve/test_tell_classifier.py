"""The tell audit's three-party classifier (tests/serve/tell_audit.py): it finds a tell
that only the bot's chat shows, and stays at chance without one even when the lobby put
the bot in chat 1 in most rooms."""

from __future__ import annotations

import random
from statistics import mean

from tests.serve.tell_audit import FEATURES, classify_pairs


def _chat(rng: random.Random, **tell: float) -> dict[str, float]:
    return {name: rng.random() for name in FEATURES} | tell


def _rooms(
    rng: random.Random, first_bot: list[bool], tell: bool
) -> list[tuple[dict[str, float], dict[str, float]]]:
    pairs = []
    for first in first_bot:
        bot = _chat(rng, typing_per_question=rng.choice((4.0, 5.0))) if tell else _chat(rng)
        person = _chat(rng, typing_per_question=2.0) if tell else _chat(rng)
        pairs.append((bot, person) if first else (person, bot))
    return pairs


def test_a_tell_in_the_bot_chat_alone_is_found_in_every_room() -> None:
    rng = random.Random(1)
    first_bot = [rng.random() < 0.5 for _ in range(20)]
    for seed in range(10):
        assert classify_pairs(_rooms(rng, first_bot, tell=True), first_bot, seed=seed) == 20


def test_without_a_tell_it_is_at_chance_though_chat_1_was_mostly_the_bot() -> None:
    # A classifier of the room's two rows could learn "chat 1" and be right in 15 of 20.
    rng = random.Random(2)
    first_bot = [True] * 15 + [False] * 5
    accuracy = [
        classify_pairs(_rooms(rng, first_bot, tell=False), first_bot, seed=seed) / 20
        for seed in range(60)
    ]
    assert 0.42 <= mean(accuracy) <= 0.58
