"""Breakdowns that mix nothing that should stay apart: each is computed within one judge
group (human judges, or one LLM judge run) and one bot model, so a "by turns" table never
averages human with LLM judges, nor the ELIZA baseline with the model under test. A
breakdown pooled over all of them exists only on request (``--pool``) and says so.
"""

from __future__ import annotations

import pandas as pd

from sdtt.analysis.defaults import DEFAULT_BOOTSTRAP, DEFAULT_MARGIN
from sdtt.analysis.metrics import breakdown, group_keys, is_baseline, test_parts

POOLED = "pooled over every judge type and bot model (--pool)"
"""How a pooled breakdown is titled."""
CONSTANT_WITHIN = ("model", "judge_type", "judge_kind", "judge_model")
"""Columns that take one value within a part: breaking a part down by them says nothing."""


def within_parts(frame: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """The test judgements split by judge group and bot model, titled e.g.
    ``Human judges, bot mock/chatty`` (human judges first, models in order)."""
    parts = []
    for judges, part in test_parts(frame):
        models = group_keys(part["model"])
        for model in sorted(models.unique()):
            shown = f"{model} (baseline)" if is_baseline(model) else model
            parts.append((f"{judges}, bot {shown}", part.loc[models == model]))
    return parts


def breakdown_tables(
    frame: pd.DataFrame,
    column: str,
    *,
    reps: int = DEFAULT_BOOTSTRAP,
    margin: float = DEFAULT_MARGIN,
    pool: bool = False,
    min_values: int = 1,
) -> list[tuple[str, pd.DataFrame]]:
    """``(title, rows)`` of a breakdown by ``column``: one table per part (see
    :func:`within_parts`) whose ``column`` has a value (at least ``min_values``
    different ones), and with ``pool`` one over everything, titled as pooled."""
    tables = []
    if column not in CONSTANT_WITHIN:
        for title, part in within_parts(frame):
            values = part[column].dropna()
            if values.nunique() >= min_values and len(values):
                rows = breakdown(part, column, reps=reps, margin=margin)
                tables.append((f"By {_name(column)}: {title}", rows))
    if pool and frame[column].notna().any():
        rows = breakdown(frame, column, reps=reps, margin=margin)
        tables.append((f"By {_name(column)}, {POOLED}", rows))
    return tables


def _name(column: str) -> str:
    return column.removeprefix("demo.")
