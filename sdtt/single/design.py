"""The balanced judge design of a single-item test.

Each form (one judge, or one judge group with its own link) shows ``per_form`` items and
``catch_per_form`` catch items, never two items of one source: a judge who read the
first 24 exchanges of a chat would know its first 6. Catch items are placed first; then
sources take turns by how much of their share they have had (a source with more items is
due more often) and each gives its least-shown item (among those, the least-shown cut),
so every item is shown about equally often across forms and forms mix conversations and
lengths. Ties are broken by a seeded draw: the same seed gives the same forms.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from sdtt.dialogue.seeds import seeded_rng
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
    by_source: dict[str, list[SingleItem]] = {}
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
        chosen: list[SingleItem] = []
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
