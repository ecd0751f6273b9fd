"""The pure typing schedule: typing delays, model timestamps, staleness. No event loop here."""

from __future__ import annotations

import random
import statistics
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdtt.engine.schedule import (
    CLOSED,
    FITTED_MAX_WAIT,
    SUPERSEDED,
    FittedDelays,
    JonesBergenDelays,
    PaperDelays,
    PlannedMessage,
    ReplyContext,
    call_seed,
    drop_all,
    drop_stale,
    intended_times,
    make_preset,
    plan_reply,
)
from sdtt.errors import ConfigError
from sdtt.personas.timing import LogNormal, TimingProfile

WALL = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def context(**changes: object) -> ReplyContext:
    values: dict[str, object] = {"call": 1, "call_started": 10.0, "reply_ready": 11.0}
    values.update(changes)
    return ReplyContext(**values)  # type: ignore[arg-type]


def test_paper_delay_is_per_character_normal_draw_from_call_start() -> None:
    texts = ["hi there", "how are you doing"]
    plan = plan_reply(texts, context(), PaperDelays(), random.Random(5))
    draws = random.Random(5)
    first = 10.0 + draws.gauss(0.3, 0.03) * len(texts[0])
    second = first + draws.gauss(0.3, 0.03) * len(texts[1])
    assert [p.send_at for p in plan] == [first, second]
    # Typing shows for the typing time, but not before the reply exists (11.0).
    assert plan[0].typing_at == 11.0
    assert plan[1].typing_at == first


def test_generation_time_counts_as_thinking_so_a_slow_model_sends_at_once() -> None:
    plan = plan_reply(["ok"], context(reply_ready=40.0), PaperDelays(), random.Random(1))
    assert plan[0].send_at == 40.0
    assert plan[0].typing_at == 40.0


def test_a_new_reply_never_types_over_the_previous_send() -> None:
    plan = plan_reply(
        ["sure"], context(last_sent_at=20.0, reply_ready=15.0), PaperDelays(), random.Random(2)
    )
    rate = random.Random(2).gauss(0.3, 0.03)
    assert plan[0].send_at == pytest.approx(20.0 + rate * 4)
    assert plan[0].typing_at >= 20.0


def test_jones_bergen_formula_and_indicator_with_reading_time() -> None:
    ctx = context(call_started=10.0, reply_ready=10.5, last_user_at=6.0, read_text="x" * 40)
    plan = plan_reply(["yes ok"], ctx, JonesBergenDelays(), random.Random(9))
    draws = random.Random(9)
    delay = (
        1
        + draws.gauss(0.3, 0.03) * 6
        + draws.gauss(0.03, 0.003) * 40
        + draws.gammavariate(2.5, 0.25)
    )
    indicator = 6.0 + 2.0 + draws.uniform(0, 3)
    assert plan[0].send_at == pytest.approx(10.0 + delay)
    assert plan[0].typing_at == pytest.approx(min(max(indicator, 10.5), plan[0].send_at))


def test_jones_bergen_mean_delay_matches_the_formula() -> None:
    preset = JonesBergenDelays()
    rng = random.Random(0)
    delays = [
        preset.timing("x" * 20, first=True, read_text="y" * 50, rng=rng).delay for _ in range(4000)
    ]
    expected = 1 + 0.3 * 20 + 0.03 * 50 + 2.5 * 0.25
    assert statistics.fmean(delays) == pytest.approx(expected, rel=0.01)
    later = [
        preset.timing("x" * 20, first=False, read_text="y" * 50, rng=rng).delay for _ in range(4000)
    ]
    assert statistics.fmean(later) == pytest.approx(1 + 0.3 * 20 + 2.5 * 0.25, rel=0.01)


def profile(**changes: object) -> TimingProfile:
    values: dict[str, object] = {
        "seconds_per_char": 0.1,
        "seconds_per_char_sd": 0.0,
        "intra_burst_gap": LogNormal(mu=1.0, sigma=0.0),
        "reply_latency": LogNormal(mu=3.0, sigma=0.0),
        "burst_sizes": {2: 1.0},
    }
    values.update(changes)
    return TimingProfile(**values)  # type: ignore[arg-type]


def test_fitted_uses_the_persona_speed_gaps_latency_and_burst_size() -> None:
    import math

    ctx = context(call_started=10.0, reply_ready=10.0, last_user_at=9.0)
    plan = plan_reply(["a" * 10, "b" * 20, "c" * 5], ctx, FittedDelays(profile()), random.Random(3))
    assert len(plan) == 2, "the persona always sends bursts of two"
    latency = math.exp(3.0)
    assert plan[0].send_at == pytest.approx(max(10.0 + 1.0, 9.0 + latency))
    assert plan[1].send_at == pytest.approx(plan[0].send_at + 2.0 + math.exp(1.0))


def test_fitted_waits_are_clipped_so_a_live_partner_is_not_left_for_hours() -> None:
    slow = FittedDelays(profile(reply_latency=LogNormal(mu=12.0, sigma=0.0)))
    timing = slow.timing("hey", first=True, read_text="", rng=random.Random(1))
    assert timing.min_latency == FITTED_MAX_WAIT


def test_fitted_burst_sizes_follow_the_distribution() -> None:
    preset = FittedDelays(profile(burst_sizes={1: 0.25, 3: 0.75}))
    rng = random.Random(4)
    sizes = [preset.burst_limit(rng) for _ in range(4000)]
    assert set(sizes) == {1, 3}
    assert sizes.count(3) / len(sizes) == pytest.approx(0.75, abs=0.03)


def test_fitted_without_a_profile_falls_back_to_the_paper_speed() -> None:
    preset = make_preset("fitted")
    assert isinstance(preset, FittedDelays)
    assert preset.profile.seconds_per_char == 0.3
    assert preset.profile.fallback


def test_unknown_preset_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="paper"):
        make_preset("fast")


def test_model_timestamps_in_the_past_out_of_order_or_too_far_are_resampled() -> None:
    ctx = context(call_started=100.0, reply_ready=104.0)
    times = [
        WALL + timedelta(seconds=2),  # clock 102: already past when the reply arrived
        WALL + timedelta(seconds=10),  # clock 110: usable
        WALL + timedelta(seconds=8),  # before the previous one
        None,  # missing
        WALL + timedelta(seconds=20),  # usable
        WALL + timedelta(seconds=500),  # more than max_gap after the previous one
    ]
    result = intended_times(times, call_wall=WALL, context=ctx, max_gap=60)
    assert result == [None, 110.0, None, None, 120.0, None]


def test_a_usable_model_timestamp_delays_the_send_beyond_typing() -> None:
    plan = plan_reply(
        ["hi", "later"],
        context(call_started=0.0, reply_ready=1.0),
        PaperDelays(),
        random.Random(1),
        intended=[None, 45.0],
    )
    draws = random.Random(1)
    draws.gauss(0.3, 0.03)
    assert plan[1].send_at == 45.0
    assert plan[1].typing_at == pytest.approx(45.0 - draws.gauss(0.3, 0.03) * len("later"))


def test_max_messages_cuts_the_reply() -> None:
    plan = plan_reply(list("abcdef"), context(), PaperDelays(), random.Random(1), max_messages=2)
    assert [p.text for p in plan] == ["a", "b"]


def test_same_seed_same_plan_other_seed_other_plan() -> None:
    texts = ["one message", "and another"]
    first = plan_reply(texts, context(), JonesBergenDelays(), call_seed(7, 1, "plan"))
    again = plan_reply(texts, context(), JonesBergenDelays(), call_seed(7, 1, "plan"))
    other = plan_reply(texts, context(), JonesBergenDelays(), call_seed(8, 1, "plan"))
    assert first == again
    assert first != other


@given(
    texts=st.lists(st.text(min_size=1, max_size=80), min_size=1, max_size=6),
    call_started=st.floats(0, 1000),
    latency=st.floats(0, 60),
    last_sent=st.one_of(st.none(), st.floats(0, 1000)),
    preset=st.sampled_from(["paper", "jones-bergen", "fitted"]),
    seed=st.integers(0, 10**6),
)
def test_every_plan_is_ordered_and_never_sends_before_the_reply_exists(
    texts: list[str],
    call_started: float,
    latency: float,
    last_sent: float | None,
    preset: str,
    seed: int,
) -> None:
    reply_ready = call_started + latency
    if last_sent is not None:
        last_sent = min(last_sent, reply_ready)
    ctx = context(
        call_started=call_started,
        reply_ready=reply_ready,
        last_sent_at=last_sent,
        last_user_at=call_started - 1,
    )
    plan = plan_reply(texts, ctx, make_preset(preset), random.Random(seed))
    assert 1 <= len(plan) <= len(texts)
    previous = last_sent if last_sent is not None else reply_ready
    for item in plan:
        assert reply_ready <= item.typing_at <= item.send_at
        assert item.typing_at >= previous
        previous = item.send_at


def planned(call: int, index: int) -> PlannedMessage:
    return PlannedMessage(call=call, index=index, text=f"{call}.{index}", typing_at=0, send_at=1)


def test_a_new_reply_makes_every_unsent_message_of_older_replies_stale() -> None:
    pending = [planned(1, 2), planned(1, 3)]
    kept, dropped = drop_stale(pending, new_call=2)
    assert kept == []
    assert [d.message for d in dropped] == pending
    assert {d.reason for d in dropped} == {SUPERSEDED}


def test_messages_of_the_new_reply_itself_are_kept() -> None:
    kept, dropped = drop_stale([planned(3, 0)], new_call=3)
    assert kept == [planned(3, 0)]
    assert dropped == []


def test_closing_drops_everything_with_its_reason() -> None:
    drops = drop_all([planned(1, 0), planned(1, 1)])
    assert [d.reason for d in drops] == [CLOSED, CLOSED]
