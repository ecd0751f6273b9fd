"""What a table of judgements leaves out of pass rates, worked out on its columns, is
what the rules over its rows say: the exclusion tally ``sdtt score`` and ``sdtt report``
print, and the repeated answers left out."""

from __future__ import annotations

import warnings

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from sdtt.analysis.table import exclusion_tally, without_repeats
from sdtt.tasks.judgements import tally_exclusions

_REASONS = st.sampled_from(
    [None, "", " ", "model_error: timeout", "model_error", "non_compliant", "a:b:c", " :x", "é"]
)
_ROWS = st.lists(
    st.tuples(st.sampled_from(["test", "catch", "practice"]), st.booleans(), _REASONS),
    max_size=40,
)


@given(rows=_ROWS)
def test_the_table_tally_is_the_row_tally(rows: list[tuple[str, bool, str | None]]) -> None:
    frame = pd.DataFrame(
        {
            "pair_kind": pd.Series([row[0] for row in rows], dtype=object),
            "excluded": pd.Series([row[1] for row in rows], dtype=bool),
            "exclusion_reason": pd.Series([row[2] for row in rows], dtype=object),
        }
    )
    found = exclusion_tally(frame)
    expected = tally_exclusions(rows)
    assert found == expected
    assert found.line() == expected.line()


_KEYED = st.lists(
    st.tuples(
        st.sampled_from(["s", "t"]),
        st.sampled_from(["j1", "j2"]),
        st.sampled_from(["p1", "p2"]),
        st.sampled_from([None, "original", "swapped", 1.0, float("nan")]),
        st.booleans(),
        st.sampled_from([None, "model_error: timeout", "non_compliant"]),
    ),
    max_size=30,
)


@given(rows=_KEYED)
def test_repeats_are_left_out_as_the_docstring_says(rows: list[tuple[object, ...]]) -> None:
    """Of the included rows of one (study, judge, pair, order), an order that is not
    text counting as none, the first; every excluded row, but a model error a later row
    of its key answered again."""
    names = ["study", "judge_id", "pair_id", "order", "excluded", "exclusion_reason"]
    frame = pd.DataFrame({name: [row[i] for row in rows] for i, name in enumerate(names)})
    frame = frame.astype({"excluded": bool, "order": object})

    def key(row: tuple[object, ...]) -> tuple[object, ...]:
        return (*row[:3], row[3] if isinstance(row[3], str) else None)

    last = {key(row): index for index, row in enumerate(rows)}
    kept, used = [], set()
    for index, row in enumerate(rows):
        error = row[4] and isinstance(row[5], str) and row[5].startswith("model_error")
        if error and last[key(row)] > index:
            continue
        if not row[4]:
            if key(row) in used:
                continue
            used.add(key(row))
        kept.append(index)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = without_repeats(frame, ["j.jsonl"])
    expected = frame.iloc[kept].reset_index(drop=True)
    pd.testing.assert_frame_equal(found.reset_index(drop=True), expected)
