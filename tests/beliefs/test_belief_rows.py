"""The beliefs held at each turn and the moments that moved belief most: the same rows
as their definitions give, for traces of any shape (points out of turn order, turns
missing, beliefs left out, turn 0), without a Python object per row or per step."""

from __future__ import annotations

from typing import Any

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from sdtt.beliefs.calibration import _condition, held_beliefs, moments, usable_traces
from sdtt.beliefs.traces import UNDECIDED, BeliefPoint, BeliefTrace
from tests.beliefs.helpers import trace
from tests.memory import peak_bytes


def _by_definition(traces: list[BeliefTrace]) -> pd.DataFrame:
    """The rows the docstring describes, worked out one turn at a time."""
    rows = []
    for found in usable_traces(traces):
        turns = [p.turn for p in found.points if p.turn is not None and p.belief is not None]
        if not turns:
            continue
        horizon = max(max(turns), found.x_turns, 1)
        for turn in range(1, horizon + 1):
            belief = found.belief_at(turn)
            if belief is not None:
                rows.append(
                    {**_condition(found), "turn": turn, "p": belief / 100, "final": turn == horizon}
                )
    return pd.DataFrame(rows)


_POINTS = st.lists(
    st.tuples(st.one_of(st.none(), st.integers(0, 8)), st.one_of(st.none(), st.integers(0, 100))),
    max_size=7,
)


def _moments_by_definition(traces: list[BeliefTrace], top: int) -> pd.DataFrame:
    """Every step, sorted by model, size (largest first), judge, item and turn; each
    model's first ``top``."""
    rows = []
    for found in usable_traces(traces):
        before = UNDECIDED
        for point in found.points:
            if point.belief is None or point.belief == before:
                continue
            shift = point.belief - before
            toward = shift if found.target_human else -shift
            rows.append(
                {
                    **_condition(found),
                    "turn": point.turn,
                    "before": before,
                    "after": point.belief,
                    "toward_truth": toward,
                    "text": point.text or "",
                }
            )
            before = point.belief
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    frame["size"] = frame["toward_truth"].abs()
    frame = frame.sort_values(
        ["model", "size", "judge_id", "item", "turn"], ascending=[True, False, True, True, True]
    )
    return frame.groupby("model", sort=True).head(top).drop(columns="size").reset_index(drop=True)


def _six_readings(count: int) -> list[BeliefTrace]:
    return [trace([10, 20, 30, 40, 50, 60], item_id=f"p{n}") for n in range(count)]


_SHAPES = st.lists(
    st.tuples(
        _POINTS,
        st.integers(1, 6),
        st.booleans(),
        st.sampled_from(["test", "catch"]),
        st.sampled_from(["mock/a", "mock/b"]),
    ),
    min_size=1,
    max_size=6,
)


def _traces(shapes: list[tuple[Any, ...]]) -> list[BeliefTrace]:
    traces = []
    for index, (points, live_to, human, kind, model) in enumerate(shapes):
        made: dict[str, Any] = {
            "judge_id": f"j{index % 2}",
            "item_id": f"p{index % 3}",
            "pair_kind": kind,
            "target_human": human,
            "bot_position": 2 if human else 1,
            "condition": {"bot_meta": {"model": model}, "live_from": 1, "live_to": live_to},
        }
        made["points"] = [
            BeliefPoint(turn=turn, belief=belief, source="slider", text=f"step {step}")
            for step, (turn, belief) in enumerate(points)
        ]
        traces.append(trace([], **made))
    return traces


@settings(max_examples=200, deadline=None)
@given(shapes=_SHAPES, top=st.integers(0, 4))
def test_the_moments_are_those_of_the_definition(shapes: list[tuple[Any, ...]], top: int) -> None:
    traces = _traces(shapes)
    expected = _moments_by_definition(traces, top)
    found = moments(traces, top=top)
    if expected.empty:
        assert found.empty
        return
    # The same rows. A step without a turn made the whole column floats (NaN) when the
    # other steps were kept too; only the values are compared.
    for frame in (found, expected):
        frame["turn"] = pd.to_numeric(frame["turn"])
    pd.testing.assert_frame_equal(found, expected, check_dtype=False)


def test_the_moments_keep_each_models_best_not_every_step() -> None:
    def peak(count: int) -> int:
        traces = _six_readings(count)
        return peak_bytes(lambda: moments(traces))

    peak(100)
    per_step = (peak(3000) - peak(1000)) / (2000 * 5)
    # Before: a dict of fourteen keys per step (over 1 KB); now a model's five best.
    assert per_step < 100, f"{per_step:.0f} bytes of peak memory per step"


@settings(max_examples=200, deadline=None)
@given(shapes=_SHAPES)
def test_the_rows_are_those_of_the_definition(shapes: list[tuple[Any, ...]]) -> None:
    traces = _traces(shapes)
    expected = _by_definition(traces)
    found = held_beliefs(traces)
    if expected.empty:
        assert found.empty
    else:
        pd.testing.assert_frame_equal(found, expected)


def test_a_row_costs_numbers_not_a_mapping() -> None:
    def peak(count: int) -> int:
        traces = _six_readings(count)
        return peak_bytes(lambda: held_beliefs(traces))

    peak(100)  # pandas' first frames, outside the count
    per_row = (peak(3000) - peak(1000)) / (2000 * 6)
    # Before: a dict of twelve keys per row (about 1.2 KB); now numbers, and a
    # trace's condition once.
    assert per_row < 300, f"{per_row:.0f} bytes of peak memory per row"
