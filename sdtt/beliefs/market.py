"""Turing Trade market makers as pure arithmetic (no server, no clock).

Bettors trade two securities about a target: *human* pays :data:`PAYOUT` points if the
target is revealed human, *computer* pays it if the target is a bot. The market's
price, 0-100, is the price of *human* (that of *computer* is 100 minus it) and is the
room's belief that the target is human; its history is a belief trace (source
``price``; ``sdtt serve`` builds it from the stored trades).

Two makers:

- :class:`TuringTradeMaker`, Turing Trade's own: the price moves one point per security
  traded and stays in [0, 100]. Buying a human security at price ``p`` costs ``p + 1``
  and moves the price to ``p + 1``; selling one pays ``p`` and moves it to ``p - 1``:
  the ask is one point above the bid (the spread). Computer securities mirror it (buying
  one costs ``101 - p`` and moves the price down). Any sequence of trades that ends
  where it started costs the trader nothing or more: no arbitrage through the spread.
- :class:`LmsrMaker`, Hanson's logarithmic market scoring rule with liquidity ``b``:
  cost ``C(q) = b ln(exp(q_h / b) + exp(q_c / b))`` (times :data:`PAYOUT`), price
  ``exp(q_h / b) / (exp(q_h / b) + exp(q_c / b))``, the logistic of ``(q_h - q_c) / b``
  (both computed without overflow, however small ``b``). The maker loses at most
  ``PAYOUT * b ln 2``.

A bettor holds one kind of security at a time (sell the one kind before buying the
other), cannot spend more points than they have, and keeps their points from game to
game (:class:`Account` outlives a :class:`Market`). A trade is priced in full before
anything changes, so it is applied whole or not at all.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal, Protocol

from sdtt.errors import SdttError

PAYOUT = 100
"""Points one winning security pays."""
START_POINTS = 1000.0
"""Points a new bettor starts with."""

Kind = Literal["human", "computer"]
Side = Literal["buy", "sell"]


class TradeRefused(SdttError):
    """A trade the rules do not allow (price bound, points, holdings)."""


class Maker(Protocol):
    """An automated market maker for the human/computer pair of securities."""

    @property
    def price(self) -> float:
        """The price of one human security, 0-100."""
        ...

    def cost(self, kind: Kind, side: Side, count: int) -> float:
        """Points the trader pays (negative: receives) for ``count`` securities."""
        ...

    def price_after(self, kind: Kind, side: Side, count: int) -> float:
        """The human price the trade would leave (nothing changes)."""
        ...

    def apply(self, kind: Kind, side: Side, count: int) -> None:
        """Record the trade (after :meth:`cost` said what it costs)."""
        ...

    @property
    def spread(self) -> float:
        """Points the ask of a human security lies above its bid (the price)."""
        ...


def ask_of(maker: Maker, bid: float) -> float:
    """What one more human security costs when the price (bid) is ``bid``: the bid plus
    the maker's spread, at most :data:`PAYOUT` (the paper's figures plot this, L + 1)."""
    return min(bid + maker.spread, float(PAYOUT))


def _direction(kind: Kind, side: Side) -> int:
    """+1 when the trade pushes the human price up (buy human, sell computer)."""
    return 1 if (kind == "human") == (side == "buy") else -1


def _unit_price(level: int, kind: Kind, side: Side) -> int:
    """What one security pays (buy) or fetches (sell, negative) at human price ``level``."""
    if kind == "human":
        return level + 1 if side == "buy" else -level
    return PAYOUT - level + 1 if side == "buy" else -(PAYOUT - level)


@dataclass
class TuringTradeMaker:
    """Turing Trade's maker: one point per security, spread one, price in [0, 100]."""

    level: int = 50
    """The current human price (the bid of a human security; its ask is one more)."""

    @property
    def spread(self) -> float:
        """One point between bid and ask."""
        return 1.0

    @property
    def price(self) -> float:
        """The price of one human security."""
        return float(self.level)

    def cost(self, kind: Kind, side: Side, count: int) -> float:
        """Sum of the per-security prices as the price walks one point per security."""
        step = _direction(kind, side)
        end = self.level + step * count
        if not 0 <= end <= PAYOUT:
            raise TradeRefused(f"the price would leave 0-{PAYOUT} (it would reach {end}).")
        total = 0
        level = self.level
        for _ in range(count):
            total += _unit_price(level, kind, side)
            level += step
        return float(total)

    def price_after(self, kind: Kind, side: Side, count: int) -> float:
        """The level the trade would move the price to."""
        return float(self.level + _direction(kind, side) * count)

    def apply(self, kind: Kind, side: Side, count: int) -> None:
        """Move the price one point per security."""
        self.level += _direction(kind, side) * count


@dataclass
class LmsrMaker:
    """Hanson's logarithmic market scoring rule with liquidity ``b`` (in securities)."""

    b: float = 20.0
    q_human: float = 0.0
    q_computer: float = 0.0

    def __post_init__(self) -> None:
        if not self.b > 0:
            raise ValueError("the liquidity b must be positive")

    @property
    def spread(self) -> float:
        """None: LMSR buys and sells at the one instantaneous price."""
        return 0.0

    def cost_function(self, q_human: float, q_computer: float) -> float:
        """``C(q)`` in points (log-sum-exp, computed stably)."""
        top = max(q_human, q_computer) / self.b
        total = math.exp(q_human / self.b - top) + math.exp(q_computer / self.b - top)
        return PAYOUT * self.b * (top + math.log(total))

    def _price(self, q_human: float, q_computer: float) -> float:
        return PAYOUT * _logistic((q_human - q_computer) / self.b)

    @property
    def price(self) -> float:
        """The human security's price: 100 times its instantaneous probability."""
        return self._price(self.q_human, self.q_computer)

    def price_after(self, kind: Kind, side: Side, count: int) -> float:
        """The price at the outstanding amounts the trade would leave."""
        return self._price(*self._after(kind, side, count))

    def _after(self, kind: Kind, side: Side, count: int) -> tuple[float, float]:
        delta = count if side == "buy" else -count
        if kind == "human":
            return self.q_human + delta, self.q_computer
        return self.q_human, self.q_computer + delta

    def cost(self, kind: Kind, side: Side, count: int) -> float:
        """``C(q after) - C(q now)``."""
        now = self.cost_function(self.q_human, self.q_computer)
        return self.cost_function(*self._after(kind, side, count)) - now

    def apply(self, kind: Kind, side: Side, count: int) -> None:
        """Add the securities to the maker's outstanding amounts."""
        self.q_human, self.q_computer = self._after(kind, side, count)


def _logistic(x: float) -> float:
    """``1 / (1 + exp(-x))`` without overflow: exp is only taken of a non-positive number."""
    if x >= 0:
        return 1 / (1 + math.exp(-x))
    small = math.exp(x)
    return small / (1 + small)


@dataclass
class Account:
    """A bettor's points and holding; points carry over from game to game."""

    bettor: str
    points: float = START_POINTS
    kind: Kind | None = None
    count: int = 0


@dataclass(frozen=True)
class Trade:
    """One trade as stored: who, what, how many, what it cost and the price after."""

    bettor: str
    kind: Kind
    side: Side
    count: int
    cost: float
    price_after: float
    time_s: float | None = None
    message: int | None = None
    """Messages the target had sent when the trade was made (for answer markers)."""


@dataclass
class Market:
    """One game: a maker, the bettors' accounts and every trade in order."""

    maker: Maker
    accounts: dict[str, Account] = field(default_factory=dict)
    trades: list[Trade] = field(default_factory=list)
    settled: bool = False

    def join(self, account: Account) -> None:
        """Let a bettor (with the points they carry) trade in this market."""
        self.accounts[account.bettor] = account

    def trade(
        self,
        bettor: str,
        kind: Kind,
        side: Side,
        count: int = 1,
        *,
        time_s: float | None = None,
        message: int | None = None,
    ) -> Trade:
        """Make one trade, or raise :class:`TradeRefused` saying why not."""
        if self.settled:
            raise TradeRefused("the market is settled.")
        if count < 1:
            raise TradeRefused("trade at least one security.")
        account = self.accounts.get(bettor)
        if account is None:
            raise TradeRefused(f"{bettor!r} has not joined this market.")
        if side == "buy" and account.count and account.kind != kind:
            raise TradeRefused(f"sell your {account.kind} securities before buying {kind} ones.")
        if side == "sell" and (account.kind != kind or account.count < count):
            raise TradeRefused(f"you hold {account.count} {account.kind or 'no'} securities.")
        # Everything the trade needs is worked out before anything changes: a trade that
        # cannot be priced leaves the maker, the account and the history as they were.
        try:
            cost = self.maker.cost(kind, side, count)
            price = self.maker.price_after(kind, side, count)
        except ArithmeticError:
            cost = price = math.nan
        if not (math.isfinite(cost) and math.isfinite(price)):
            raise TradeRefused("the market maker cannot price that trade.")
        if cost > account.points + 1e-9:
            raise TradeRefused(f"that costs {cost:g} points; you have {account.points:g}.")
        made = Trade(bettor, kind, side, count, cost, price, time_s, message)
        self.maker.apply(kind, side, count)
        account.points -= cost
        account.count += count if side == "buy" else -count
        account.kind = kind if account.count else None
        self.trades.append(made)
        return made

    def settle(self, target_human: bool) -> dict[str, float]:
        """Reveal the target and pay every winning security; returns payouts by bettor."""
        if self.settled:
            raise TradeRefused("the market is already settled.")
        winner: Kind = "human" if target_human else "computer"
        payouts = {}
        for account in self.accounts.values():
            paid = float(PAYOUT * account.count) if account.kind == winner else 0.0
            account.points += paid
            account.kind, account.count = None, 0
            payouts[account.bettor] = paid
        self.settled = True
        return payouts
