"""The report's table in the shape of the SDTT paper's Table 1: a row per judge group and
model, a column per total turn index (3, 10, 110, ...) and mode (ping-pong, burst), each
cell the X-Turn Pass Rate with the judgements it stands on, so a reader can set it beside
the paper's."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from sdtt.analysis.format import percent
from sdtt.analysis.metrics import NONE, is_baseline

MODES = {"pingpong": "ping-pong", "burst": "burst"}
"""The modes as the paper names them, in its order."""


def _row_label(row: dict[str, Any]) -> str:
    model = str(row.get("model", NONE))
    if is_baseline(model):
        model += " (baseline)"
    interrogator = str(row.get("interrogator", NONE))
    if interrogator not in (NONE, "human"):
        model += f", simulated User A ({interrogator})"
    return model


def _turns_key(value: Any) -> tuple[float, str]:
    text = str(value)
    try:
        return (float(text), text)
    except ValueError:
        return (math.inf, text)


def paper_table(tables: Sequence[tuple[str, pd.DataFrame]]) -> tuple[list[str], list[list[str]]]:
    """Header and rows from the condition tables (``metrics.condition_tables``): one row
    per judge group and model, one column per total turns and mode, cells
    ``pass rate (n judgements / pairs)``; ``-`` where the study has no such condition,
    ``- (n 0)`` where every judgement of it was left out.
    A total reached by several (N, X) splits into a column per N."""
    records = []
    for title, rows in tables:
        name = title.removesuffix(", one row per condition")
        for raw in rows.to_dict("records"):
            row = {str(k): v for k, v in raw.items()}
            records.append({**row, "group": name, "label": _row_label(row)})
    if not records:
        return [], []
    frame = pd.DataFrame(records)
    split = frame.groupby("turns")["n"].nunique() > 1
    frame["column_turns"] = [
        f"{t} (N={n})" if split.get(t, False) else str(t)
        for t, n in zip(frame["turns"], frame["n"], strict=True)
    ]
    turns = sorted(frame["column_turns"].unique(), key=_turns_key)
    found = {str(m) for m in frame["mode"]}
    modes = [m for m in MODES if m in found] + sorted(found - set(MODES))
    columns = [(t, m) for t in turns for m in modes]
    header = ["judges", "model"] + [f"turn {t}: {MODES.get(m, m)}" for t, m in columns]
    body = []
    for (group, label), part in frame.groupby(["group", "label"], sort=False):
        cells = {(r["column_turns"], r["mode"]): r for r in part.to_dict("records")}
        line = [str(group), str(label)]
        for key in columns:
            cell = cells.get(key)
            if cell is None:
                line.append("-")
            elif not cell["judgements"]:
                line.append("- (n 0)")
            else:
                n, pairs = int(cell["judgements"]), int(cell["pairs"])
                line.append(f"{percent(cell['pass_rate'])} (n {n} / {pairs})")
        body.append(line)
    return header, body
