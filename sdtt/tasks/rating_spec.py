"""The ``[rating]`` section of a study spec: a pairwise similarity rating task."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

Unit = Literal["message", "burst", "excerpt"]
UNITS: tuple[Unit, ...] = ("message", "burst", "excerpt")
Side = Literal["bot", "human"]

DEFAULT_QUESTION = "How similar are these two pieces of chat in their writing style?"
DEFAULT_INTRO = (
    "You will see two short pieces of text chat at a time. Rate how similar they are, "
    "using the scale under them. There are no right or wrong answers: go with your "
    "impression. Take your time."
)
DEFAULT_END = "Thank you for taking part. Your answers have been recorded."


class RatingSource(BaseModel):
    """Where items come from: a transcript file (every conversation, or ``file#id``)
    whose side B is a bot or a person, or a built study folder (both sides of its
    test pairs, each side known from its answer key)."""

    model_config = ConfigDict(extra="forbid")

    path: str | None = Field(default=None, description="Transcript file, or file#id.")
    side: Side | None = Field(default=None, description="'bot' or 'human' (with path).")
    study: str | None = Field(default=None, description="A built study folder.")

    @model_validator(mode="after")
    def _one_kind(self) -> Self:
        if (self.path is None) == (self.study is None):
            raise ValueError("give either path (with side) or study")
        if self.path is not None and self.side is None:
            raise ValueError("a transcript source needs side = 'bot' or 'human'")
        return self


class RatingSpec(BaseModel):
    """A pairwise similarity rating task: items, a question, a scale and a design."""

    model_config = ConfigDict(extra="forbid")

    title: str = Field(default="Chat similarity", min_length=1, description="Title judges see.")
    intro: str = Field(default=DEFAULT_INTRO, description="Instructions shown first.")
    end_text: str = Field(default=DEFAULT_END, description="Shown after the last rating.")
    question: str = Field(default=DEFAULT_QUESTION, min_length=1, description="Asked per pair.")
    scale_min: int = Field(default=1, description="Lowest rating (least similar).")
    scale_max: int = Field(default=7, description="Highest rating (most similar).")
    min_label: str = Field(default="Not at all similar", description="Label of the lowest.")
    max_label: str = Field(default="Very similar", description="Label of the highest.")
    unit: Unit = Field(
        default="burst",
        description="'message' (one side-B message), 'burst' (side B's run of messages in "
        "one turn) or 'excerpt' (excerpt_turns whole turns, both sides).",
    )
    excerpt_turns: int = Field(default=2, ge=1, description="Turns of an 'excerpt' item.")
    items_per_source: int = Field(
        default=4, ge=1, description="Items drawn (seeded) from each source side."
    )
    pairs_per_judge: int | None = Field(
        default=None,
        ge=1,
        description="Pairs each judge rates; leave out for every judge to rate all pairs. "
        "Then every pair is rated ratings_per_pair times across the forms.",
    )
    ratings_per_pair: int = Field(
        default=1, ge=1, description="With pairs_per_judge: forms that rate each pair."
    )
    sources: list[RatingSource] = Field(min_length=1)

    @model_validator(mode="after")
    def _scale(self) -> Self:
        if self.scale_max - self.scale_min < 1:
            raise ValueError("scale_max must be greater than scale_min")
        if self.scale_max - self.scale_min > 100:
            raise ValueError("the scale may have at most 101 points")
        return self
