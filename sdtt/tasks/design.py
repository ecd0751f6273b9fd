"""Balanced judge designs: which units each judge group ("form") sees, and in which order.
Pure: descriptions in, forms out. One home for the three designs:

- :func:`balanced_forms`: a questionnaire's test pairs, with the side of each bot;
- :func:`rating_forms`: a rating task's pairs, each rated ``repeats`` times;
- :func:`item_forms`: a single-item study's items, one per source, catch items first.

The paired construction is a cyclic incomplete-block design. The test pairs are put in a seeded
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
from typing import Literal, Protocol

from sdtt.errors import InputError
from sdtt.seeds import seeded_rng

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


def rating_forms(
    pair_ids: Sequence[str], per_judge: int, repeats: int, rng: random.Random
) -> list[list[str]]:
    """Forms of ``per_judge`` distinct pairs in which every pair occurs ``repeats`` times.

    The pairs, in a seeded order, are laid end to end ``repeats`` times and cut into
    consecutive windows; a window never wraps onto itself because it is no longer than
    the list, so no form holds a pair twice. Only the last form may be shorter. Each
    form's order is then shuffled.
    """
    if per_judge >= len(pair_ids):
        raise InputError(
            f"pairs_per_judge ({per_judge}) must be smaller than the number of pairs "
            f"({len(pair_ids)}); leave it out for every judge to rate every pair.",
            field="rating.pairs_per_judge",
        )
    order = list(pair_ids)
    rng.shuffle(order)
    laid = order * repeats
    forms = [laid[start : start + per_judge] for start in range(0, len(laid), per_judge)]
    for form in forms:
        rng.shuffle(form)
    return forms


class FormItem(Protocol):
    """What :func:`item_forms` reads of a single item (:class:`sdtt.single.items.SingleItem`)."""

    @property
    def id(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def cut(self) -> int | None: ...
    @property
    def catch(self) -> str | None: ...


def item_forms(
    items: Sequence[FormItem],
    *,
    forms: int,
    per_form: int,
    catch: Sequence[FormItem] = (),
    catch_per_form: int = 0,
    seed: int = 0,
) -> list[list[str]]:
    """``forms`` lists of item ids of a single-item test, each in a shuffled order;
    :class:`InputError` when a form cannot be filled with items of distinct sources.

    Each form (one judge, or one judge group with its own link) shows ``per_form`` items
    and ``catch_per_form`` catch items, never two items of one source: a judge who read
    the first 24 exchanges of a chat would know its first 6. Catch items are placed
    first; then sources take turns by how much of their share they have had (a source
    with more items is due more often) and each gives its least-shown item (among those,
    the least-shown cut), so every item is shown about equally often across forms and
    forms mix conversations and lengths. Ties are broken by a seeded draw: the same seed
    gives the same forms.
    """
    if forms < 1 or per_form < 1:
        raise InputError("a design needs at least one form of at least one item.", field="forms")
    by_source: dict[str, list[FormItem]] = {}
    for item in items:
        by_source.setdefault(item.source, []).append(item)
    sources = sorted(by_source)
    if catch_per_form and not catch:
        raise InputError("catch items per form asked for, but there are none.", field="catch")
    rng = seeded_rng(seed, "single-forms")
    shown: Counter[str] = Counter()
    source_shown: Counter[str] = Counter()
    cut_shown: Counter[int | None] = Counter()
    catch_shown: Counter[str] = Counter()
    out: list[list[str]] = []
    for _ in range(forms):
        chosen: list[FormItem] = []
        used: set[str] = set()
        # Catch items first, so they never run out of sources the items took.
        catch_draw = {item.id: rng.random() for item in catch}

        # A catch item blocks its source for this form: prefer sources already ahead.
        def ahead(source: str) -> float:
            return -source_shown[source] / len(by_source.get(source, [None]))

        for item in sorted(
            catch, key=lambda it: (ahead(it.source), catch_shown[it.id], catch_draw[it.id])
        ):
            if len(chosen) == catch_per_form:
                break
            if item.source not in used:
                chosen.append(item)
                used.add(item.source)
                catch_shown[item.id] += 1
        # Sources in order of how much of their share they have had (a source with more
        # items is due more often), then each source's least-shown item, cuts evenly.
        source_draw = {source: rng.random() for source in sources}
        order = sorted(
            sources,
            key=lambda src: (source_shown[src] / len(by_source[src]), source_draw[src]),
        )
        for source in order:
            if len(chosen) == per_form + catch_per_form:
                break
            if source in used:
                continue
            draw = {item.id: rng.random() for item in by_source[source]}
            best = min(
                by_source[source], key=lambda it: (shown[it.id], cut_shown[it.cut], draw[it.id])
            )
            chosen.append(best)
            used.add(source)
        if len(chosen) < per_form + catch_per_form:
            extra = f" and {catch_per_form} catch items" if catch_per_form else ""
            raise InputError(
                f"a form of {per_form} items{extra} needs {per_form + catch_per_form} "
                f"different sources (one item per conversation), and there are {len(sources)}.",
                field="per_form",
                hint="Show fewer items per judge, or add conversations.",
            )
        for item in chosen:
            if item.catch is None:
                shown[item.id] += 1
                source_shown[item.source] += 1
                cut_shown[item.cut] += 1
        rng.shuffle(chosen)
        out.append([item.id for item in chosen])
    return out
