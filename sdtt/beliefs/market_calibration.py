"""Turing Trade's own analysis of a market: calibration and sharpness at fixed seconds.

The paper (Farfel & Conitzer, section 5) reads the price of a human security a given
number of seconds after each game started, puts the games into ten bins by that price
(0-9, 10-19, ..., 90-100) and draws, per bin, the share of games whose target was human
(Figure 7, calibration: a calibrated market has about 15 % human targets in the 10-19
bin) and the share of all games in the bin (Figure 8, sharpness: most games in the
outermost bins). Games where nobody bet are left out first (the paper kept 694 of about
900 games).

Here the games are market traces (source ``price``, one per room) and everything is
pure (pandas and numpy, no I/O):

- **The price at t seconds** is the last price recorded at or before t: the opening
  price until the first trade, and a game that ended before t holds its closing price
  (its market settled there).
- **Which price**: the paper plots the price to *buy* a human security, the ask (the
  bid plus the spread of one point). A price point that records its ``ask`` is read as
  that; one that records only the bid (exports before asks were recorded) is read as the
  bid, one point lower. :attr:`MarketCalibration.quote` says which was used.
- **No bets**: a game whose price never moved from its opening. Every trade moves the
  price (one point a security for Turing Trade's maker, a little for LMSR's), so this is
  exactly the games without a trade.
- **Bins**: a price ``x`` (0-100) falls in bin ``min(floor(x / 10), 9)``, so 100 shares
  the 90-100 bin, as in the paper's figures.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from sdtt.beliefs.traces import BeliefPoint, BeliefTrace

MARKET_SECONDS = (30.0, 60.0, 90.0, 120.0)
"""When prices are read by default: every 30 seconds of the paper's two-minute game."""
PRICE_BINS = 10
BIN_LABELS = (*(f"{10 * k}-{10 * k + 9}" for k in range(PRICE_BINS - 1)), "90-100")
"""The paper's bins of price: 0-9, 10-19, ..., 90-100."""
NO_BETS = "no bets"
"""Why a game without a trade is left out."""


@dataclass
class MarketCalibration:
    """Prices of market games at fixed seconds, and what was left out."""

    prices: pd.DataFrame
    """One row per kept game and second: ``item``, ``seconds``, ``price`` (0-100), ``y``
    (1 human target, 0 bot), ``bin`` (0-9)."""
    games: int
    """Market games read (traces with a price)."""
    excluded: dict[str, int] = field(default_factory=dict)
    """Games left out, by reason (``no bets``, or the trace's own exclusion reason)."""
    quote: str = "bid"
    """'ask' (the paper's price to buy a human security), 'bid' (one point lower) or
    'ask and bid' (some games recorded their ask, older ones only their bid)."""

    @property
    def kept(self) -> int:
        """Games analysed."""
        return self.games - sum(self.excluded.values())

    def note(self) -> str:
        """One line: how many games were kept, why the others were not, which price."""
        left = ", ".join(f"{n} {reason}" for reason, n in sorted(self.excluded.items()))
        quote = {
            "ask": "the ask (price to buy a human security), as in the paper",
            "bid": "the bid, one point below the paper's ask (the export records no ask)",
        }.get(self.quote, "the ask where recorded, else the bid (one point lower)")
        return (
            f"{self.kept} of {self.games} market game(s) kept"
            + (f" (left out: {left})" if left else "")
            + f"; price = {quote}, held from the last trade at or before each second."
        )


def is_market(trace: BeliefTrace) -> bool:
    """True for a market's price trace."""
    return any(p.source == "price" for p in trace.points)


def quoted(point: BeliefPoint) -> float | None:
    """The point's price to buy a human security (its ask), else its bid (``belief``)."""
    return point.ask if point.ask is not None else point.belief


def price_at(trace: BeliefTrace, seconds: float) -> float | None:
    """The price held ``seconds`` after the game started: the last one recorded at or
    before then (None before the first timed price)."""
    held = None
    for point in trace.points:
        price = quoted(point)
        if point.time_s is not None and point.time_s <= seconds and price is not None:
            held = price
    return held


def price_bin(price: float | np.ndarray) -> np.ndarray:
    """The paper's bin (0-9) of a 0-100 price; 100 is in the last bin (90-100)."""
    # The nudge keeps a price that is a multiple of ten in its own bin despite rounding.
    return np.minimum(np.floor(np.asarray(price, dtype=float) / 10 + 1e-9), PRICE_BINS - 1).astype(
        int
    )


def market_prices(
    traces: Iterable[BeliefTrace], seconds: Sequence[float] = MARKET_SECONDS
) -> MarketCalibration:
    """The price of every market game with a bet at each of ``seconds`` (see the module)."""
    games = 0
    excluded: dict[str, int] = {}
    quotes: set[str] = set()
    rows = []
    for trace in traces:
        if not is_market(trace) or trace.pair_kind != "test":
            continue
        games += 1
        reason = trace.exclusion_reason if trace.excluded else None
        # The bid moves with every trade, whichever points also record their ask.
        bids = {p.belief for p in trace.points if p.belief is not None}
        if reason is None and len(bids) < 2:
            reason = NO_BETS
        if reason is not None:
            excluded[reason] = excluded.get(reason, 0) + 1
            continue
        quotes.update("ask" if p.ask is not None else "bid" for p in trace.points)
        for second in seconds:
            price = price_at(trace, second)
            if price is None:
                continue
            rows.append(
                {
                    "item": trace.item_id,
                    "seconds": float(second),
                    "price": price,
                    "y": 1.0 if trace.target_human else 0.0,
                }
            )
    frame = pd.DataFrame(rows, columns=["item", "seconds", "price", "y"])
    frame["bin"] = price_bin(frame["price"].to_numpy())
    quote = "ask and bid" if len(quotes) > 1 else (quotes.pop() if quotes else "bid")
    return MarketCalibration(frame, games, excluded, quote)


def binned(found: MarketCalibration) -> pd.DataFrame:
    """Per second and bin (all ten, empty ones too): ``runs``, ``share`` (of the second's
    runs: Figure 8), ``humans`` and ``observed`` (share human: Figure 7, NaN when empty)."""
    rows = []
    for second, part in found.prices.groupby("seconds", sort=True):
        counts = np.bincount(part["bin"].to_numpy(dtype=int), minlength=PRICE_BINS)
        humans = np.bincount(
            part["bin"].to_numpy(dtype=int), weights=part["y"].to_numpy(), minlength=PRICE_BINS
        )
        for k in range(PRICE_BINS):
            rows.append(
                {
                    "seconds": second,
                    "bin": k,
                    "label": BIN_LABELS[k],
                    "runs": int(counts[k]),
                    "share": counts[k] / len(part),
                    "humans": int(humans[k]),
                    "observed": humans[k] / counts[k] if counts[k] else math.nan,
                }
            )
    columns = ["seconds", "bin", "label", "runs", "share", "humans", "observed"]
    return pd.DataFrame(rows, columns=columns)


def summary(found: MarketCalibration) -> pd.DataFrame:
    """Per second: ``runs``, the Brier score of price / 100, the binned calibration
    error ``ece`` (sum over bins of runs x |mean price - share human| / all runs) and the
    ``sharpness`` (share of runs in the 0-9 or 90-100 bins)."""
    rows = []
    for second, part in found.prices.groupby("seconds", sort=True):
        p = part["price"].to_numpy() / 100
        y = part["y"].to_numpy()
        bins = part["bin"].to_numpy()
        ece = sum(
            abs(p[bins == k].mean() - y[bins == k].mean()) * np.sum(bins == k)
            for k in np.unique(bins)
        ) / len(p)
        rows.append(
            {
                "seconds": second,
                "runs": len(p),
                "humans": int(y.sum()),
                "brier": float(np.mean((p - y) ** 2)),
                "ece": float(ece),
                "sharpness": float(np.mean((bins == 0) | (bins == PRICE_BINS - 1))),
            }
        )
    return pd.DataFrame(rows, columns=["seconds", "runs", "humans", "brier", "ece", "sharpness"])
