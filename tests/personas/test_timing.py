"""Fitting a persona's timing profile from its timestamps."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta

import pytest
from rich.console import Console

from sdtt.dialogue.message import Message, Transcript
from sdtt.display import facts_table
from sdtt.errors import InputError
from sdtt.personas.persona import Persona, PersonaInfo
from sdtt.personas.timing import (
    TimingProfile,
    fit_timing_profile,
    persona_timing,
    timing_summary,
)

START = datetime(2024, 3, 1, 20, 0, tzinfo=UTC)
SIZES = {1: 0.5, 2: 0.3, 3: 0.2}


def synthetic(
    *,
    conversations: int = 40,
    spc: float = 0.2,
    gap: tuple[float, float] = (1.0, 0.4),
    latency: tuple[float, float] = (3.5, 0.6),
    seed: int = 7,
    whole_minutes: bool = False,
) -> list[Transcript]:
    """Chats of a person with a known typing speed, gaps, latencies and burst sizes."""
    rng = random.Random(seed)
    result = []
    for index in range(conversations):
        now = START + timedelta(days=index, minutes=rng.randrange(0, 90))
        messages = []
        for _ in range(6):
            asked = now.replace(second=0) if whole_minutes else now
            messages.append(Message(side="user", text="what do you think?", time=asked))
            now += timedelta(seconds=math.exp(rng.gauss(*latency)))
            size = rng.choices(list(SIZES), weights=list(SIZES.values()))[0]
            for position in range(size):
                text = "x" * rng.randrange(5, 80)
                if position:
                    now += timedelta(seconds=spc * len(text) + math.exp(rng.gauss(*gap)))
                stamp = now.replace(second=0) if whole_minutes else now
                messages.append(Message(side="response", text=text, time=stamp))
            now += timedelta(seconds=rng.randrange(20, 120))
        result.append(Transcript(id=f"c{index}", messages=messages))
    return result


def test_fit_recovers_known_parameters() -> None:
    profile = fit_timing_profile(synthetic())
    assert profile.fallback == []
    assert abs(profile.seconds_per_char - 0.2) < 0.03
    assert abs(profile.intra_burst_gap.mu - 1.0) < 0.2
    assert abs(profile.intra_burst_gap.sigma - 0.4) < 0.15
    assert abs(profile.reply_latency.mu - 3.5) < 0.2
    assert abs(profile.reply_latency.sigma - 0.6) < 0.15
    for size, share in SIZES.items():
        assert abs(profile.burst_sizes[size] - share) < 0.07
    assert max(range(24), key=lambda hour: profile.active_hours[hour]) in (20, 21)
    assert abs(sum(profile.active_hours) - 1) < 1e-9
    assert profile.samples == sum(
        1 for c in synthetic() for m in c.messages if m.side == "response"
    )


def test_slow_typist_is_told_apart_from_fast_one() -> None:
    slow = fit_timing_profile(synthetic(spc=0.5, seed=1))
    fast = fit_timing_profile(synthetic(spc=0.12, seed=1))
    assert slow.seconds_per_char > 2 * fast.seconds_per_char


def test_accepts_persona_transcripts_or_messages() -> None:
    transcripts = synthetic(conversations=5)
    persona = Persona(
        info=PersonaInfo(name="p", source="t", license="MIT", attribution="t"),
        conversations=transcripts,
    )
    assert fit_timing_profile(persona) == fit_timing_profile(transcripts)
    flat = fit_timing_profile(transcripts[0].messages)
    assert flat.samples == sum(1 for m in transcripts[0].messages if m.side == "response")


def test_thin_data_keeps_defaults_and_says_why() -> None:
    profile = fit_timing_profile(synthetic(conversations=1)[:1])
    default = TimingProfile()
    named = " ".join(profile.fallback)
    assert "intra_burst_gap" in named and "reply_latency" in named and "active_hours" in named
    assert profile.seconds_per_char == default.seconds_per_char
    assert profile.active_hours == default.active_hours


def test_minute_resolution_falls_back_for_seconds_but_fits_bursts() -> None:
    profile = fit_timing_profile(synthetic(whole_minutes=True))
    assert any("minute resolution" in reason for reason in profile.fallback)
    assert profile.seconds_per_char == TimingProfile().seconds_per_char
    assert not any(reason.startswith("burst_sizes") for reason in profile.fallback)
    assert abs(profile.burst_sizes[1] - 0.5) < 0.07


def test_silence_between_conversations_is_not_a_latency() -> None:
    one = [
        Message(side="user", text="hi", time=START),
        Message(side="response", text="hey", time=START + timedelta(seconds=20)),
    ]
    two = [
        Message(side="response", text="morning", time=START + timedelta(days=1)),
        Message(side="user", text="hi", time=START + timedelta(days=1, seconds=5)),
        Message(side="response", text="hey", time=START + timedelta(days=1, seconds=25)),
    ]
    split = [Transcript(id=f"c{i}", messages=m) for i, m in enumerate([one, two] * 6)]
    profile = fit_timing_profile(split)
    assert math.exp(profile.reply_latency.mu) < 30


def test_no_persona_messages() -> None:
    profile = fit_timing_profile([Message(side="user", text="hi", time=START)])
    assert profile.samples == 0 and profile.fallback


def test_profile_survives_the_persona_file_round_trip() -> None:
    profile = fit_timing_profile(synthetic(conversations=10))
    assert TimingProfile.model_validate(profile.model_dump(mode="json")) == profile


def test_describe_timing() -> None:
    console = Console(record=True, width=120)
    for profile in (
        fit_timing_profile(synthetic()),
        fit_timing_profile(synthetic(conversations=1)),
    ):
        console.print(facts_table("Timing profile", timing_summary(profile)))
    text = console.export_text()
    assert "typing speed" in text and "characters a minute" in text
    assert "busiest 20h" in text or "busiest 21h" in text
    assert "defaults kept" in text and "uniform" in text


def _persona(timing: dict[str, object] | None) -> Persona:
    messages = []
    for index in range(12):
        at = START + timedelta(minutes=3 * index)
        messages.append(Message(side="user", text=f"question {index}", time=at))
        messages.append(
            Message(side="response", text=f"answer {index}", time=at + timedelta(seconds=20))
        )
        messages.append(
            Message(side="response", text=f"more {index}!", time=at + timedelta(seconds=26))
        )
    info = PersonaInfo(name="p", source="test", license="MIT", attribution="t", timing=timing)
    return Persona(info=info, conversations=[Transcript(id="c", messages=messages)])


def test_persona_timing_prefers_the_stored_profile_and_fits_otherwise() -> None:
    stored = TimingProfile(seconds_per_char=0.1).model_dump(mode="json")
    assert persona_timing(_persona(stored)).seconds_per_char == 0.1
    fitted = persona_timing(_persona(None))
    assert fitted.samples == 24
    assert fitted.burst_sizes == {2: 1.0}


def test_a_broken_stored_profile_names_the_field() -> None:
    with pytest.raises(InputError, match=r"timing\.seconds_per_char"):
        persona_timing(_persona({"seconds_per_char": -1}))
