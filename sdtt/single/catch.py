"""Attention catch items in the papers' two shapes, made from real items.

A catch item looks like every other item but one speaker is an obvious machine: either it
repeats one line over and over (a stuck pattern or an error message), or one of its
replies is an exhaustive list no one would type in a chat. Only that speaker is scored
(as a machine); the other keeps its own lines and is asked about but not scored. The
texts are sdtt's own, in the papers' shapes.
"""

from __future__ import annotations

from collections.abc import Sequence

from sdtt.dialogue.seeds import seeded_rng
from sdtt.errors import InputError
from sdtt.single.items import SingleItem, Spoken

REPEATED = ("%%@@##&&**", "Error: the request could not be processed.")
"""Lines a repetition catch speaker says every time."""
LONG_LIST = (
    "Bread can be classified along several dimensions:\n"
    "By leavening:\n"
    "1. Yeast-leavened (sandwich loaf, brioche, challah)\n"
    "2. Sourdough (natural starter, lactic and acetic acidity)\n"
    "3. Chemically leavened (soda bread, quick breads)\n"
    "4. Unleavened (matzo, tortilla, chapati)\n"
    "By flour:\n"
    "1. Wheat (white, wholemeal, spelt)\n"
    "2. Rye (pumpernickel, light rye)\n"
    "3. Gluten-free (rice, sorghum, buckwheat)\n"
    "By region:\n"
    "1. French (baguette, pain de campagne)\n"
    "2. Italian (ciabatta, focaccia)\n"
    "3. German (Vollkornbrot, pretzel)\n"
    "4. Middle Eastern (pita, lavash)"
)
"""The exhaustive list a long-list catch speaker answers with."""
KINDS = ("repetition", "long-list")


def catch_item(
    item: SingleItem, kind: str, speaker: str, *, pattern: str = REPEATED[0]
) -> SingleItem:
    """A catch item of ``kind`` from a chat item: ``speaker`` (A or B) turned into an
    obvious machine; only that speaker is scored."""
    if not item.lines:
        raise InputError(f"item {item.id!r} has no chat to make a catch item from.", field="item")
    if speaker not in ("A", "B"):
        raise InputError("a catch speaker is A or B.", field="speaker")
    lines = list(item.lines)
    if kind == "repetition":
        lines = [
            Spoken(speaker=s.speaker, text=pattern) if s.speaker == speaker else s for s in lines
        ]
    elif kind == "long-list":
        # Its first reply after the other speaker's first message becomes the list.
        index = next((i for i, s in enumerate(lines) if s.speaker == speaker and i > 0), None)
        if index is None:
            index = next((i for i, s in enumerate(lines) if s.speaker == speaker), None)
        if index is None:
            raise InputError(f"item {item.id!r}: speaker {speaker} never speaks.", field="item")
        lines[index] = Spoken(speaker=lines[index].speaker, text=LONG_LIST)
    else:
        raise InputError(f"unknown catch kind {kind!r}.", hint=f"Use one of {', '.join(KINDS)}.")
    return item.model_copy(
        update={
            "id": f"catch:{kind}:{item.id}",
            "lines": lines,
            "judged": ["A", "B"],
            "truth": {speaker: "machine"},
            "catch": kind,
            "meta": {**item.meta, "catch_speaker": speaker},
        }
    )


def catch_items(items: Sequence[SingleItem], count: int, seed: int) -> list[SingleItem]:
    """``count`` catch items from chat items, kinds and speakers alternating, each from
    a different source where possible (drawn with ``seed``)."""
    chats = [item for item in items if item.lines and item.catch is None]
    if count <= 0:
        return []
    if not chats:
        raise InputError("catch items need chat items to be made from.", field="catch")
    rng = seeded_rng(seed, "single-catch")
    by_source: dict[str, list[SingleItem]] = {}
    for item in chats:
        by_source.setdefault(item.source, []).append(item)
    sources = sorted(by_source)
    rng.shuffle(sources)
    made = []
    for index in range(count):
        source = sources[index % len(sources)]
        base = rng.choice(by_source[source])
        kind = KINDS[index % len(KINDS)]
        speaker = "AB"[(index // len(KINDS)) % 2]
        pattern = REPEATED[(index // 2) % len(REPEATED)]
        made.append(catch_item(base, kind, speaker, pattern=pattern))
    # Two catch items of one base would share an id: number them.
    return [item.model_copy(update={"id": f"{item.id}#{n}"}) for n, item in enumerate(made, 1)]
