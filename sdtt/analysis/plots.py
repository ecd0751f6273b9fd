"""PNG figures for reports. matplotlib is imported only when a plot is drawn (Agg
backend, no display needed), so scoring never pays for it."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

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


TITLE_WIDTH = 60
"""Characters a figure title keeps on one line before it wraps (a whole title, never cut)."""


def wrapped(text: object, width: int = TITLE_WIDTH) -> str:
    """``text`` as a plot label, wrapped onto lines of at most ``width`` characters."""
    import textwrap

    return "\n".join(textwrap.wrap(plot_label(text), width)) or plot_label(text)


def save(figure: Any, path: Path) -> Path:
    """Write ``figure`` as a PNG (atomically) and close it."""
    plt = pyplot()
    with replacing(path) as partial:
        figure.savefig(partial, format="png", bbox_inches="tight")
    plt.close(figure)
    return path


Points = Mapping[str, pd.DataFrame]
"""Curve name -> its points (``column``, ``pass_rate``, ``boot_low``, ``boot_high``, and
``interval_method``, which the figure names)."""


def pass_rate_plot(
    curves: Points | Mapping[str, Points],
    path: Path,
    *,
    column: str = "x",
    xlabel: str = "X (final turns shown)",
    title: str = "Pass rate against turns shown",
    log: bool = False,
) -> Path:
    """:func:`pass_rate_figure` written to ``path``."""
    return save(pass_rate_figure(curves, column=column, xlabel=xlabel, title=title, log=log), path)


def interval_methods(panels: Mapping[str, Points]) -> list[str]:
    """The interval methods the points of ``panels`` used, in order of first use."""
    found: list[str] = []
    for curves in panels.values():
        for rows in curves.values():
            if "interval_method" not in rows:
                continue
            for method in rows.loc[rows["boot_low"].notna(), "interval_method"]:
                if str(method) not in found:
                    found.append(str(method))
    return found


def dodged(x: Sequence[float], index: int, count: int, *, log: bool, step: float) -> list[float]:
    """The x of curve ``index`` of ``count``, moved aside so that curves at one x never
    sit on top of each other: by a factor on a log axis, by a share of ``step`` (the
    smallest gap between shown values) on a linear one."""
    offset = index - (count - 1) / 2
    if log:
        return [v * 10 ** (0.035 * offset) for v in x]
    return [v + 0.08 * step * offset for v in x]


def _as_panels(curves: Points | Mapping[str, Points]) -> dict[str, Points]:
    """Curves grouped in panels: a flat mapping of curves is one panel without a title."""
    if all(isinstance(rows, pd.DataFrame) for rows in curves.values()):
        return {"": cast(Points, curves)}
    return {str(k): cast(Points, v) for k, v in curves.items()}


PANEL_COLUMNS = 2
"""Pass-rate panels (one per judge group) side by side before a new row starts."""


def pass_rate_figure(
    curves: Points | Mapping[str, Points],
    *,
    column: str = "x",
    xlabel: str = "X (final turns shown)",
    title: str = "Pass rate against turns shown",
    log: bool = False,
) -> Any:
    """Pass rate against ``column`` with its 95% intervals, one line per curve, one
    panel per judge group when ``curves`` maps a group to its curves.

    A curve keeps its colour in every panel; curves at one x are dodged apart, so none
    hides another. ``log`` puts the turns on a log axis, so 3, 10 and 110 turns sit
    evenly apart as in the paper (with one value shown there is no scale to speak of, so
    the axis is linear). The legend, below the panels, names the error bars' methods.
    """
    plt = pyplot()
    from matplotlib import ticker

    panels = _as_panels(curves)
    names = list(dict.fromkeys(name for panel in panels.values() for name in panel))
    colours = plt.get_cmap("tab10" if len(names) <= 10 else "tab20")
    colour = {name: colours(i % colours.N) for i, name in enumerate(names)}
    shown = sorted(
        {
            float(x)
            for panel in panels.values()
            for rows in panel.values()
            for x in pd.to_numeric(rows[column])
        }
    )
    log = log and len(shown) > 1 and shown[0] > 0
    gaps = [b - a for a, b in itertools.pairwise(shown)]
    step = min(gaps) if gaps else 1.0
    columns = min(PANEL_COLUMNS, len(panels))
    rows_of_panels = math.ceil(len(panels) / columns)
    figure, grid = plt.subplots(
        rows_of_panels,
        columns,
        figsize=(5.6 * columns, 3.9 * rows_of_panels + 0.35 * (len(names) + 3) + 0.4),
        dpi=100,
        squeeze=False,
        sharey=True,
        layout="constrained",
    )
    flat = [axes for row in grid for axes in row]
    for axes, (group, panel) in zip(flat, panels.items(), strict=False):
        if log:
            axes.set_xscale("log")
        for name, rows in panel.items():
            index = names.index(name)
            x = dodged(pd.to_numeric(rows[column]).tolist(), index, len(names), log=log, step=step)
            y = rows["pass_rate"].to_numpy(dtype=float) * 100
            low = rows["boot_low"].to_numpy(dtype=float) * 100
            high = rows["boot_high"].to_numpy(dtype=float) * 100
            below = [0.0 if math.isnan(v) else v for v in y - low]
            above = [0.0 if math.isnan(v) else v for v in high - y]
            axes.errorbar(
                x,
                y,
                yerr=[below, above],
                marker="o",
                markersize=5,
                capsize=3,
                color=colour[name],
                label=plot_label(name),
            )
        if shown:
            # Limits first, then ticks that cannot move them: set_xticks widens the view
            # to its ticks, and one tick made low == high, which matplotlib warns about.
            # Autoscaling off first: setting the limits would otherwise autoscale the
            # stale view to the one point's identical limits, and warn, before taking them.
            axes.set_autoscalex_on(False)
            axes.set_xlim(*x_limits(shown, log=log))
            axes.xaxis.set_major_locator(ticker.FixedLocator(shown))
            axes.xaxis.set_major_formatter(ticker.FixedFormatter([f"{x:g}" for x in shown]))
            if log:
                # Unlabelled ticks at 2..9 of each decade show that the scale is a log one.
                axes.xaxis.set_minor_locator(ticker.LogLocator(base=10, subs=tuple(range(2, 10))))
                axes.xaxis.set_minor_formatter(ticker.NullFormatter())
            else:
                axes.minorticks_off()
        axes.axhline(50, color="grey", linestyle="--", linewidth=1)
        axes.set_xlabel(plot_label(xlabel + (", log scale" if log else "")), fontsize=9)
        axes.set_ylim(-3, 103)
        axes.set_yticks(range(0, 101, 20))
        if group:
            axes.set_title(wrapped(group, 50), fontsize=10)
    for axes in flat[len(panels) :]:
        axes.set_visible(False)
    for row in grid:
        row[0].set_ylabel("X-Turn Pass Rate (%)")
    from matplotlib.lines import Line2D

    handles = [
        Line2D([], [], color=colour[name], marker="o", label=plot_label(name)) for name in names
    ]
    handles.append(Line2D([], [], color="grey", linestyle="--", label="chance (50 %)"))
    methods = interval_methods(panels)
    bars = "error bars: 95% CI, " + (" or ".join(methods) if methods else "none")
    if len(methods) > 1:
        bars += " (per point: see the points table)"
    legend = figure.legend(
        handles=handles,
        loc="outside lower center",
        fontsize=8,
        frameon=False,
        ncols=1 if columns == 1 else 2,
        title=wrapped(bars, 90),
        title_fontsize=8,
    )
    legend.get_title().set_multialignment("center")
    figure.suptitle(wrapped(title))
    return figure


def x_limits(shown: Sequence[float], *, log: bool) -> tuple[float, float]:
    """Axis limits that leave room beside the outermost points (sorted ``shown``).

    Without them a one-condition study's single point sits on the frame of a log axis,
    where it cannot be seen. On a log axis the room is a factor, on a linear one a step.
    """
    if log and shown[0] > 0:
        return shown[0] / 1.6, shown[-1] * 1.6
    return shown[0] - 1, shown[-1] + 1


PANELS_PER_ROW = 3
"""Confusion panels side by side before a new row starts."""


def confusion_plot(
    counts: Confusion | dict[str, Confusion], path: Path, title: str = "Verdicts by truth"
) -> Path:
    """:func:`confusion_figure` written to ``path``."""
    return save(confusion_figure(counts, title), path)


def confusion_figure(
    counts: Confusion | dict[str, Confusion], title: str = "Verdicts by truth"
) -> Any:
    """2x2 heat maps of judges' verdicts (rows: truth, columns: verdict), one panel per
    entry when given a dict (e.g. human and LLM judges side by side, never summed), at
    most three to a row, each titled in full (wrapped)."""
    plt = pyplot()
    panels = counts if isinstance(counts, dict) else {title: counts}
    columns = min(PANELS_PER_ROW, len(panels))
    rows = math.ceil(len(panels) / columns)
    figure, all_axes = plt.subplots(
        rows, columns, figsize=(3.7 * columns, 3.9 * rows), dpi=100, squeeze=False
    )
    flat = [axes for row in all_axes for axes in row]
    for axes, (name, panel) in zip(flat, panels.items(), strict=False):
        grid = [[panel.hh, panel.mh], [panel.hm, panel.mm]]
        top = max(max(row) for row in grid) or 1
        # Shades from 0 to the largest count, so the text's colour follows the shade.
        axes.imshow(grid, cmap="Blues", vmin=0, vmax=top)
        for row in range(2):
            for column in range(2):
                value = grid[row][column]
                axes.text(
                    column,
                    row,
                    str(value),
                    ha="center",
                    va="center",
                    fontsize=13,
                    color="white" if value > 0.55 * top else "black",
                )
        axes.set_xticks([0, 1], ["said human", "said AI"])
        axes.set_yticks([0, 1], ["human", "AI"])
        axes.set_ylabel("truth")
        axes.set_title(wrapped(name, 34), fontsize=9)
    for axes in flat[len(panels) :]:
        axes.set_visible(False)
    figure.tight_layout()
    return figure


SHARE_TELLS = frozenset({"emoji", "punctuation", "lowercase", "runs", "opening", "closing"})
"""Tells that are shares (0-1): drawn on an axis of their own, in percentage points."""


def tells_plot(tells: Mapping[str, Sequence[TellRow]], path: Path) -> Path:
    """:func:`tells_figure` written to ``path``."""
    return save(tells_figure(tells), path)


def tells_figure(tells: Mapping[str, Sequence[TellRow]]) -> Any:
    """Bars of bot minus human for every tell with a value, one row per condition (at
    most the first six), titled in full; shares (percentage points) on the left axis,
    counts, seconds and hours on the right, each bar named by its side and unit."""
    plt = pyplot()
    panels = list(tells.items())[:6]
    figure = plt.figure(figsize=(11, 0.6 + 3.9 * len(panels)), dpi=100, layout="constrained")
    rows = figure.subfigures(len(panels), 1, squeeze=False)
    for (condition, found), (row,) in zip(panels, rows, strict=True):
        kept = [t for t in found if not math.isnan(t.difference)]
        shares = [t for t in kept if t.name in SHARE_TELLS]
        counts = [t for t in kept if t.name not in SHARE_TELLS]
        left, right = row.subplots(1, 2)
        for axes, part, scale, xlabel in (
            (left, shares, 100.0, "shares: bot minus human (percentage points)"),
            (right, counts, 1.0, "counts, seconds, hours: bot minus human"),
        ):
            labels = [plot_label(f"{t.side}: {t.label}") for t in part]
            values = [t.difference * scale for t in part]
            axes.barh(labels, values, color=["#c0504d" if v > 0 else "#4f81bd" for v in values])
            axes.axvline(0, color="black", linewidth=0.8)
            axes.set_xlabel(xlabel, fontsize=8)
            axes.tick_params(axis="y", labelsize=7)
            axes.tick_params(axis="x", labelsize=7)
        row.suptitle(wrapped(condition, 110), fontsize=9)
    figure.suptitle("Tells (side A = User A, side B = User B)")
    return figure
