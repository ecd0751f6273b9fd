"""The simulated market of ``examples/market_sim.py``: scripted bettors on a real ``sdtt
serve`` process over websockets. A well-informed crowd's prices come out calibrated, a
misinformed one's do not (Brier and binned calibration computed here with sklearn and
scipy from the exported prices)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from scipy.stats import binned_statistic
from sklearn.metrics import brier_score_loss

from sdtt.beliefs.market_calibration import summary
from sdtt.beliefs.traces import BeliefTrace, read_traces

ROOT = Path(__file__).resolve().parents[2]
GAMES = 24
SECONDS = 120.0


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("market_sim", ROOT / "examples" / "market_sim.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


def _at(trace: BeliefTrace, second: float) -> float:
    """The price held at ``second`` (the ask, the paper's price, which the export
    records): numpy finds the last point at or before it."""
    times = np.array([p.time_s for p in trace.points], dtype=float)
    prices = np.array([p.ask for p in trace.points], dtype=float)
    return float(prices[np.searchsorted(times, second, side="right") - 1])


def _prices(folder: Path) -> tuple[np.ndarray, np.ndarray]:
    """Prices at :data:`SECONDS` (0-1) and truths of the exported games with a trade."""
    games = [
        t
        for t in read_traces(folder / "export" / "beliefs.jsonl")
        if not t.excluded and len({p.belief for p in t.points}) > 1
    ]
    prices = np.array([_at(t, SECONDS) for t in games]) / 100
    return prices, np.array([1.0 if t.target_human else 0.0 for t in games])


def _binned_error(truth: np.ndarray, prices: np.ndarray) -> float:
    """Calibration error over five bins of price, from scipy: the mean over games of
    the gap between their bin's share of human targets and its mean price."""
    edges = np.linspace(0, 1, 6)
    counts, _, _ = binned_statistic(prices, truth, statistic="count", bins=edges)
    observed, _, _ = binned_statistic(prices, truth, statistic="mean", bins=edges)
    predicted, _, _ = binned_statistic(prices, prices, statistic="mean", bins=edges)
    filled = counts > 0
    gaps = np.abs(observed[filled] - predicted[filled])
    return float(np.sum(counts[filled] * gaps) / counts.sum())


def test_a_well_informed_crowd_is_calibrated_and_a_misinformed_one_is_not(
    tmp_path: Path,
) -> None:
    script = _script()
    informed = script.run(tmp_path / "informed", script.Crowd(accuracy=0.8), games=GAMES)
    prices, truth = _prices(tmp_path / "informed")
    assert informed.kept >= GAMES and informed.kept == len(prices)
    assert 0.25 < truth.mean() < 0.75  # both kinds of target played
    [row] = summary(informed).query(f"seconds == {SECONDS}").to_dict("records")
    assert row["brier"] == pytest.approx(brier_score_loss(truth, prices))
    assert row["brier"] < 0.15  # a coin (always 50) scores 0.25
    assert _binned_error(truth, prices) < 0.15
    assert row["sharpness"] > 0.3  # and it said something: many games priced 0-9 or 90-100
    report = tmp_path / "informed" / "report"
    assert (report / "market-calibration.png").stat().st_size > 1000
    assert "Market calibration at fixed seconds" in (report / "report.md").read_text()

    wrong = script.Crowd(accuracy=0.3, believed=0.7)
    misinformed = script.run(tmp_path / "misinformed", wrong, games=GAMES, report=False)
    prices, truth = _prices(tmp_path / "misinformed")
    assert misinformed.kept >= GAMES
    [row] = summary(misinformed).query(f"seconds == {SECONDS}").to_dict("records")
    assert row["brier"] == pytest.approx(brier_score_loss(truth, prices))
    assert row["brier"] > 0.3  # confidently wrong: worse than the coin
    assert _binned_error(truth, prices) > 0.4
    confident = prices >= 0.9
    assert confident.any() and truth[confident].mean() < 0.5  # "sure it is human": mostly bots


def test_a_scripted_bettor_buys_exactly_what_is_priced_below_its_belief() -> None:
    orders = _script().orders
    for belief, level, held_kind, held in [
        (0.75, 50, None, 0),
        (0.75, 70, "human", 20),
        (0.10, 50, "human", 5),
        (0.90, 50, "computer", 30),
        (0.30, 12, None, 0),
    ]:
        worth = 100 * belief
        order = orders(belief, level, 1e6, held_kind, held, 100)
        assert order is not None
        kind, side, count = order
        # Each security of the trade, one point a security: bought below its worth to
        # the bettor, or sold above it; one more would not be.
        steps = range(count + 1)
        if (kind, side) == ("human", "buy"):
            worths = [level + j for j in range(1, count + 2)]  # the asks
            assert all(p < worth for p in worths[:-1]) and worths[-1] >= worth
        elif (kind, side) == ("computer", "buy"):
            asks = [100 - (level - j) + 1 for j in steps]
            assert all(p < 100 - worth for p in asks[:-1]) and asks[-1] >= 100 - worth
        else:  # selling what it holds first (one kind at a time), never more than held
            assert kind == held_kind and count <= held
    assert orders(0.5, 50, 1e6, None, 0, 20) is None  # no security is a bargain
    assert orders(0.999, 99, 1e6, None, 0, 20) is None  # nothing to buy at 100
    assert orders(0.9, 50, 100, None, 0, 20) == ("human", "buy", 1)  # 51 points: one
