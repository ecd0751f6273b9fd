"""The market makers' arithmetic: Turing Trade's maker and Hanson's LMSR."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.special import expit, logsumexp

from sdtt.beliefs.market import (
    PAYOUT,
    Account,
    LmsrMaker,
    Market,
    TradeRefused,
    TuringTradeMaker,
)

KINDS = st.sampled_from(["human", "computer"])
SIDES = st.sampled_from(["buy", "sell"])


def test_turing_trade_prices_move_one_point_per_security_with_a_spread_of_one() -> None:
    maker = TuringTradeMaker(50)
    assert maker.cost("human", "buy", 1) == 51  # the ask
    assert maker.cost("human", "sell", 1) == -50  # the bid, one below
    assert maker.cost("human", "buy", 3) == 51 + 52 + 53
    assert maker.cost("computer", "buy", 1) == 51  # 100 - 50, plus the spread
    maker.apply("human", "buy", 3)
    assert maker.price == 53
    maker.apply("computer", "buy", 10)
    assert maker.price == 43


def test_turing_trade_price_stays_in_0_100() -> None:
    with pytest.raises(TradeRefused, match="0-100"):
        TuringTradeMaker(99).cost("human", "buy", 2)
    with pytest.raises(TradeRefused):
        TuringTradeMaker(0).cost("computer", "buy", 1)
    assert TuringTradeMaker(99).cost("human", "buy", 1) == 100


@given(st.integers(0, 100), st.lists(st.tuples(KINDS, SIDES, st.integers(1, 5)), max_size=12))
def test_no_round_trip_makes_money(level: int, steps: list[tuple[str, str, int]]) -> None:
    # Do some trades, then undo them in reverse: the trader never ends up ahead.
    maker = TuringTradeMaker(level)
    paid = 0.0
    done = []
    for kind, side, count in steps:
        try:
            cost = maker.cost(kind, side, count)  # type: ignore[arg-type]
        except TradeRefused:
            continue
        maker.apply(kind, side, count)  # type: ignore[arg-type]
        paid += cost
        done.append((kind, side, count))
        assert 0 <= maker.price <= PAYOUT
    for kind, side, count in reversed(done):
        back = "sell" if side == "buy" else "buy"
        paid += maker.cost(kind, back, count)  # type: ignore[arg-type]
        maker.apply(kind, back, count)  # type: ignore[arg-type]
    assert maker.price == level
    assert paid >= 0


@given(st.integers(0, 99))
def test_a_security_never_costs_more_than_it_can_pay_or_less_than_nothing(level: int) -> None:
    maker = TuringTradeMaker(level)
    assert 0 < maker.cost("human", "buy", 1) <= PAYOUT
    assert 0 < TuringTradeMaker(level + 1).cost("computer", "buy", 1) <= PAYOUT


def test_bettors_hold_one_kind_pay_with_their_points_and_keep_them() -> None:
    alice, bob = Account("alice"), Account("bob", points=60)
    market = Market(TuringTradeMaker())
    market.join(alice)
    market.join(bob)
    market.trade("alice", "human", "buy", 2)  # pays 51 + 52
    assert alice.points == 1000 - 103 and alice.kind == "human" and alice.count == 2
    with pytest.raises(TradeRefused, match="sell your human"):
        market.trade("alice", "computer", "buy")
    with pytest.raises(TradeRefused, match="costs"):
        market.trade("bob", "human", "buy", 2)  # 53 + 54 > 60
    market.trade("bob", "computer", "buy")  # 100 - 52 + 1 = 49
    assert bob.points == 11
    with pytest.raises(TradeRefused, match="hold"):
        market.trade("bob", "human", "sell")
    payouts = market.settle(target_human=True)
    assert payouts == {"alice": 200.0, "bob": 0.0}
    assert alice.points == 1000 - 103 + 200 and alice.count == 0
    with pytest.raises(TradeRefused, match="settled"):
        market.trade("alice", "human", "buy")
    # Points carry over into the next game.
    next_game = Market(TuringTradeMaker())
    next_game.join(alice)
    next_game.trade("alice", "computer", "buy")
    assert alice.points == 1097 - 51


def test_lmsr_prices_and_costs() -> None:
    maker = LmsrMaker(b=10)
    assert maker.price == pytest.approx(50)
    cost = maker.cost("human", "buy", 10)
    # C(10, 0) - C(0, 0) = 100 * 10 * (ln(e + 1) - ln 2)
    assert cost == pytest.approx(1000 * (math.log(math.e + 1) - math.log(2)))
    maker.apply("human", "buy", 10)
    assert maker.price == pytest.approx(100 * math.e / (math.e + 1))
    with pytest.raises(ValueError):
        LmsrMaker(b=0)


@given(
    st.floats(1, 50),
    st.lists(st.tuples(KINDS, SIDES, st.integers(1, 20)), max_size=10),
)
def test_lmsr_identities(b: float, steps: list[tuple[str, str, int]]) -> None:
    maker = LmsrMaker(b=b)
    total = 0.0
    for kind, side, count in steps:
        before = maker.price
        cost = maker.cost(kind, side, count)  # type: ignore[arg-type]
        maker.apply(kind, side, count)  # type: ignore[arg-type]
        total += cost
        assert 0 <= maker.price <= PAYOUT  # 100 * (1 - 1e-17) rounds to 100
        # Buying human (or selling computer) raises the human price, and vice versa.
        up = (kind == "human") == (side == "buy")
        assert (maker.price >= before) if up else (maker.price <= before)
        # The cost lies between the prices before and after, per security.
        unit = before if kind == "human" else PAYOUT - before
        after = maker.price if kind == "human" else PAYOUT - maker.price
        signed = cost / count if side == "buy" else -cost / count
        assert min(unit, after) - 1e-6 <= signed <= max(unit, after) + 1e-6
    # Path independence: the total paid is C(q now) - C(0, 0).
    assert total == pytest.approx(
        maker.cost_function(maker.q_human, maker.q_computer) - maker.cost_function(0, 0),
        abs=1e-6,
    )
    # A complete set (one of each) always costs exactly the payout.
    both = maker.cost_function(maker.q_human + 1, maker.q_computer + 1)
    assert both - maker.cost_function(maker.q_human, maker.q_computer) == pytest.approx(PAYOUT)
    # The maker's worst loss is bounded by PAYOUT * b ln 2.
    worst = max(maker.q_human, maker.q_computer) * PAYOUT - total
    assert worst <= PAYOUT * b * math.log(2) + 1e-6


@given(st.floats(0.001, 50), st.integers(-1000, 1000), st.integers(-1000, 1000))
def test_lmsr_price_and_cost_match_scipys_stable_functions(b: float, qh: int, qc: int) -> None:
    maker = LmsrMaker(b=b, q_human=qh, q_computer=qc)
    assert maker.price == pytest.approx(PAYOUT * expit((qh - qc) / b), rel=1e-12, abs=1e-300)
    expected = PAYOUT * b * logsumexp([qh / b, qc / b])
    assert maker.cost_function(qh, qc) == pytest.approx(expected, rel=1e-12)


def test_a_tiny_liquidity_prices_a_big_trade_without_overflow() -> None:
    # b = 0.01 and 8 securities: exp(800) overflowed after the trade was applied.
    market = Market(LmsrMaker(b=0.01))
    market.join(Account("a"))
    made = market.trade("a", "computer", "buy", 8)
    assert made.price_after == market.maker.price == pytest.approx(0, abs=1e-300)
    assert made.cost == pytest.approx(PAYOUT * 8 - PAYOUT * 0.01 * math.log(2), rel=1e-9)
    sold = market.trade("a", "computer", "sell", 8)
    assert sold.price_after == pytest.approx(50)
    assert market.accounts["a"].points == pytest.approx(1000)


class _Unpriceable(TuringTradeMaker):
    """A maker whose price after a trade cannot be computed."""

    def price_after(self, kind: str, side: str, count: int) -> float:
        raise OverflowError("math range error")


def test_a_trade_that_cannot_be_priced_changes_nothing() -> None:
    market = Market(_Unpriceable())
    market.join(Account("a"))
    with pytest.raises(TradeRefused, match="cannot price that trade"):
        market.trade("a", "human", "buy", 3)
    assert market.maker.price == 50 and market.trades == []
    assert (market.accounts["a"].points, market.accounts["a"].count) == (1000, 0)
