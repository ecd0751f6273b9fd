"""The pass-rate tables of ``sdtt score`` (and of a study's report) as tidy rows: one row
per table x judge group x condition (or breakdown level) x statistic, with the number of
judgements it rests on and, for a rate, its 95% interval and how it was computed.

The rows come from the same functions the printed tables do (:func:`condition_tables`'
grouping by :data:`CONDITION`, :func:`breakdown`), so their numbers are the table's, and
``n`` is the table's "used" column: a CSV or JSON file of them loads into pandas, R or a
spreadsheet without reading a Rich table.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from sdtt.analysis.defaults import DEFAULT_BOOTSTRAP, DEFAULT_MARGIN
from sdtt.analysis.metrics import (
    CONDITION,
    breakdown,
    condition_label,
    grouped_by_judges,
)
from sdtt.analysis.within import CONSTANT_WITHIN, within_parts
from sdtt.spreadsheet import safe_cell

COLUMNS = (
    "table",
    "judge_group",
    "condition",
    "breakdown",
    "level",
    "statistic",
    "value",
    "n",
    "pairs",
    "judges",
    "excluded",
    "ci_low",
    "ci_high",
    "ci_level",
    "ci_method",
)
"""The columns of every tidy row (``breakdown`` and ``level`` empty in condition rows)."""
BOOTSTRAP_METHOD = "percentile two-way cluster bootstrap over pairs and judges"
WILSON_PAIRS_METHOD = "Wilson over pairs (every judgement agrees: nothing to resample)"
WILSON_METHOD = "Wilson, judgements taken as independent"
_PLAIN = {
    "binomial_p": "exact binomial test against 50%, two-sided",
    "dprime": "d' of 2AFC from the pooled proportion correct",
    "detectability": "(p(H|H) + p(M|M)) / 2",
    "position_bias": "share of verdicts for the first chat",
    "order_consistency": "share of pairs judged alike in both orders",
    "p(H|H)": "verdict human given a human's chat",
    "p(M|H)": "verdict machine given a human's chat",
    "p(H|M)": "verdict human given the bot's chat",
    "p(M|M)": "verdict machine given the bot's chat",
}
"""The statistics without an interval, with what each is."""


def _nan_free(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _rows_of(
    table: str,
    judges: str,
    record: dict[str, Any],
    *,
    condition: str,
    column: str = "",
    reps: int,
    margin: float,
) -> list[dict[str, Any]]:
    base = {
        "table": table,
        "judge_group": judges,
        "condition": condition,
        "breakdown": column,
        "level": str(record[column]) if column else "",
        "n": int(record["judgements"]),
        "pairs": int(record["pairs"]),
        "judges": int(record["judges"]),
        "excluded": int(record["excluded"]),
    }
    rate = record["pass_rate"]
    agreed = reps > 0 and rate in (0.0, 1.0)
    found = [
        {
            **base,
            "statistic": "pass_rate",
            "value": rate,
            "ci_low": record["boot_low"],
            "ci_high": record["boot_high"],
            "ci_level": 0.95,
            "ci_method": WILSON_PAIRS_METHOD if agreed else BOOTSTRAP_METHOD,
        },
        {
            **base,
            "statistic": "pass_rate_pooled",
            "value": record["pass_rate_pooled"],
            "ci_low": record["wilson_low"],
            "ci_high": record["wilson_high"],
            "ci_level": 0.95,
            "ci_method": WILSON_METHOD,
        },
        {
            **base,
            "statistic": "tost_p",
            "value": record["tost_p"],
            "ci_method": f"TOST p, equivalence to 50% within +-{margin:g}",
        },
    ]
    found += [
        {**base, "statistic": name, "value": record[name], "ci_method": what}
        for name, what in _PLAIN.items()
        if name in record
    ]
    return [{key: _nan_free(row.get(key)) for key in COLUMNS} for row in found]


def tidy_results(
    frame: pd.DataFrame,
    *,
    by: Sequence[str] = (),
    reps: int = DEFAULT_BOOTSTRAP,
    margin: float = DEFAULT_MARGIN,
    pool: bool = False,
) -> pd.DataFrame:
    """Every pass-rate table ``sdtt score`` prints for ``frame`` (a
    :func:`~sdtt.analysis.table.judgement_table`), as tidy rows (:data:`COLUMNS`):
    the conditions of each judge group, then the breakdowns by each column of ``by``
    (with ``pool``, also over every judgement pooled)."""
    rows: list[dict[str, Any]] = []
    for judges, table in grouped_by_judges(frame, CONDITION, reps=reps, margin=margin):
        for record in table.to_dict("records"):
            named = {str(k): v for k, v in record.items()}
            rows += _rows_of(
                "conditions",
                judges,
                named,
                condition=condition_label(named),
                reps=reps,
                margin=margin,
            )
    for column in by:
        parts = within_parts(frame) if column not in CONSTANT_WITHIN else []
        if pool:
            parts.append(("all judges, pooled", frame.loc[frame["pair_kind"] == "test"]))
        for title, part in parts:
            if not part[column].notna().any():
                continue
            for record in breakdown(part, column, reps=reps, margin=margin).to_dict("records"):
                rows += _rows_of(
                    f"by {column.removeprefix('demo.')}",
                    title,
                    {str(k): v for k, v in record.items()},
                    condition="",
                    column=column,
                    reps=reps,
                    margin=margin,
                )
    return pd.DataFrame(rows, columns=list(COLUMNS))


def write_tidy(rows: pd.DataFrame, fmt: str) -> str:
    """The rows as CSV or JSON (a list of objects; missing values as null) text."""
    if fmt == "json":
        records = rows.astype(object).where(rows.notna(), None).to_dict("records")
        return json.dumps(records, indent=1, ensure_ascii=False) + "\n"
    # Condition labels and breakdown levels come from files (topics, demographics): none
    # may start a spreadsheet formula.
    text = rows.astype(object).map(lambda v: safe_cell(v) if isinstance(v, str) else v)
    return str(text.to_csv(index=False, lineterminator="\n", float_format="%.10g"))
