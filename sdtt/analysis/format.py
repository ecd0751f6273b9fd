"""Numbers as people read them, shared by ``sdtt score`` and the reports."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

RATE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("pairs", "pairs"),
    ("judges", "judges"),
    ("judgements", "used"),
    ("excluded", "excl."),
    ("pass_rate", "pass rate"),
    ("boot", "its 95% CI"),
    ("interval_method", "CI method"),
    ("pass_rate_pooled", "pooled"),
    ("wilson", "pooled 95% CI (Wilson)"),
)
"""Each interval sits right of the rate it is of, its method beside it (see
:data:`INTERVAL_NOTE`)."""
INTERVAL_NOTE = (
    "pass rate: 1 - the mean over pairs of each pair's share correct; its 95% CI, by the "
    "row's CI method: the percentile two-way cluster bootstrap over pairs and judges, or, "
    "where it is wider, Wilson's interval on the effective number of judgements (Kish: "
    "the judgements over the design effect of their pairs, between the number of pairs "
    "and of judgements), since a bootstrap cannot resample what it has too few pairs or "
    "judges for. pooled: 1 - the share of all used judgements correct; its 95% CI: "
    "Wilson, judgements taken as independent. binom. p, TOST p and d' (pooled) are "
    "computed on the pooled judgements, not the pair-averaged rate; detect. (all "
    "verdicts) on every verdict of a chat, single-transcript ties included, which the "
    "pass rate leaves out."
)
TEST_COLUMNS: tuple[tuple[str, str], ...] = (
    ("judgements", "used"),
    ("binomial_p", "binom. p (pooled)"),
    ("tost_p", "TOST p (pooled)"),
    ("dprime", "d' (pooled)"),
    ("detectability", "detect. (all verdicts)"),
    ("position_bias", "pos. bias"),
    ("order_consistency", "order cons."),
)
COLUMNS = RATE_COLUMNS + TEST_COLUMNS[1:]
"""Every column: the rates, then the tests."""


def percent(value: float) -> str:
    """``0.519`` -> ``51.9%``; NaN -> ``-``."""
    return "-" if value is None or math.isnan(value) else f"{100 * value:.1f}%"


def number(value: float, digits: int = 2) -> str:
    """A float with ``digits`` decimals; NaN -> ``-``."""
    return "-" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def p_value(value: float) -> str:
    """A p-value, ``<0.001`` when tiny."""
    if value is None or math.isnan(value):
        return "-"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def interval(low: float, high: float) -> str:
    """``[41.2%, 60.3%]``."""
    if math.isnan(low) or math.isnan(high):
        return "-"
    return f"[{percent(low)}, {percent(high)}]"


def interval_name(method: str, effective_n: float) -> str:
    """A row's interval method as people read it: ``cluster bootstrap`` or ``Wilson,
    effective n 6.0``."""
    if method.startswith("Wilson") and not math.isnan(effective_n):
        return f"{method} {effective_n:.1f}"
    return method


def format_row(
    row: dict[str, Any], columns: tuple[tuple[str, str], ...] = COLUMNS
) -> dict[str, str]:
    """A summary row (from ``Summary.row``) as display strings keyed by column title."""
    out: dict[str, str] = {}
    for key, title in columns:
        if key == "wilson":
            out[title] = interval(row["wilson_low"], row["wilson_high"])
        elif key == "boot":
            out[title] = interval(row["boot_low"], row["boot_high"])
        elif key == "interval_method":
            out[title] = interval_name(str(row[key]), float(row["effective_n"]))
        elif key in ("pass_rate", "pass_rate_pooled", "detectability"):
            out[title] = percent(row[key])
        elif key in ("binomial_p", "tost_p"):
            out[title] = p_value(row[key])
        elif key in ("position_bias", "order_consistency") or key == "dprime":
            out[title] = number(row[key])
        else:
            out[title] = str(int(row[key]))
    return out


def format_table(
    rows: pd.DataFrame,
    group: str | Sequence[str] | None,
    columns: tuple[tuple[str, str], ...] = COLUMNS,
) -> tuple[list[str], list[list[str]]]:
    """Header and display rows of a breakdown (``group`` is its grouping column or
    columns)."""
    groups = [] if group is None else [group] if isinstance(group, str) else list(group)
    header = groups + [title for _, title in columns]
    body = []
    for _, row in rows.iterrows():
        shown = format_row({str(k): v for k, v in row.to_dict().items()}, columns)
        body.append([str(row[g]) for g in groups] + list(shown.values()))
    return header, body
