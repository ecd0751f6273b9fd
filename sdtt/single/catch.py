"""Attention catch items of single-item tests: items no attentive judge takes for a
person's, mixed in as checks. Their texts are sdtt's own, in the papers' shapes.

Chat items (:func:`catch_items`) come in two shapes, made from real items: one speaker
is an obvious machine that either repeats one line over and over (a stuck pattern or an
error message), or answers one reply with an exhaustive list no one would type in a
chat. Only that speaker is scored (as a machine); the other keeps its own lines and is
asked about but not scored.

Responses (:func:`response_catch_items`, the papers' Table S3) are a word association
that repeats its cue ("healthy" -> "healthy") or a caption of one word repeated four
times ("with with with with"): a :class:`~sdtt.single.response.SingleResponse` with
``catch=True`` and truth ``machine``, shown to judges like any item (nothing in it says
it is a check), scored only as an attention check, never used by the SVM or LLM judges.
"""

from __future__ import annotations

from collections.abc import Sequence

from sdtt.errors import InputError
from sdtt.seeds import seeded_rng
from sdtt.single.items import SingleItem, Spoken
from sdtt.single.response import SingleResponse, Task, response_id

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


FILLER_WORDS = ("with", "the", "and", "on", "of", "in", "a", "is")
"""Words a caption catch item repeats."""
REPEATS = 4


def response_catch_items(
    task: Task, stimuli: Sequence[str], count: int, *, seed: int = 0
) -> list[SingleResponse]:
    """``count`` catch responses (word associations, captions) on stimuli drawn (without
    repeats) from ``stimuli``."""
    if not 0 < count <= len(stimuli):
        raise InputError(
            f"cannot make {count} catch items from {len(stimuli)} stimuli.",
            field="count",
            hint="Ask for at least 1 and at most one per stimulus.",
        )
    rng = seeded_rng(seed, "catch", task)
    chosen = rng.sample(list(stimuli), count)
    items = []
    for stimulus in chosen:
        filler = " ".join([rng.choice(FILLER_WORDS)] * REPEATS)
        text = stimulus if task == "wordassoc" else filler
        items.append(
            SingleResponse(
                task=task,
                id=response_id(task, stimulus, text, "catch", str(seed)),
                stimulus=stimulus,
                response=text,
                truth="machine",
                agent="catch",
                catch=True,
                origin="catch",
                meta={"seed": seed},
            )
        )
    return items
