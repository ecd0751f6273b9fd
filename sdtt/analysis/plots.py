"""PNG figures for reports. matplotlib is imported only when a plot is drawn (Agg
backend, no display needed), so scoring never pays for it."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from sdtt.analysis.metrics import Confusion
from sdtt.analysis.tells import TellRow
from sdtt.files import replacing
from sdtt.redact import plot_label


def pyplot() -> Any:
    """Matplotlib's pyplot on the file-only Agg backend, imported when a figure is drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def pass_rate_plot(
    curves: dict[str, pd.DataFrame],
    path: Path,
    *,
    column: str = "x",
    xlabel: str = "X (final turns shown)",
    title: str = "Pass rate against turns shown",
    log: bool = False,
) -> Path:
    """Pass rate against ``column`` with 95 % bootstrap intervals, one line per curve.

    ``curves`` maps a curve name (a model, with its judges) to rows with ``column``,
    ``pass_rate``, ``boot_low`` and ``boot_high``. ``log`` puts the turns on a log axis,
    so 3, 10 and 110 turns sit evenly apart as in the paper.
    """
    plt = pyplot()
    from matplotlib import ticker

    # The legend goes below the axes, where it cannot cover a point at 0 % or 100 %.
    height = 4.2 + 0.2 * (len(curves) + 1)
    figure, axes = plt.subplots(figsize=(6.4, height), dpi=100)
    if log:
        axes.set_xscale("log")
    for name, rows in curves.items():
        x = pd.to_numeric(rows[column]).to_numpy()
        y = rows["pass_rate"].to_numpy(dtype=float) * 100
        low = rows["boot_low"].to_numpy(dtype=float) * 100
        high = rows["boot_high"].to_numpy(dtype=float) * 100
        below = [0.0 if math.isnan(v) else v for v in y - low]
        above = [0.0 if math.isnan(v) else v for v in high - y]
        axes.errorbar(x, y, yerr=[below, above], marker="o", capsize=4, label=plot_label(name))
    shown = sorted({float(x) for rows in curves.values() for x in pd.to_numeric(rows[column])})
    if shown:
        # Limits first, then ticks that cannot move them: set_xticks widens the view to
        # its ticks, and one tick made low == high, which newer matplotlib warns about.
        axes.set_xlim(*x_limits(shown, log=log))
        axes.xaxis.set_major_locator(ticker.FixedLocator(shown))
        axes.xaxis.set_major_formatter(ticker.FixedFormatter([f"{x:g}" for x in shown]))
        axes.minorticks_off()
    axes.axhline(50, color="grey", linestyle="--", linewidth=1, label="chance (50 %)")
    axes.set_xlabel(xlabel)
    axes.set_ylabel("X-Turn Pass Rate (%)")
    axes.set_ylim(-3, 103)
    axes.set_yticks(range(0, 101, 20))
    axes.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.15), frameon=False)
    axes.set_title(plot_label(title))
    figure.tight_layout()
    with replacing(path) as partial:
        figure.savefig(partial, format="png", bbox_inches="tight")
    plt.close(figure)
    return path


def x_limits(shown: Sequence[float], *, log: bool) -> tuple[float, float]:
    """Axis limits that leave room beside the outermost points (sorted ``shown``).

    Without them a one-condition study's single point sits on the frame of a log axis,
    where it cannot be seen. On a log axis the room is a factor, on a linear one a step.
    """
    if log and shown[0] > 0:
        return shown[0] / 1.6, shown[-1] * 1.6
    return shown[0] - 1, shown[-1] + 1


def confusion_plot(
    counts: Confusion | dict[str, Confusion], path: Path, title: str = "Verdicts by truth"
) -> Path:
    """2x2 heat maps of judges' verdicts (rows: truth, columns: verdict), one panel per
    entry when given a dict (e.g. human and LLM judges side by side, never summed)."""
    plt = pyplot()
    panels = counts if isinstance(counts, dict) else {title: counts}
    figure, all_axes = plt.subplots(
        1, len(panels), figsize=(4.2 * len(panels), 3.8), dpi=100, squeeze=False
    )
    for axes, (name, panel) in zip(all_axes[0], panels.items(), strict=True):
        grid = [[panel.hh, panel.mh], [panel.hm, panel.mm]]
        axes.imshow(grid, cmap="Blues")
        for row in range(2):
            for column in range(2):
                axes.text(
                    column, row, str(grid[row][column]), ha="center", va="center", fontsize=14
                )
        axes.set_xticks([0, 1], ["said human", "said AI"])
        axes.set_yticks([0, 1], ["human", "AI"])
        axes.set_ylabel("truth")
        axes.set_title(plot_label(name))
    figure.tight_layout()
    with replacing(path) as partial:
        figure.savefig(partial, format="png")
    plt.close(figure)
    return path


def tells_plot(tells: Mapping[str, Sequence[TellRow]], path: Path) -> Path:
    """Bars of bot minus human for every tell with a value, one panel per condition
    (at most the first six), each bar named by its side."""
    plt = pyplot()
    panels = list(tells.items())[:6]
    figure, axes_list = plt.subplots(
        len(panels), 1, figsize=(6.4, 1.0 + 3.6 * len(panels)), dpi=100, squeeze=False
    )
    for (condition, rows), (axes,) in zip(panels, axes_list, strict=True):
        kept = [row for row in rows if not math.isnan(row.difference)]
        labels = [plot_label(f"{row.side}: {row.label}") for row in kept]
        values = [row.difference for row in kept]
        axes.barh(labels, values, color=["#c0504d" if v > 0 else "#4f81bd" for v in values])
        axes.axvline(0, color="black", linewidth=0.8)
        axes.set_xlabel("bot minus human")
        axes.set_title(plot_label(condition), fontsize=9)
        axes.tick_params(axis="y", labelsize=7)
    figure.suptitle("Tells")
    figure.tight_layout()
    with replacing(path) as partial:
        figure.savefig(partial, format="png")
    plt.close(figure)
    return path
