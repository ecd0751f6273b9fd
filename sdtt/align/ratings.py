"""Similarity ratings as a versioned JSONL table, one record per judge and pair.

Human answers (imported from a survey tool) and LLM participants' answers share the
format. A rating that could not be read is kept with ``rating: null`` and an exclusion
reason, never guessed. Like judgement files, a file may be appended to by resumed runs;
:func:`load_ratings` keeps the first usable answer per (task, judge, pair, order).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from sdtt.dialogue.record_files import TableKind, append_records, read_records
from sdtt.dialogue.shown import migrate_answer

RATING_VERSION = 1
"""Format version of rating records; bump on breaking changes."""

JudgeType = Literal["human", "llm"]


class Rating(BaseModel):
    """One judge's similarity rating of one pair of items."""

    model_config = ConfigDict(extra="forbid")

    version: int = Field(default=RATING_VERSION, description="Record format version.")
    task: str = Field(description="Name of the rating task (the study's name).")
    task_id: str = Field(description="Id of the built rating task.")
    judge_id: str = Field(description="A participant id, or an LLM participant id.")
    judge_type: JudgeType
    judge_model: str | None = Field(default=None, description="provider/model of an LLM.")
    cohort: str = Field(
        description="The group the judge belongs to: 'human', or the LLM cohort's name "
        "(model and hyperparameters)."
    )
    pair_id: str
    first: str = Field(description="Id of the item shown first.")
    second: str = Field(description="Id of the item shown second.")
    rating: int | None = Field(description="The rating on the task's scale; None if none.")
    scale_min: int
    scale_max: int
    response_time_s: float | None = Field(default=None, ge=0)
    excluded: bool = False
    exclusion_reason: str | None = None
    source: str = Field(description="Where it came from, e.g. 'surveyjs:results.json'.")
    rater: dict[str, Any] = Field(
        default_factory=dict,
        description="Who rated, beyond the judge id: an LLM participant's settings "
        "(temperature, prompt variant, seed, participant, identity, trial; raw_answers when "
        "none could be read), or where a person's answer came from ({'where': ...}).",
    )

    @model_validator(mode="before")
    @classmethod
    def _older_form(cls, data: Any) -> Any:
        # Records written before named the rater's settings `condition`.
        return migrate_answer(data, into="rater")

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.excluded != bool(self.exclusion_reason):
            raise ValueError("excluded and exclusion_reason must go together")
        if self.rating is not None and not self.scale_min <= self.rating <= self.scale_max:
            raise ValueError(f"rating {self.rating} is off the scale")
        if self.rating is None and not self.excluded:
            raise ValueError("a record without a rating must be excluded")
        return self


RatingKey = tuple[str, str, str, str]
"""(task id, judge id, pair id, item shown first): what one rating answers. An LLM
participant may rate a pair in both orders, as Ogg et al.'s did."""


def rating_key(rating: Rating) -> RatingKey:
    """The question one record answers."""
    return (rating.task_id, rating.judge_id, rating.pair_id, rating.first)


def is_model_error(rating: Rating) -> bool:
    """True when a provider failure, not the judge, produced this record."""
    return rating.excluded and (rating.exclusion_reason or "").startswith("model_error")


def settled_rating_keys(ratings: Iterable[Rating]) -> set[RatingKey]:
    """Keys a resumed run must not ask again (model errors are asked again)."""
    return {rating_key(r) for r in ratings if not is_model_error(r)}


RATINGS = TableKind(Rating, RATING_VERSION, "rating", "rating format")
"""What rating files hold."""


def append_ratings(path: str | Path, ratings: Iterable[Rating]) -> int:
    """Append records, each flushed as written; returns how many."""
    return append_records(path, ratings)


def read_ratings(path: str | Path) -> list[Rating]:
    """Read a rating file as it is; a bad record raises InputError naming its line."""
    return read_records(path, RATINGS)


class RepeatedRatingWarning(UserWarning):
    """Rating files held the same answer more than once; the repeats were left out."""


def load_ratings(paths: Sequence[str | Path]) -> list[Rating]:
    """Usable ratings of several files: one per (task, judge, pair, order), the first
    given.

    Excluded records (no readable rating) are left out: a missing rating is missing.
    Repeats (a file imported twice by hand, say) are left out with a warning.
    """
    seen: set[RatingKey] = set()
    kept: list[Rating] = []
    repeated: list[Rating] = []
    for path in paths:
        for rating in read_ratings(path):
            key = rating_key(rating)
            if rating.rating is None:
                continue
            if key in seen:
                repeated.append(rating)
                continue
            seen.add(key)
            kept.append(rating)
    if repeated:
        first = repeated[0]
        warnings.warn(
            RepeatedRatingWarning(
                f"{len(repeated)} repeated rating(s) left out: the same judge and pair was "
                f"recorded more than once (first: judge {first.judge_id!r}, pair "
                f"{first.pair_id!r}). The first record of each is used."
            ),
            stacklevel=2,
        )
    return kept
