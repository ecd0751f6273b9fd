"""The score tables' rows, computed for all groups at once from arrays of codes, are the
rows :func:`summarise` gives each group's own table (what the tables printed before)."""

from __future__ import annotations

import math

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from sdtt.analysis.metrics import group_keys, grouped, summarise


@st.composite
def judgement_frames(draw: st.DrawFn) -> pd.DataFrame:
    """Small tables mixing paired LLM judgements (both orders, odd orders), single
    transcripts, single-witness verdicts, exclusions, catch pairs and unanswered rows."""
    rows = []
    for _ in range(draw(st.integers(1, 12)) * 4):
        kind = draw(st.sampled_from(["paired", "paired", "single", "witness"]))
        correct = draw(st.sampled_from([1.0, 0.0, 1.0, 0.0, float("nan")]))
        excluded = draw(st.booleans()) if draw(st.integers(0, 4)) == 0 else False
        row = {
            "judge_id": draw(st.sampled_from(["j1", "j2"])),
            "judge_kind": "single" if kind == "single" else "paired",
            "pair_id": draw(st.sampled_from(["p1", "p2", "p3"])),
            "pair_kind": draw(st.sampled_from(["test", "test", "test", "catch"])),
            "choice": draw(st.sampled_from(["A", "B", None])) if kind == "paired" else None,
            "bot_position": draw(st.sampled_from([1, 2])),
            "correct": correct,
            "excluded": excluded,
            "exclusion_reason": (
                draw(st.sampled_from(["tie", "model_error: boom", "attention: q3"]))
                if excluded
                else None
            ),
            "order": draw(st.sampled_from(["original", "swapped"] * 3 + [None, "sideways"])),
            "label1": draw(st.sampled_from(["ai", "human"])) if kind == "single" else None,
            "label2": draw(st.sampled_from(["ai", "human"])) if kind == "single" else None,
            "witness": draw(st.sampled_from(["bot", "human"])) if kind == "witness" else None,
            "verdict": draw(st.sampled_from(["ai", "human", None])) if kind == "witness" else None,
            "model": draw(st.sampled_from(["m1", "m2", None])),
            "turns": draw(st.sampled_from([3.0, 10.0, float("nan")])),
        }
        rows.append(row)
    return pd.DataFrame(rows)


def same(left: object, right: object) -> bool:
    if isinstance(left, float) and isinstance(right, float):
        return left == right or (math.isnan(left) and math.isnan(right))
    return left == right


@settings(max_examples=80, deadline=None)
@given(judgement_frames(), st.sampled_from([["model"], ["turns"], ["model", "turns"]]))
def test_every_group_row_is_what_its_own_table_gives(frame: pd.DataFrame, by: list[str]) -> None:
    rows = grouped(frame, by, reps=20).to_dict("records")
    test = frame.loc[frame["pair_kind"] == "test"]
    keys = [group_keys(test[column]).rename(column) for column in by]
    expected = []
    if len(test):
        for value, group in test.groupby(keys, sort=False):
            values = value if isinstance(value, tuple) else (value,)
            own = summarise(group, reps=20).row()
            expected.append({**dict(zip(by, values, strict=True)), **own})
    assert sorted(map(str, (row[by[0]] for row in rows))) == sorted(
        map(str, (row[by[0]] for row in expected))
    )
    by_key = {tuple(row[column] for column in by): row for row in expected}
    assert len(rows) == len(by_key)
    for row in rows:
        want = by_key[tuple(row[column] for column in by)]
        assert row.keys() == want.keys()
        for name in row:
            assert same(row[name], want[name]), (name, row[name], want[name])
