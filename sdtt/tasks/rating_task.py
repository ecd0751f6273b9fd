"""The rating task judges receive: items drawn from chats, the pairs to rate, the forms.

What a judge of ``sdtt align`` sees and nothing else (opaque ids, chat lines, the
question and scale); :mod:`sdtt.align.task` builds it and keeps the researcher's key.
Every survey tool that can field a rating task writes it and reads its answers (its
``rating_files`` and ``read_ratings`` in :mod:`sdtt.surveys`) as a :data:`RatingAnswer`
each, which :mod:`sdtt.align.rating_import` turns into ratings.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from sdtt.tasks.ids import by_id
from sdtt.tasks.layout import chat_html, scale_points
from sdtt.tasks.questionnaire import Line

TASK_VERSION = 1
ITEM_TITLES = ("Chat excerpt 1", "Chat excerpt 2")
RatingAnswer = tuple[str, str, str, float | None, str]
"""One answer as a survey tool reads it: (judge id, pair id, raw answer, seconds, where)."""


class RatingItem(BaseModel):
    """One item judges rate: a few numbered chat lines, no times, no names."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z][a-z0-9]{5,11}$", description="Opaque item id.")
    lines: list[Line] = Field(min_length=1)


class RatingPair(BaseModel):
    """One trial: two items, in the order they are shown."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z][a-z0-9]{5,11}$", description="Opaque pair id.")
    first: str
    second: str


class RatingTask(BaseModel):
    """Everything a rating judge receives, and nothing else."""

    model_config = ConfigDict(extra="forbid")

    version: int = TASK_VERSION
    id: str = Field(description="Opaque task id (judges may see it).")
    title: str
    intro: str
    end_text: str
    question: str
    scale_min: int
    scale_max: int
    min_label: str
    max_label: str
    items: list[RatingItem]
    pairs: list[RatingPair]
    forms: list[list[str]] = Field(
        default_factory=list,
        description="Pair ids each judge group rates, in order; empty when every judge "
        "rates every pair.",
    )

    def pair(self, pair_id: str) -> RatingPair:
        """The pair with this id; :class:`InputError` when there is none."""
        return by_id(self.pairs, pair_id, kind="pair", where="rating task")

    def item(self, item_id: str) -> RatingItem:
        """The item with this id; :class:`InputError` when there is none."""
        return by_id(self.items, item_id, kind="item", where="rating task")

    def scale(self) -> range:
        """Every allowed rating, lowest first."""
        return range(self.scale_min, self.scale_max + 1)


def scale_labels(task: RatingTask) -> list[tuple[int, str]]:
    """Every point of the scale with its label (the ends carry their descriptions)."""
    return scale_points(task.scale_min, task.scale_max, (task.min_label, task.max_label))


def pair_view_html(task: RatingTask, pair: RatingPair) -> str:
    """Both items of a pair as one escaped HTML fragment."""
    items = (task.item(pair.first), task.item(pair.second))
    return (
        "<div>"
        + "".join(
            chat_html(title, item.lines) for title, item in zip(ITEM_TITLES, items, strict=True)
        )
        + "</div>"
    )
