"""Balanced judge designs: which pairs each judge group ("form") sees, in which order, and
on which side the bot's chat is. Pure: pair descriptions in, forms out.

The construction is a cyclic incomplete-block design. The test pairs are put in a seeded
circular order in which any ``k`` neighbours share no conversation; form ``g`` holds the
``k`` pairs starting at place ``g`` of that circle. So every pair is in exactly ``k``
forms, once at each place in the order (a Latin-square property), and no judge reads one
conversation twice (say, the X=3 and X=10 cuts of one chat). Every form then has a
mirror form with the same pairs in the same order and every bot position swapped, so
each pair shows its bot first to exactly half of its judges. Within a form the positions
follow a seeded pattern with as many bots first as second (one off when ``k`` is odd), so
a judge cannot learn a rule such as "it alternates".

``2 * P`` forms for ``P`` pairs; a round of one judge per form gives every pair ``2 * k``
judgements, ``k`` with the bot first and ``k`` with the bot second.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from sdtt.dialogue.seeds import seeded_rng
from sdtt.errors import InputError

ATTEMPTS = 200
"""Random circular orders tried before giving up on keeping shared conversations apart."""


@dataclass(frozen=True)
class Slot:
    """One place of a form: which test pair (its index) and where its bot's chat is."""

    pair: int
    bot_position: Literal[1, 2]


def _conflicts(a: frozenset[str], b: frozenset[str]) -> bool:
    return bool(a & b)


def _circle(
    conversations: Sequence[frozenset[str]], k: int, rng: random.Random
) -> list[int] | None:
    """A circular order of pair indexes where any ``k`` neighbours share no conversation."""
    count = len(conversations)
    for _ in range(ATTEMPTS):
        remaining = list(range(count))
        rng.shuffle(remaining)
        placed: list[int] = []
        while remaining:
            window = placed[-(k - 1) :] if k > 1 else []
            pick = next(
                (
                    index
                    for index in remaining
                    if not any(_conflicts(conversations[index], conversations[p]) for p in window)
                ),
                None,
            )
            if pick is None:
                break
            placed.append(pick)
            remaining.remove(pick)
        if remaining:
            continue
        wraps = all(
            not _conflicts(conversations[placed[-1 - i]], conversations[placed[j]])
            for i in range(k - 1)
            for j in range(k - 1 - i)
        )
        if wraps:
            return placed
    return None


def _busiest(conversations: Sequence[frozenset[str]]) -> tuple[str, int]:
    counts = Counter(c for pair in conversations for c in pair)
    name, uses = max(sorted(counts.items()), key=lambda item: item[1])
    return name, uses


def balanced_forms(
    conversations: Sequence[frozenset[str]], k: int, rng: random.Random
) -> list[list[Slot]]:
    """The forms of a balanced design for ``len(conversations)`` test pairs, ``k`` per judge.

    ``conversations[i]`` names the conversations pair ``i`` shows; two pairs that share
    one never go to the same judge. Raises :class:`InputError` when ``k`` does not fit or
    shared conversations cannot be kept apart.
    """
    count = len(conversations)
    if count == 0:
        raise InputError("a judge design needs at least one test pair.")
    if not 1 <= k <= count:
        raise InputError(
            f"pairs_per_judge is {k} but the study has {count} test pair(s).",
            field="design.pairs_per_judge",
            hint=f"Use a number from 1 to {count}.",
        )
    circle = _circle(conversations, k, rng)
    if circle is None:
        name, uses = _busiest(conversations)
        raise InputError(
            f"cannot give each judge {k} pairs without showing someone a conversation twice: "
            f"conversation {name!r} is in {uses} pairs (of {count}).",
            field="design.pairs_per_judge",
            hint="Use fewer pairs per judge, build one questionnaire per X (--x), or pair "
            "each bot conversation with its own human conversation.",
        )
    forms: list[list[Slot]] = []
    mirrors: list[list[Slot]] = []
    for start in range(count):
        pattern: list[Literal[1, 2]] = [1 if j % 2 == 0 else 2 for j in range(k)]
        rng.shuffle(pattern)
        form = [Slot(circle[(start + j) % count], pattern[j]) for j in range(k)]
        forms.append(form)
        mirrors.append([Slot(s.pair, 2 if s.bot_position == 1 else 1) for s in form])
    return [form for pair in zip(forms, mirrors, strict=True) for form in pair]


RANDOM_DRAWS = 4000
"""Random judges drawn to estimate :func:`repeat_share`."""


def repeat_share(pairs: Sequence[frozenset[str]], k: int, seed: int = 0) -> float:
    """The share of judges who read one conversation in two pairs when each gets ``k`` of
    ``pairs`` (each the conversations it shows) drawn at random, as a single-file survey
    randomizer does (the balanced forms never let that happen). Estimated from a seeded
    sample of draws, so the same study always gives the same figure."""
    if k < 2 or len(pairs) < 2:
        return 0.0
    rng = seeded_rng(seed, "repeats")
    hits = 0
    for _ in range(RANDOM_DRAWS):
        drawn = rng.sample(list(pairs), min(k, len(pairs)))
        seen = Counter(conversation for pair in drawn for conversation in pair)
        hits += any(count > 1 for count in seen.values())
    return hits / RANDOM_DRAWS
