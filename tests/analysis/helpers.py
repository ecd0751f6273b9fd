"""Hand-made judgement records for the analysis tests."""

from __future__ import annotations

from typing import Any

from sdtt.tasks.judgements import Judgement


def judgement(
    pair: str,
    judge: str,
    correct: bool | None,
    *,
    bot_position: int = 1,
    excluded: str | None = None,
    kind: str = "test",
    x: int = 3,
    n: int | None = None,
    live_to: int | None = None,
    model: str = "openai/gpt-4o",
    demographics: dict[str, str] | None = None,
    topic: str | None = None,
    **condition: Any,
) -> Judgement:
    """One human judgement; ``correct=None`` means no answer.

    It shows the last ``x`` live turns up to ``live_to`` (default ``x``) of a bot chat with
    ``n`` pseudo-dialogue turns (None: not known).
    """
    choice = None
    if correct is not None:
        found_first = (bot_position == 1) == correct
        choice = "A" if found_first else "B"
    return Judgement(
        study="s",
        judge_id=judge,
        judge_type="human",
        pair_id=pair,
        pair_kind=kind,  # type: ignore[arg-type]
        choice=choice,  # type: ignore[arg-type]
        bot_position=bot_position,  # type: ignore[arg-type]
        correct=correct,
        demographics=demographics or {},
        excluded=excluded is not None,
        exclusion_reason=excluded,
        source="test",
        condition={
            "bot_meta": {"model": model} if n is None else {"model": model, "pseudo_turns": n},
            **({"pseudo_turns": None} if n is None else {}),
            "live_from": (live_to or x) - x + 1,
            "live_to": live_to or x,
            "topic": topic,
            **condition,
        },
    )
