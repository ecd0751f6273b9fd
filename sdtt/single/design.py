"""The balanced judge design of a single-item test.

Each form (one judge, or one judge group with its own link) shows ``per_form`` items and
``catch_per_form`` catch items, never two items of one source: a judge who read the
first 24 exchanges of a chat would know its first 6. Items are handed out least-used
first, so every item is shown equally often across forms (within one), and among equally
used items the least-used sources and cuts first, so forms mix conversations and lengths.
Ties are broken by a seeded draw: the same seed gives the same forms.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

from sdtt.errors import InputError
from sdtt.single.items import SingleItem


def balanced_forms(
    items: Sequence[SingleItem],
    *,
    forms: int,
    per_form: int,
    catch: Sequence[SingleItem] = (),
    catch_per_form: int = 0,
    seed: int = 0,
) -> list[list[str]]:
    """``forms`` lists of item ids, each in a shuffled order; :class:`InputError` when a
    form cannot be filled with items of distinct sources."""
    if forms < 1 or per_form < 1:
        raise InputError("a design needs at least one form of at least one item.", field="forms")
    sources = {item.source for item in items}
    if catch_per_form and not catch:
        raise InputError("catch items per form asked for, but there are none.", field="catch")
    rng = random.Random(seed)
    shown: Counter[str] = Counter()
    source_shown: Counter[str] = Counter()
    cut_shown: Counter[int | None] = Counter()
    catch_shown: Counter[str] = Counter()
    out: list[list[str]] = []
    for _ in range(forms):
        chosen: list[SingleItem] = []
        used: set[str] = set()
        # Catch items first, so they never run out of sources the items took.
        catch_draw = {item.id: rng.random() for item in catch}
        for item in sorted(catch, key=lambda it: (catch_shown[it.id], catch_draw[it.id])):
            if len(chosen) == catch_per_form:
                break
            if item.source not in used:
                chosen.append(item)
                used.add(item.source)
                catch_shown[item.id] += 1
        draw = {item.id: rng.random() for item in items}
        ranked = sorted(
            items,
            key=lambda it: (shown[it.id], source_shown[it.source], cut_shown[it.cut], draw[it.id]),
        )
        for item in ranked:
            if len(chosen) == per_form + catch_per_form:
                break
            if item.source not in used:
                chosen.append(item)
                used.add(item.source)
        if len(chosen) < per_form + catch_per_form:
            raise InputError(
                f"a form of {per_form} items and {catch_per_form} catch items needs "
                f"{per_form + catch_per_form} different sources, and there are {len(sources)}.",
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
