"""Word associations and captions as single items, so judges answer them in a survey.

A usable :class:`~sdtt.single.response.SingleResponse` becomes one
:class:`~sdtt.single.items.SingleItem`: a word association shows the parts ``Cue`` and
``Association`` and judges say who wrote the association; a caption shows its image and
the part ``Caption``. The item's ``source`` is the stimulus (the cue, the image's file
name), the key the balanced design groups by, so no judge sees two responses to one cue
or one image. Catch responses become catch items (kind ``repetition``: a cue repeated as
its own association, a word repeated four times), which the design puts first on each
form and scoring counts as attention checks. Responses post-processing disqualified are
left out; who wrote a response stays in the item's truth and meta, which only the key
holds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sdtt.errors import InputError
from sdtt.models.base import Image
from sdtt.single.items import SingleItem
from sdtt.single.items_html import image_src
from sdtt.single.response import SingleResponse
from sdtt.tasks.single_task import Part

JUDGED = {"wordassoc": "Association", "caption": "Caption"}
"""The part judges label, per task: the truth is keyed by it."""
CUE = "Cue"
CATCH_KIND = "repetition"
"""Both tasks' catch items repeat something (the cue, or one word four times)."""


@dataclass
class Converted:
    """The items made from response files, and what was left out."""

    items: list[SingleItem] = field(default_factory=list)
    excluded: dict[str, int] = field(default_factory=dict)
    """Responses post-processing disqualified, per reason."""


def response_item(
    record: SingleResponse,
    *,
    images: Mapping[str, Image] | None = None,
    image_base: str | None = None,
) -> SingleItem:
    """``record`` as a single item: the cue and association, or the image (embedded from
    ``images`` as a data URI, or linked under the http(s) URL ``image_base``) and caption."""
    judged = JUDGED[record.task]
    meta: dict[str, Any] = {"task": record.task, "class": record.truth[0].upper()}
    if record.agent and record.truth == "machine" and not record.catch:
        # The machine's name, so build's leak check can warn when an item's text says it.
        meta["model"] = record.agent
    meta["response"] = record.id
    meta["origin"] = record.origin
    if record.task == "wordassoc":
        parts = [Part(label=CUE, text=record.stimulus), Part(label=judged, text=record.response)]
        image = None
    else:
        if image_base is not None and not image_base.startswith(("https://", "http://")):
            raise InputError(
                f"--image-base {image_base!r} is not an http(s) URL.",
                field="--image-base",
                hint="Link images under the URL you upload them to, or embed them (--images).",
            )
        parts = [Part(label=judged, text=record.response)]
        image = image_src(record.stimulus, images, image_base)
    return SingleItem(
        id=f"{record.task}:{record.stimulus}:{record.id}",
        source=record.stimulus,
        parts=parts,
        image=image,
        judged=[judged],
        truth={judged: record.truth},
        catch=CATCH_KIND if record.catch else None,
        meta=meta,
    )


def response_items(
    records: Iterable[SingleResponse],
    *,
    task: str,
    images: Mapping[str, Image] | None = None,
    image_base: str | None = None,
) -> Converted:
    """Every usable response of ``task`` as an item (see the module's docstring);
    :class:`InputError` for a response of another task, so files are not mixed up."""
    converted = Converted()
    seen: set[str] = set()
    for record in records:
        if record.task != task:
            raise InputError(
                f"response {record.id} ({record.origin}) is a {record.task} response, not "
                f"a {task} one.",
                field="task",
                hint=f"Give only {task} response files.",
            )
        if record.exclusion_reason is not None:
            reason = record.exclusion_reason
            converted.excluded[reason] = converted.excluded.get(reason, 0) + 1
            continue
        if record.id in seen:
            # The same file given twice, or one response imported twice: one item.
            continue
        seen.add(record.id)
        converted.items.append(response_item(record, images=images, image_base=image_base))
    if not converted.items:
        raise InputError(
            f"no usable {task} responses to make items from.",
            hint="Give the files written by generate, import and catch.",
        )
    return converted


def summary(items: Sequence[SingleItem]) -> str:
    """How many items of each kind: "12 items (6 human, 6 machine) and 2 catch items"."""
    real = [item for item in items if item.catch is None]
    humans = sum(item.klass == "H" for item in real)
    catch = len(items) - len(real)
    return (
        f"{len(real)} items ({humans} human, {len(real) - humans} machine) on "
        f"{len({item.source for item in real})} stimuli, and {catch} catch items"
    )
