"""The market makers' arithmetic: Turing Trade's maker and Hanson's LMSR."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

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


def test_the_price_history_is_a_belief_trace() -> None:
    market = Market(TuringTradeMaker())
    market.join(Account("a"))
    market.trade("a", "human", "buy", 5, time_s=3.0, message=1)
    market.trade("a", "human", "sell", 2, time_s=9.0, message=2)
    points = market.trace_points()
    assert [p.belief for p in points] == [50, 55, 53]
    assert {p.source for p in points} == {"price"}
    assert [p.message for p in points] == [0, 1, 2]


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
        assert 0 < maker.price < PAYOUT
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
