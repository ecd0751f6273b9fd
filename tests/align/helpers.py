"""A small rating task built from the questionnaire fixtures' bot and human chats."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sdtt.align.task import RatingBuild, build_rating_task
from sdtt.dialogue.store import write_transcripts
from sdtt.tasks.rating_spec import RatingSource, RatingSpec
from sdtt.tasks.study import StudySpec
from tests.questionnaires.helpers import bots, conversation, humans


def write_sources(folder: Path) -> None:
    """``bots.jsonl``, ``humans.jsonl`` and ``planted.jsonl`` (markup in every line of
    side A) in ``folder``."""
    write_transcripts(folder / "bots.jsonl", bots())
    write_transcripts(folder / "humans.jsonl", humans())
    planted = conversation("planted-1", None, 3, tag="p", planted_at={0, 1, 2})
    write_transcripts(folder / "planted.jsonl", [planted])


def rating_spec(*, planted: bool = False, **options: Any) -> StudySpec:
    """A study spec whose rating task draws from ``bots.jsonl`` and ``humans.jsonl`` (and
    ``planted.jsonl`` when ``planted``)."""
    sources = [
        RatingSource(path="bots.jsonl", side="bot"),
        RatingSource(path="humans.jsonl", side="human"),
    ]
    if planted:
        sources.append(RatingSource(path="planted.jsonl", side="human"))
    rating = RatingSpec(sources=sources, **options)
    return StudySpec(name="align", seed=5, rating=rating)


def build(folder: Path, **options: Any) -> RatingBuild:
    """Write the sources into ``folder`` and build the task from them."""
    write_sources(folder)
    return build_rating_task(rating_spec(**options), folder)
