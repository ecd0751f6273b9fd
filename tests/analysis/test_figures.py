"""Figures a reader can read: every title whole and clear of the others, no point on top
of another, axes that say what they show. Each figure is caught as it is saved (whatever
draws it) and measured with matplotlib's own renderer."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from sdtt.analysis import plots
from sdtt.analysis.metrics import Confusion
from sdtt.analysis.tells import TELLS, TellRow

LONG_CONDITION = (
    "anthropic/claude-sonnet-4-5-20250929, pingpong, turn 110 (N=100, X=10), "
    "simulated User A (openai/gpt-4o-mini-2024-07-18)"
)


@pytest.fixture
def saved(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[Any, dict[str, Any]]]]:
    """Every figure saved while the test runs, with the options it was saved with."""
    from matplotlib.figure import Figure

    caught: list[tuple[Any, dict[str, Any]]] = []
    real = Figure.savefig

    def savefig(self: Any, *args: Any, **kwargs: Any) -> None:
        caught.append((self, kwargs))
        real(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", savefig)
    yield caught


def titles(figure: Any) -> list[Any]:
    """The figure's titles: its suptitle, its subfigures' and every visible axes' title."""
    found = [figure._suptitle] if figure._suptitle is not None else []
    for sub in getattr(figure, "subfigs", []):
        found += titles(sub)
    for axes in figure.axes:
        if axes.get_visible():
            found += [t for t in (axes.title, axes._left_title, axes._right_title) if t.get_text()]
    return [t for t in found if t.get_text()]


def drawn(figure: Any) -> Any:
    """Draw ``figure`` on an Agg canvas (pyplot has closed it) and return the renderer."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    return canvas.get_renderer()


def check_readable(figure: Any, options: dict[str, Any]) -> None:
    """Titles whole (inside what is saved), no two overlapping, none over another panel."""
    renderer = drawn(figure)
    saved_area = (
        figure.get_tightbbox(renderer).transformed(figure.dpi_scale_trans)
        if options.get("bbox_inches") == "tight"
        else figure.bbox
    )
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in titles(figure)]
    for text, box in boxes:
        assert box.x0 >= saved_area.x0 - 1 and box.x1 <= saved_area.x1 + 1, f"cut: {text!r}"
        assert box.y0 >= saved_area.y0 - 1 and box.y1 <= saved_area.y1 + 1, f"cut: {text!r}"
    for (a, first), (b, second) in itertools.combinations(boxes, 2):
        assert not first.overlaps(second), f"{a!r} overlaps {b!r}"
    panels = [axes for axes in figure.axes if axes.get_visible()]
    for axes in panels:
        own = axes.title.get_window_extent(renderer) if axes.title.get_text() else None
        for other in panels:
            if other is not axes and own is not None:
                assert not own.overlaps(other.get_window_extent(renderer)), axes.title.get_text()


def test_confusion_panels_wrap_into_rows_with_whole_titles(
    saved: list[tuple[Any, dict[str, Any]]], tmp_path: Path
) -> None:
    # Ten panels, as a study of five bots and two judge groups has: once one 4200x380 row.
    panels = {
        f"LLM judge openai/gpt-4o-mini (zero-shot), bot model-{n} (baseline)": Confusion(n, 2, 3, 4)
        for n in range(10)
    }
    plots.confusion_plot(panels, tmp_path / "confusion.png")
    ((figure, options),) = saved
    check_readable(figure, options)
    width, height = figure.get_size_inches()
    assert width <= 12 and width / height <= 3, (width, height)


def tell_rows(shift: float) -> list[TellRow]:
    return [
        TellRow(name, label, 30.0 + shift if name == "chars" else 0.4, 0.2, side)
        for side in ("B", "A")
        for name, label in TELLS
    ]


def test_tells_titles_are_whole_and_shares_are_apart_from_counts(
    saved: list[tuple[Any, dict[str, Any]]], tmp_path: Path
) -> None:
    tells = {f"{LONG_CONDITION} #{n}": tell_rows(n) for n in range(3)}
    plots.tells_plot(tells, tmp_path / "tells.png")
    ((figure, options),) = saved
    check_readable(figure, options)
    whole = [t.get_text().replace("\n", " ") for t in titles(figure)]
    assert all(any(f"#{n}" in t and "openai/gpt-4o-mini" in t for t in whole) for n in range(3))
    for axes in figure.axes:
        labels = " ".join(t.get_text() for t in axes.get_yticklabels())
        # A share (0-1) never sits on an axis with characters per message.
        assert not ("share" in labels and "characters per message" in labels), labels


def curve(turns: list[int], rate: float) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "turns": turns,
            "pass_rate": [rate] * len(turns),
            "boot_low": [rate - 0.2] * len(turns),
            "boot_high": [rate + 0.2] * len(turns),
            "interval_method": ["Wilson, effective n"] * len(turns),
            "effective_n": [6.0] * len(turns),
        }
    )


def test_pass_rate_curves_at_one_point_are_dodged_and_their_bars_named(
    saved: list[tuple[Any, dict[str, Any]]], tmp_path: Path
) -> None:
    # Two curves with the same values, as two models tied at every total turn.
    curves = {
        "model a, burst": curve([3, 10, 110], 0.5),
        "model b, burst": curve([3, 10, 110], 0.5),
    }
    plots.pass_rate_plot(curves, tmp_path / "pass.png", column="turns", log=True)
    ((figure, options),) = saved
    check_readable(figure, options)
    (axes,) = [a for a in figure.axes if a.lines]
    points = [
        axes.transData.transform(np.column_stack(line.get_data()).astype(float))
        for line in axes.lines
        if line.get_marker() == "o"
    ]
    assert len(points) == 2
    # Apart by more than a marker's width (6 points at the figure's dpi).
    gap = np.abs(points[0][:, 0] - points[1][:, 0])
    assert (gap > 6 * figure.dpi / 72).all(), gap
    text = " ".join(t.get_text() for t in figure.findobj(lambda a: hasattr(a, "get_text")))
    assert "error bars: 95% CI, Wilson, effective n" in text
    assert "log scale" in axes.get_xlabel()
    assert axes.xaxis.get_minorticklocs().size > 0  # the log scale shows as a log scale


def test_a_single_turn_total_is_not_called_a_log_scale(
    saved: list[tuple[Any, dict[str, Any]]], tmp_path: Path
) -> None:
    plots.pass_rate_plot({"m": curve([10], 0.4)}, tmp_path / "one.png", column="turns", log=True)
    ((figure, _),) = saved
    (axes,) = [a for a in figure.axes if a.lines]
    assert "log scale" not in axes.get_xlabel() and axes.get_xscale() == "linear"


def test_the_alignment_bars_legend_hides_no_data(
    saved: list[tuple[Any, dict[str, Any]]], tmp_path: Path
) -> None:
    from sdtt.align.alignment_report import build_alignment_report
    from sdtt.align.analysis import analyse
    from tests.align.test_rsa import _clustered, _ratings, _task

    task = _task(8)
    rng = np.random.default_rng(5)
    ratings = []
    for n in range(4):
        ratings += _ratings(task, _clustered(8, rng, 0.6), f"h{n}", "human")
        ratings += _ratings(task, _clustered(8, rng, 0.6), f"m{n}", "model")
    build_alignment_report(analyse(task, ratings, permutations=5), tmp_path)
    ((figure, _),) = [
        (f, o)
        for f, o in saved
        if any(
            a.get_legend() is not None
            and any("noise ceiling" in t.get_text() for t in a.get_legend().texts)
            for a in f.axes
        )
    ]
    renderer = drawn(figure)
    (axes,) = figure.axes
    legend = axes.get_legend().get_window_extent(renderer)
    assert not legend.overlaps(axes.get_window_extent(renderer))
