"""Belief traces in ``sdtt score`` and ``sdtt report``: tables and figures.

The numbers come from :mod:`sdtt.beliefs.calibration`; this module only lays them out as
display tables (header + rows of strings, shared by the terminal and the report) and
draws the reliability diagram, sharpness histogram, belief traces and the pass rate by
turn; for markets also Turing Trade's own calibration and sharpness at fixed seconds
(:mod:`sdtt.beliefs.market_calibration`, the paper's Figures 7 and 8).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sdtt.analysis.format import percent
from sdtt.analysis.metrics import is_baseline
from sdtt.analysis.plots import pyplot
from sdtt.analysis.report import Report, Section
from sdtt.beliefs.calibration import (
    DISTINCT_BINS,
    TENTHS,
    by_turn,
    calibration,
    calibration_table,
    held_beliefs,
    moments,
)
from sdtt.beliefs.market_calibration import (
    BIN_LABELS,
    MarketCalibration,
    binned,
    market_prices,
    summary,
)
from sdtt.beliefs.traces import BeliefTrace
from sdtt.files import replacing

MOMENT_TEXT = 160
"""Characters of revealed text shown per moment."""


@dataclass
class BeliefTable:
    """A titled display table."""

    title: str
    header: list[str]
    rows: list[list[str]]
    note: str = ""


def _num(value: float, digits: int = 3) -> str:
    return (
        "-"
        if value is None or (isinstance(value, float) and math.isnan(value))
        else (f"{value:.{digits}f}")
    )


def _model(name: str) -> str:
    return f"{name} (baseline)" if is_baseline(name) else name


def belief_tables(traces: Sequence[BeliefTrace], *, top: int = 5) -> list[BeliefTable]:
    """Calibration, pass rate by turn and the moments that moved belief."""
    frame = held_beliefs(traces)
    if frame.empty:
        return []
    tables = []
    cal = calibration_table(frame)
    tables.append(
        BeliefTable(
            "Beliefs: calibration of final beliefs",
            [
                "judge",
                "model",
                "mode",
                "beliefs",
                "Brier",
                "REL",
                "RES",
                "UNC",
                "resid.",
                "log",
                "ECE",
                "sharp",
            ],
            [
                [
                    r["judge"],
                    _model(r["model"]),
                    r["mode"],
                    str(r["beliefs"]),
                    _num(r["brier"]),
                    _num(r["reliability"]),
                    _num(r["resolution"]),
                    _num(r["uncertainty"]),
                    _num(r["residual"]),
                    _num(r["log_score"]),
                    _num(r["ece"]),
                    percent(r["sharpness"]),
                ]
                for r in cal.to_dict("records")
            ],
            note="Brier = REL - RES + UNC + resid. (Murphy). REL, RES and ECE use one bin per "
            f"distinct belief when a row has at most {DISTINCT_BINS}, else tenths (0-9, ..., "
            "90-100); resid. is the within-bin variance of beliefs minus their within-bin "
            "covariance with the truth (Stephenson et al. 2008): 0 with one bin per belief, "
            "and it can be negative. log: mean -ln p(truth), p clipped to [0.01, 0.99]. "
            "sharp: share of beliefs in the 0-9 or 90-100 bins (Turing Trade). Lower Brier, "
            "log, REL and ECE are better.",
        )
    )
    turns = by_turn(frame)
    tables.append(
        BeliefTable(
            "Beliefs: pass rate by turn (share of judges on the wrong side)",
            [
                "judge",
                "model",
                "mode",
                "turn",
                "judges",
                "items",
                "wrong side",
                "undecided",
                "belief in truth",
                "Brier",
            ],
            [
                [
                    r["judge"],
                    _model(r["model"]),
                    r["mode"],
                    str(r["turn"]),
                    str(r["judges"]),
                    str(r["items"]),
                    percent(r["wrong_side"]),
                    str(r["undecided"]),
                    percent(r["belief_in_truth"]),
                    _num(r["brier"]),
                ]
                for r in turns.to_dict("records")
            ],
            note="At turn t each judge's belief is the last given by then, carried forward "
            "to the end of the reveal (X). 'wrong side' is the share of judges on the wrong "
            "side of each item (pair, chat or room), averaged over items as the pass rate "
            "averages over pairs, leaving out beliefs of exactly 50 (undecided); belief in "
            "truth and Brier are means over judges.",
        )
    )
    moved = moments(traces, top=top)
    if not moved.empty:
        tables.append(
            BeliefTable(
                "Beliefs: the moments that moved belief most",
                ["model", "judge", "pair", "turn", "belief", "toward truth", "revealed"],
                [
                    [
                        _model(r["model"]),
                        r["judge"],
                        r["item"],
                        _turn(r["turn"]),
                        f"{r['before']:g} -> {r['after']:g}",
                        f"{r['toward_truth']:+g}",
                        _short(r["text"]),
                    ]
                    for r in moved.to_dict("records")
                ],
                note="Per bot model, the steps with the largest change of belief that the "
                "target is human; positive = toward the truth (the bot gave itself away).",
            )
        )
    return tables + market_tables(traces)


def market_tables(traces: Sequence[BeliefTrace]) -> list[BeliefTable]:
    """Turing Trade's Figures 7 and 8 as tables, plus one summary row per second (none
    without a market game)."""
    found = market_prices(traces)
    if not found.games:
        return []
    figures = "; ".join(
        [
            "Turing Trade's Figure 7: share human per bin (a calibrated market has about "
            "5 % in 0-9, 15 % in 10-19, ...)",
            "Figure 8: share of the games in each bin (sharp: most in 0-9 and 90-100)",
        ]
    )
    return [
        BeliefTable(
            "Market: calibration and sharpness at fixed seconds",
            ["seconds", "games", "human", "Brier", "ECE", "sharp"],
            [
                [
                    f"{r['seconds']:g}",
                    str(r["runs"]),
                    str(r["humans"]),
                    _num(r["brier"]),
                    _num(r["ece"]),
                    percent(r["sharpness"]),
                ]
                for r in summary(found).to_dict("records")
            ],
            note=f"{found.note()} Brier of price / 100; ECE over the ten bins below; sharp: "
            "share in 0-9 or 90-100.",
        ),
        BeliefTable(
            "Market: games by price bin (Turing Trade Figures 7, 8)",
            ["seconds", "price", "games", "share of games", "human", "share human"],
            [
                [
                    f"{r['seconds']:g}",
                    r["label"],
                    str(r["runs"]),
                    percent(r["share"]),
                    str(r["humans"]),
                    percent(r["observed"]),
                ]
                for r in binned(found).to_dict("records")
            ],
            note=figures + ".",
        ),
    ]


def _turn(value: Any) -> str:
    """A step's turn: a whole number, or ``-`` for a step given without one."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return str(int(value))


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= MOMENT_TEXT else flat[: MOMENT_TEXT - 1] + "…"


def reliability_plot(traces: Sequence[BeliefTrace], path: Path) -> Path:
    """Reliability diagram of final beliefs per judge, with the sharpness histogram."""
    plt = pyplot()
    frame = held_beliefs(traces)
    final = frame.loc[frame["final"]]
    figure, (axes, hist) = plt.subplots(
        2, 1, figsize=(5.6, 6.4), dpi=100, gridspec_kw={"height_ratios": [3, 1]}, sharex=True
    )
    axes.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=1, label="perfect")
    for judge, part in final.groupby("judge", sort=True):
        found = calibration(part["p"].to_numpy(), part["y"].to_numpy())
        bins = found.bins.loc[found.bins["n"] > 0]
        axes.plot(
            bins["mean_p"], bins["observed"], marker="o", label=f"{judge} (Brier {found.brier:.3f})"
        )
        hist.hist(part["p"], bins=TENTHS, alpha=0.6, label=str(judge))
    axes.set_ylabel("share of targets that were human")
    # A little room beyond 0 and 1, so points at the edges (common: a judge sure of
    # itself) are drawn whole.
    axes.set_xlim(-0.03, 1.03)
    axes.set_ylim(-0.03, 1.03)
    axes.set_title("Calibration of final beliefs")
    # loc named: a legend left at the default 'best' warns whenever placing it took over
    # a second, as it does on a busy machine.
    axes.legend(fontsize=7, loc="best")
    hist.set_xlabel("belief that the target is human")
    hist.set_ylabel("beliefs")
    figure.tight_layout()
    with replacing(path) as partial:
        figure.savefig(partial, format="png")
    plt.close(figure)
    return path


def trace_plot(traces: Sequence[BeliefTrace], path: Path) -> Path:
    """Each judge's belief in the truth, turn by turn (thin), and the mean per model."""
    plt = pyplot()
    frame = held_beliefs(traces)
    frame = frame.assign(truth=frame["p"].where(frame["y"] == 1, 1 - frame["p"]) * 100)
    figure, axes = plt.subplots(figsize=(6.4, 4.2), dpi=100)
    for _, part in frame.groupby(["judge_id", "item"], sort=True):
        axes.plot(part["turn"], part["truth"], color="grey", alpha=0.3, linewidth=0.8)
    for model, part in frame.groupby("model", sort=True):
        mean = part.groupby("turn")["truth"].mean()
        axes.plot(mean.index, mean.to_numpy(), marker="o", linewidth=2, label=_model(str(model)))
    axes.axhline(50, color="grey", linestyle="--", linewidth=1)
    axes.set_xlabel("turns revealed")
    axes.xaxis.get_major_locator().set_params(integer=True)
    axes.set_ylabel("belief in the truth (%)")
    axes.set_ylim(-3, 103)
    axes.set_title("Belief traces (below 50: on the wrong side)")
    axes.legend(fontsize=8, loc="best")
    figure.tight_layout()
    with replacing(path) as partial:
        figure.savefig(partial, format="png")
    plt.close(figure)
    return path


def turn_pass_plot(traces: Sequence[BeliefTrace], path: Path) -> Path:
    """Pass rate from traces against turns revealed, one line per model and judge."""
    plt = pyplot()
    table = by_turn(held_beliefs(traces), by=("model", "judge"))
    figure, axes = plt.subplots(figsize=(6.4, 4.2), dpi=100)
    for (model, judge), part in table.groupby(["model", "judge"], sort=True):
        axes.plot(
            part["turn"],
            part["wrong_side"] * 100,
            marker="o",
            label=f"{_model(str(model))}, {judge}",
        )
    axes.axhline(50, color="grey", linestyle="--", linewidth=1, label="chance (50 %)")
    axes.set_xlabel("turns revealed")
    axes.xaxis.get_major_locator().set_params(integer=True)
    axes.set_ylabel("judges on the wrong side (%)")
    axes.set_ylim(-3, 103)
    axes.set_title("Pass rate by turn, from belief traces")
    axes.legend(fontsize=7, loc="best")
    figure.tight_layout()
    with replacing(path) as partial:
        figure.savefig(partial, format="png")
    plt.close(figure)
    return path


def _bars(axes: Any, table: pd.DataFrame, column: str, seconds: list[float]) -> None:
    """Grouped bars over the ten price bins, one colour per second (the paper's layout),
    each with its number of games on top (so a bar of 0 % is told from an empty bin)."""
    width = 0.8 / len(seconds)
    for index, second in enumerate(seconds):
        part = table.loc[table["seconds"] == second]
        offset = (index - (len(seconds) - 1) / 2) * width
        heights = part[column].fillna(0).to_numpy() * 100
        x = np.arange(len(BIN_LABELS)) + offset
        axes.bar(x, heights, width=width, label=f"after {second:g} s")
        for left, height, runs in zip(x, heights, part["runs"], strict=True):
            if runs:
                axes.text(left, height + 1, str(runs), ha="center", fontsize=6)
    axes.set_xticks(range(len(BIN_LABELS)), BIN_LABELS, rotation=45)
    axes.set_xlabel("price of a human security (bin)")
    axes.set_ylim(0, 106)


def market_plots(found: MarketCalibration, out_dir: Path) -> list[tuple[str, Path]]:
    """Turing Trade's Figure 7 (share of human targets per price bin, against the bins'
    middles) and Figure 8 (share of games per bin), one bar per second in each bin."""
    plt = pyplot()
    table = binned(found)
    seconds = sorted(set(table["seconds"]))
    drawn = []
    for name, column, ylabel, title in (
        ("market-calibration.png", "observed", "games with a human target (%)", "Calibration"),
        ("market-sharpness.png", "share", "share of all games (%)", "Sharpness"),
    ):
        figure, axes = plt.subplots(figsize=(7.2, 4.4), dpi=100)
        _bars(axes, table, column, seconds)
        if column == "observed":
            middles = [10 * k + 5 for k in range(len(BIN_LABELS))]
            axes.plot(
                range(len(BIN_LABELS)),
                middles,
                color="grey",
                linestyle="--",
                marker="_",
                label="perfectly calibrated",
            )
        axes.set_ylabel(ylabel)
        axes.set_title(
            f"Market {title.lower()} ({found.kept} of {found.games} games; games per bar on top)"
        )
        axes.legend(fontsize=7, loc="best")
        figure.tight_layout()
        path = out_dir / name
        with replacing(path) as partial:
            figure.savefig(partial, format="png")
        plt.close(figure)
        drawn.append(
            (
                f"Market {title.lower()} at fixed seconds (Turing Trade Figure "
                f"{7 if column == 'observed' else 8})",
                path,
            )
        )
    return drawn


def belief_figures(traces: Sequence[BeliefTrace], out_dir: Path) -> list[tuple[str, Path]]:
    """Every belief figure drawn into ``out_dir``, as (caption, file); none without data."""
    if held_beliefs(traces).empty:
        return []
    found = market_prices(traces)
    return [
        ("Belief traces", trace_plot(traces, out_dir / "belief-traces.png")),
        ("Calibration and sharpness", reliability_plot(traces, out_dir / "calibration.png")),
        ("Pass rate by turn from traces", turn_pass_plot(traces, out_dir / "turn-pass.png")),
        *(market_plots(found, out_dir) if found.kept else []),
    ]


def add_to_report(report: Report, traces: Sequence[BeliefTrace], out_dir: Path) -> None:
    """Append the belief tables and figures to a report (nothing without beliefs)."""
    for table in belief_tables(traces):
        report.sections.append(Section(table.title, table.header, table.rows, note=table.note))
    report.figures += belief_figures(traces, out_dir)
