"""Human ratings back from the survey tools, as :class:`~sdtt.align.ratings.Rating` records.

Each tool that can field a rating task reads its response files
(:attr:`sdtt.surveys.tool.SurveyTool.rating`, each tool's ``read_ratings`` in its module
of :mod:`sdtt.surveys`); this module turns the answers into ratings.
An answer off the scale is kept as an excluded record without a rating; a pair a judge
was not shown (no answer) gives no record.
"""

from __future__ import annotations

from pathlib import Path

from sdtt.align.ratings import Rating
from sdtt.align.task import RatingKey
from sdtt.errors import InputError
from sdtt.surveys.tools import TOOLS, rating_tools
from sdtt.tasks.rating_task import RatingAnswer, RatingTask, scale_labels


def read_scale_value(task: RatingTask, raw: str) -> int | None:
    """The rating ``raw`` names: a scale value or its exact label; None otherwise."""
    text = raw.strip()
    for value, label in scale_labels(task):
        if text in (str(value), label) or text.casefold() == label.casefold():
            return value
    return None


def _rating(task: RatingTask, key: RatingKey, answer: RatingAnswer, fmt: str, path: Path) -> Rating:
    judge_id, pair_id, raw, seconds, where = answer
    pair = task.pair(pair_id)
    value = read_scale_value(task, raw)
    reason = None
    if value is None:
        reason = (
            f"unreadable: answer {raw[:40]!r} is not on the scale {task.scale_min}-{task.scale_max}"
        )
    return Rating(
        task=key.task,
        task_id=task.id,
        judge_id=judge_id,
        judge_type="human",
        cohort="human",
        pair_id=pair.id,
        first=pair.first,
        second=pair.second,
        rating=value,
        scale_min=task.scale_min,
        scale_max=task.scale_max,
        response_time_s=seconds,
        excluded=reason is not None,
        exclusion_reason=reason,
        source=f"{fmt}:{path.name}",
        rater={"where": where},
    )


def import_ratings(path: Path, task: RatingTask, key: RatingKey, fmt: str) -> list[Rating]:
    """Every rating in a response file of format ``fmt``."""
    tool = TOOLS.get(fmt)
    if tool is None or tool.rating is None:
        raise InputError(
            f"format {fmt!r} is not supported for rating tasks.",
            field="--format",
            hint=f"Use one of {', '.join(rating_tools())}.",
        )
    return [_rating(task, key, answer, fmt, path) for answer in tool.rating.read(path, task)]
