"""Turing Trade's Figures 7 and 8: market prices at fixed seconds, binned, checked
against numpy, scipy and sklearn computed here on their own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import binned_statistic
from sklearn.metrics import brier_score_loss

from sdtt.beliefs.market_calibration import (
    BIN_LABELS,
    MARKET_SECONDS,
    NO_BETS,
    binned,
    market_prices,
    summary,
)
from sdtt.beliefs.traces import BeliefPoint, BeliefTrace, write_traces
from sdtt.cli import main
from sdtt.tasks.judgements import write_judgements

EDGES = np.arange(0, 101, 10)
"""The paper's bins as edges: numpy's and scipy's last bin includes its right edge, so
100 falls in 90-100 as in the figures."""


def game(
    index: int,
    times: list[float],
    prices: list[float],
    *,
    human: bool,
    asks: list[float | None] | None = None,
    **changes: Any,
) -> BeliefTrace:
    """A market room's price trace: the opening (time 0) and a price after each trade."""
    points = [
        BeliefPoint(
            turn=0,
            time_s=t,
            belief=p,
            ask=None if asks is None else asks[i],
            source="price",
        )
        for i, (t, p) in enumerate(zip([0.0, *times], [50.0, *prices], strict=True))
    ]
    fields: dict[str, Any] = {
        "study": "trade",
        "judge_id": f"room-{index}",
        "judge_type": "human",
        "item_id": f"room-{index}",
        "item_kind": "room",
        "target": "target",
        "target_human": human,
        "source": "test",
        "points": points,
    }
    fields.update(changes)
    return BeliefTrace.model_validate(fields)


def random_games(seed: int, count: int) -> list[BeliefTrace]:
    """Games with trades at random times and whole prices (edges such as 10 and 100
    included), every fifth with no trade, every seventh ended early."""
    rng = np.random.default_rng(seed)
    games = []
    for index in range(count):
        human = bool(rng.random() < 0.5)
        if index % 5 == 0:
            games.append(game(index, [130.0], [50.0], human=human))  # opened and closed only
            continue
        trades = int(rng.integers(1, 12))
        times = np.sort(rng.uniform(1, 140, trades)).round(3).tolist()
        lean = 70 if human else 30
        prices = np.clip(rng.normal(lean, 30, trades).round(), 0, 100).tolist()
        ended = index % 7 == 3
        games.append(
            game(
                index,
                times,
                prices,
                human=human,
                excluded=ended,
                exclusion_reason="room ended early: partner_left" if ended else None,
            )
        )
    return games


def held(trace: BeliefTrace, second: float) -> float:
    """The price at ``second``, found with numpy: the last point at or before it."""
    times = np.array([p.time_s for p in trace.points])
    values = np.array([p.ask if p.ask is not None else p.belief for p in trace.points])
    return float(values[np.searchsorted(times, second, side="right") - 1])


def test_prices_at_fixed_seconds_bin_as_numpy_and_scipy_do() -> None:
    games = random_games(7, 160)
    found = market_prices(games)
    no_bets = sum(1 for i in range(160) if i % 5 == 0)
    ended = sum(1 for i in range(160) if i % 7 == 3 and i % 5 != 0)
    assert found.games == 160
    assert found.excluded == {NO_BETS: no_bets, "room ended early: partner_left": ended}
    assert found.kept == 160 - no_bets - ended
    assert f"{found.kept} of 160 market game(s) kept" in found.note()
    assert found.quote == "bid" and "one point below the paper's ask" in found.note()
    kept = [g for i, g in enumerate(games) if i % 5 != 0 and i % 7 != 3]
    table = binned(found)
    rows = summary(found)
    for second in MARKET_SECONDS:
        prices = np.array([held(g, second) for g in kept])
        truth = np.array([1.0 if g.target_human else 0.0 for g in kept])
        counts, _ = np.histogram(prices, bins=EDGES)
        observed, _, _ = binned_statistic(prices, truth, statistic="mean", bins=EDGES)
        mean_price, _, _ = binned_statistic(prices, prices / 100, statistic="mean", bins=EDGES)
        part = table.loc[table["seconds"] == second]
        assert part["label"].tolist() == list(BIN_LABELS)
        assert part["runs"].tolist() == counts.tolist()
        assert part["share"].to_numpy() == pytest.approx(counts / counts.sum())  # Figure 8
        assert part["observed"].to_numpy() == pytest.approx(observed, nan_ok=True)  # Figure 7
        [row] = rows.loc[rows["seconds"] == second].to_dict("records")
        assert row["runs"] == len(kept) and row["humans"] == truth.sum()
        assert row["brier"] == pytest.approx(brier_score_loss(truth, prices / 100))
        filled = counts > 0
        ece = np.sum(counts[filled] * np.abs(mean_price[filled] - observed[filled])) / len(prices)
        assert row["ece"] == pytest.approx(ece)
        assert row["sharpness"] == pytest.approx((counts[0] + counts[-1]) / counts.sum())
    # The edges went where the paper puts them: some prices sat exactly on one.
    assert any(held(g, s) % 10 == 0 for g in kept for s in MARKET_SECONDS)


def test_the_ask_is_read_when_recorded_and_a_game_holds_its_last_price() -> None:
    asked = game(1, [10.0, 40.0], [59.0, 20.0], human=True, asks=[51.0, 60.0, 21.0])
    bid_only = game(2, [5.0], [60.0], human=False)
    found = market_prices([asked], seconds=[9.0, 10.0, 200.0])
    assert found.quote == "ask" and "as in the paper" in found.note()
    assert found.prices["price"].tolist() == [51.0, 60.0, 21.0]
    both = market_prices([asked, bid_only], seconds=[30.0])
    assert both.quote == "ask and bid"
    assert both.prices["price"].tolist() == [60.0, 60.0]
    assert binned(both).loc[lambda t: t["runs"] > 0, "label"].tolist() == ["60-69"]


def test_score_and_report_draw_figures_7_and_8_from_a_market_export(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "300")
    beliefs, judgements = tmp_path / "beliefs.jsonl", tmp_path / "judgements.jsonl"
    write_traces(beliefs, random_games(3, 40))
    write_judgements(judgements, [])  # a market gives no verdicts, as its export writes
    assert main(["score", str(judgements), str(beliefs), "--bootstrap", "0"]) == 0
    out = capsys.readouterr().out
    assert "Market: calibration and sharpness at fixed seconds" in out
    assert "Market: games by price bin (Turing Trade Figures 7, 8)" in out
    found = market_prices(random_games(3, 40))
    assert f"{found.kept} of 40 market game(s) kept (left out: 8 no bets" in out
    report = tmp_path / "report"
    args = [str(judgements), str(beliefs), "--out", str(report), "--bootstrap", "0"]
    assert main(["report", *args]) == 0
    markdown = (report / "report.md").read_text(encoding="utf-8")
    assert "(Turing Trade Figure 7)" in markdown and "(Turing Trade Figure 8)" in markdown
    assert "Belief traces" in markdown  # beside the per-turn figures
    for name in ("market-calibration.png", "market-sharpness.png", "turn-pass.png"):
        assert (report / name).stat().st_size > 1000


def test_a_game_without_trades_is_left_out_even_if_only_its_close_records_an_ask() -> None:
    quiet = game(1, [120.0], [50.0], human=True, asks=[None, 51.0])
    traded = game(2, [10.0, 120.0], [55.0, 55.0], human=False)
    found = market_prices([quiet, traded])
    assert (found.games, found.kept, found.excluded) == (2, 1, {NO_BETS: 1})
