"""Hand-made belief traces for the belief tests."""

from __future__ import annotations

from typing import Any

from sdtt.beliefs.traces import BeliefPoint, BeliefTrace


def trace(beliefs: list[float | None], **changes: Any) -> BeliefTrace:
    """A pair trace with one slider point per turn (bot in chat 2 unless changed)."""
    fields: dict[str, Any] = {
        "study": "s",
        "judge_id": "j1",
        "judge_type": "human",
        "item_id": "pabc234",
        "bot_position": 2,
        "target_human": True,
        "source": "test",
        "points": [
            BeliefPoint(turn=t, belief=b, source="slider") for t, b in enumerate(beliefs, 1)
        ],
        "condition": {"bot_meta": {"model": "mock/a"}, "live_from": 1, "live_to": len(beliefs)},
    }
    fields.update(changes)
    return BeliefTrace.model_validate(fields)
