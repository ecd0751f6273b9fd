"""Single items: one stimulus and the truth about each speaker judges label.

A :class:`SingleItem` is what one screen of a single-item test shows (a chat's first
exchanges, labelled parts such as a cue and its association, an image with its caption)
plus what the judge never sees: the source it came from, the cut, whether each judged
speaker is a human or a machine, the topic and free-form provenance. Conversations become
items with :func:`cut_items`: each cut (the first 3, 6, ..., 24 exchanges, any list) of
each conversation is an item of its own. An exchange is one message, as in the papers
(24 exchanges = 12 messages from each speaker).

Items of other tasks plug in by building :class:`SingleItem` values with ``parts`` or
``image`` and a truth keyed by the part they judge (``{"Association": "machine"}``), and
writing them with :func:`write_items`; everything downstream (design, export, import,
LLM judges, scoring) is the same.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from sdtt.dialogue.message import USER, Transcript
from sdtt.dialogue.record_files import TableKind, read_records, write_records
from sdtt.errors import InputError
from sdtt.tasks.single_task import Part, Verdict

ITEMS_VERSION = 1
DEFAULT_CUTS = (3, 6, 9, 12, 15, 18, 21, 24)
"""The papers' cuts: the first 3, 6, ..., 24 exchanges."""
SPEAKERS_KEY = "speakers"
"""Transcript ``meta`` key naming who each side is: ``{"A": "human", "B": "machine"}``."""
Speaker = Literal["A", "B"]


class Spoken(BaseModel):
    """One message of an item's chat: who (A or B) and what, without time."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    speaker: Speaker
    text: str


class SingleItem(BaseModel):
    """One item and its truth (never shown to judges)."""

    model_config = ConfigDict(extra="forbid")

    version: int = ITEMS_VERSION
    id: str = Field(description="Readable id for researchers, e.g. 'chat7@12'.")
    source: str = Field(description="What it was cut from; a judge sees one item per source.")
    cut: int | None = Field(default=None, ge=1, description="Exchanges shown (None: no cut).")
    lines: list[Spoken] = Field(default_factory=list)
    parts: list[Part] = Field(default_factory=list)
    image: str | None = Field(default=None, description="An http(s) URL or data URI.")
    judged: list[str] = Field(
        default_factory=list, description="Speakers judges label, in order (default: truth's)."
    )
    truth: dict[str, Verdict] = Field(description="Who each scored speaker is.")
    topic: str | None = None
    catch: str | None = Field(default=None, description="The kind of an attention catch item.")
    meta: dict[str, Any] = Field(default_factory=dict, description="Provenance (models...).")

    @model_validator(mode="after")
    def _consistent(self) -> SingleItem:
        if not (self.lines or self.parts or self.image):
            raise ValueError("an item shows a chat, labelled parts or an image")
        if not self.truth:
            raise ValueError("an item needs the truth about at least one speaker")
        if not self.judged:
            self.judged = list(self.truth)
        missing = [key for key in self.truth if key not in self.judged]
        if missing:
            raise ValueError(f"truth about {missing} who judges are not asked about")
        if self.image is not None and not self.image.startswith(("https://", "http://", "data:")):
            raise ValueError("image must be an http(s) URL or a data URI")
        return self

    @property
    def klass(self) -> str:
        """The class by judged speaker in order: ``HH``, ``HM``, ``MH``, ``MM`` for chats
        (``?`` for a judged speaker without truth, as the plain side of a catch item)."""
        return "".join(
            {"human": "H", "machine": "M"}[self.truth[key]] if key in self.truth else "?"
            for key in self.judged
        )


def speaker_truth(transcript: Transcript) -> dict[str, Verdict]:
    """Who speaker A (side ``user``) and B (side ``response``) of a transcript are.

    An explicit ``meta["speakers"]`` wins; otherwise a chat without a condition is a human
    chat (a corpus or an import), and a bot chat's B is the machine, its A a human unless
    its interrogator was a script or a model.
    """
    given = transcript.meta.get(SPEAKERS_KEY)
    if given is not None:
        if (
            not isinstance(given, dict)
            or set(given) != {"A", "B"}
            or any(value not in ("human", "machine") for value in given.values())
        ):
            raise InputError(
                f"conversation {transcript.id!r}: meta.speakers must map A and B to "
                "'human' or 'machine'.",
                field="meta.speakers",
                hint='Write it as {"A": "human", "B": "machine"}.',
            )
        return {"A": given["A"], "B": given["B"]}
    condition = transcript.condition
    if condition is None:
        return {"A": "human", "B": "human"}
    interrogator = condition.interrogator
    side_a: Verdict = "human" if interrogator in (None, "human") else "machine"
    return {"A": side_a, "B": "machine"}


def cut_items(
    transcripts: Iterable[Transcript], cuts: Sequence[int] = DEFAULT_CUTS
) -> tuple[list[SingleItem], list[tuple[str, int]]]:
    """Every cut of every conversation as an item, and the (conversation, cut) pairs left
    out because the conversation is shorter than the cut."""
    if not cuts or any(cut < 1 for cut in cuts):
        raise InputError("cuts must be positive numbers of exchanges.", field="cuts")
    items: list[SingleItem] = []
    skipped: list[tuple[str, int]] = []
    for transcript in transcripts:
        truth = speaker_truth(transcript)
        spoken = [
            Spoken(speaker="A" if message.side == USER else "B", text=message.text)
            for message in transcript.messages
        ]
        klass = "".join("H" if truth[k] == "human" else "M" for k in ("A", "B"))
        meta: dict[str, Any] = {"class": klass}
        condition = transcript.condition
        if condition is not None:
            # Kept in the key, and looked for in the chat text (see chat_leaks).
            named = {"model": condition.model, "persona": condition.persona,
                     "interrogator": condition.interrogator}  # fmt: skip
            meta.update({k: v for k, v in named.items() if v})
        if isinstance(transcript.meta.get("models"), dict):
            meta["models"] = sorted(str(v) for v in transcript.meta["models"].values())
        for cut in sorted(set(cuts)):
            if cut > len(spoken):
                skipped.append((transcript.id, cut))
                continue
            items.append(
                SingleItem(
                    id=f"{transcript.id}@{cut}",
                    source=transcript.id,
                    cut=cut,
                    lines=spoken[:cut],
                    truth=dict(truth),
                    topic=transcript.topic,
                    meta=meta,
                )
            )
    return items, skipped


ITEMS = TableKind(SingleItem, ITEMS_VERSION, "item", "items")
"""What items files hold."""


def write_items(path: str | Path, items: Iterable[SingleItem]) -> int:
    """Write items to a JSONL file (replacing it when complete); returns how many."""
    return write_records(path, items)


def read_items(path: str | Path) -> list[SingleItem]:
    """Read an items file written by :func:`write_items` (or by hand, one item a line)."""
    items = read_records(path, ITEMS)
    seen: set[str] = set()
    for item in items:
        if item.id in seen:
            raise InputError(f"item id {item.id!r} is used twice.", path=path, field="id")
        seen.add(item.id)
    return items
