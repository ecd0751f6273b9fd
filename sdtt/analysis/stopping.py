"""The sequential stopping rule per judge group and condition, as ``sdtt score
--sequential`` prints it: judgements are taken in the order they were recorded (file
order, the files in the order given), which is the order they arrived when a judge run
or an import appends them as they come."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from sdtt.analysis.metrics import CONDITION, condition_label, group_keys, test_parts
from sdtt.analysis.sequential import SequentialResult, sequential_test
from sdtt.analysis.table import usable


@dataclass(frozen=True)
class StoppingTable:
    """One judge group's conditions with the state of the stopping rule."""

    title: str
    header: list[str]
    rows: list[list[str]]
    results: list[SequentialResult]


def stopping_tables(
    frame: pd.DataFrame, *, margin: float, alpha: float = 0.05
) -> list[StoppingTable]:
    """One table per judge group (as the score tables split them), one row per
    condition: judgements so far, the anytime-valid interval of the pass rate and
    whether, and at which judgement, the stopping rule was met."""
    tables = []
    for title, part in test_parts(frame):
        used = usable(part)
        if used.empty:
            continue
        keys = [group_keys(used[column]).rename(column) for column in CONDITION]
        rows: list[list[str]] = []
        results: list[SequentialResult] = []
        # groupby keeps each group's rows in frame order: the order judgements came.
        for value, group in used.groupby(keys, sort=True):
            values = value if isinstance(value, tuple) else (value,)
            label = condition_label(dict(zip(CONDITION, values, strict=True)))
            result = sequential_test(
                group["correct"].to_numpy(dtype=float) > 0.5, margin=margin, alpha=alpha
            )
            results.append(result)
            rows.append(
                [
                    label,
                    str(result.judgements),
                    f"{100 * result.low:.1f}% - {100 * result.high:.1f}%",
                    result.line(),
                ]
            )
        header = ["condition", "judgements", f"{100 * (1 - alpha):g}% sequence", "stopping rule"]
        tables.append(StoppingTable(f"{title}: sequential judging", header, rows, results))
    return tables
