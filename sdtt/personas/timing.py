"""A persona's timing profile: how fast and in what rhythm the person writes.

Fitted from the persona's own timestamps (see :func:`fit_timing_profile`) and stored in
the persona file, so the engine's ``fitted`` delay preset can make the bot type like the
person.
"""

from __future__ import annotations

import itertools
import math
import statistics
from array import array
from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sdtt.dialogue.message import RESPONSE, Message, Transcript
from sdtt.dialogue.store import validation_problem
from sdtt.dialogue.turns import side_runs
from sdtt.errors import InputError
from sdtt.personas.persona import Persona


class LogNormal(BaseModel):
    """A log-normal distribution of seconds: ``exp(N(mu, sigma))``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mu: float
    sigma: float = Field(ge=0)


class TimingProfile(BaseModel):
    """Typing speed, gaps and burst sizes estimated from a persona's messages."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    seconds_per_char: float = Field(
        default=0.3, gt=0, description="Typing time per character (method default 0.3 s)."
    )
    seconds_per_char_sd: float = Field(default=0.03, ge=0)
    intra_burst_gap: LogNormal = Field(
        default=LogNormal(mu=1.6, sigma=0.8),
        description="Seconds between two messages of the same burst, beyond typing.",
    )
    reply_latency: LogNormal = Field(
        default=LogNormal(mu=3.0, sigma=1.0),
        description="Seconds from the partner's last message to the first reply.",
    )
    burst_sizes: dict[int, float] = Field(
        default_factory=lambda: {1: 0.55, 2: 0.25, 3: 0.12, 4: 0.08},
        description="Probability of each number of messages in a burst.",
    )
    active_hours: list[float] = Field(
        default_factory=lambda: [1 / 24] * 24,
        description="Share of messages sent in each hour of the day (0-23).",
    )
    samples: int = Field(default=0, description="How many messages the fit used.")
    fallback: list[str] = Field(
        default_factory=list,
        description="Which parts fell back to defaults because the data were thin.",
    )


MIN_INTRA_GAPS = 10
"""Fewer intra-burst gaps than this and typing speed and gaps keep their defaults."""
MIN_LATENCIES = 10
"""Fewer reply latencies than this and the latency keeps its default."""
MIN_BURSTS = 10
"""Fewer bursts than this and the burst-size distribution keeps its default."""
MIN_HOUR_MESSAGES = 24
"""Fewer persona messages than this and active hours stay uniform."""
MAX_INTRA_GAP = 300.0
"""Longer pauses inside a burst are thinking or interruptions, not typing."""
MAX_BURST_SIZE = 20
"""Bursts longer than this are counted as this long."""
SPC_RANGE = (0.05, 1.5)
"""Plausible seconds per character; a fitted slope outside is clamped."""
SPC_CV = 0.1
"""Spread of the per-message typing speed relative to its mean (the method's 0.03/0.3)."""
GAP_FLOOR = 0.5
LATENCY_FLOOR = 1.0
_THEIL_SEN_POINTS = 300


def _as_conversations(
    source: Persona | Sequence[Transcript] | Sequence[Message],
) -> list[list[Message]]:
    if isinstance(source, Persona):
        return [list(conversation.messages) for conversation in source.conversations]
    items = list(source)
    if all(isinstance(item, Transcript) for item in items):
        return [list(item.messages) for item in items if isinstance(item, Transcript)]
    return [[item for item in items if isinstance(item, Message)]]


def _log_normal(values: Sequence[float], floor: float) -> LogNormal:
    logs = [math.log(max(value, floor)) for value in values]
    return LogNormal(mu=statistics.fmean(logs), sigma=statistics.pstdev(logs))


def _theil_sen_slope(lengths: Sequence[int], gaps: Sequence[float]) -> float | None:
    """Median of the pairwise slopes (robust to the long tail of thinking pauses)."""
    indices: Sequence[int] = range(len(lengths))
    if len(lengths) > _THEIL_SEN_POINTS:
        step = len(lengths) / _THEIL_SEN_POINTS
        indices = [int(index * step) for index in range(_THEIL_SEN_POINTS)]
    points = [(float(lengths[index]), gaps[index]) for index in indices]
    slopes = [
        (y2 - y1) / (x2 - x1)
        for index, (x1, y1) in enumerate(points)
        for x2, y2 in points[index + 1 :]
        if x2 != x1
    ]
    return statistics.median(slopes) if slopes else None


def _fit_typing(
    lengths: Sequence[int], gaps: Sequence[float], fallback: list[str]
) -> tuple[float, float, LogNormal]:
    """Seconds per character and the remaining gap, from the next message's length and
    the gap before it, pair by pair."""
    default = TimingProfile()
    if len(lengths) < MIN_INTRA_GAPS:
        fallback.append(
            f"seconds_per_char, intra_burst_gap: only {len(lengths)} usable gaps inside bursts "
            f"(need {MIN_INTRA_GAPS})"
        )
        return default.seconds_per_char, default.seconds_per_char_sd, default.intra_burst_gap
    slope = _theil_sen_slope(lengths, gaps)
    if slope is None:  # every message had the same length: only the ratio is left
        slope = statistics.median(gap / length for length, gap in zip(lengths, gaps, strict=True))
    low, high = SPC_RANGE
    if not low <= slope <= high:
        fallback.append(
            f"seconds_per_char: fitted {slope:.3f} s/char is implausible, clamped to "
            f"[{low}, {high}]"
        )
        slope = min(max(slope, low), high)
    remainders = [gap - slope * length for length, gap in zip(lengths, gaps, strict=True)]
    return slope, slope * SPC_CV, _log_normal(remainders, GAP_FLOOR)


class TimingFit:
    """What :func:`fit_timing_profile` measures, gathered one conversation at a time
    (:meth:`add`), so a persona of millions of messages is fitted without holding them:
    the gaps and latencies as arrays of numbers, the bursts and hours as counts."""

    def __init__(self) -> None:
        self._lengths = array("q")
        self._gaps = array("d")
        self._latencies = array("d")
        self._bursts: Counter[int] = Counter()
        self._hours: Counter[int] = Counter()
        self._messages = 0
        self._whole_minutes = 0

    def add(self, conversation: Sequence[Message]) -> None:
        """Count one conversation's messages (in time order)."""
        if not conversation:
            return
        self._bursts.update(min(size, MAX_BURST_SIZE) for size in side_runs(conversation))
        self._messages += len(conversation)
        self._whole_minutes += sum(1 for message in conversation if message.time.second == 0)
        self._hours.update(
            message.time.hour for message in conversation if message.side == RESPONSE
        )
        for before, after in itertools.pairwise(conversation):
            seconds = (after.time - before.time).total_seconds()
            if after.side != RESPONSE or seconds <= 0:
                continue
            if before.side == RESPONSE and seconds <= MAX_INTRA_GAP and after.text:
                self._lengths.append(len(after.text))
                self._gaps.append(seconds)
            elif before.side != RESPONSE:
                self._latencies.append(seconds)

    def profile(self) -> TimingProfile:
        """The profile of everything added (see :func:`fit_timing_profile`)."""
        persona = sum(self._hours.values())
        default = TimingProfile()
        if not persona:
            return TimingProfile(fallback=["all: no messages from the persona"])
        fallback: list[str] = []
        # Timestamps with minutes only (WhatsApp on Android, for instance).
        if self._messages >= 5 and self._whole_minutes >= 0.9 * self._messages:
            reason = "timestamps have minute resolution, too coarse for gaps of seconds"
            fallback.append(f"seconds_per_char, intra_burst_gap, reply_latency: {reason}")
            spc, spc_sd, intra = (
                default.seconds_per_char,
                default.seconds_per_char_sd,
                default.intra_burst_gap,
            )
            latency = default.reply_latency
        else:
            spc, spc_sd, intra = _fit_typing(self._lengths, self._gaps, fallback)
            if len(self._latencies) < MIN_LATENCIES:
                fallback.append(
                    f"reply_latency: only {len(self._latencies)} replies to the partner "
                    f"(need {MIN_LATENCIES})"
                )
                latency = default.reply_latency
            else:
                latency = _log_normal(self._latencies, LATENCY_FLOOR)

        bursts = sum(self._bursts.values())
        if bursts < MIN_BURSTS:
            fallback.append(f"burst_sizes: only {bursts} bursts (need {MIN_BURSTS})")
            burst_sizes = default.burst_sizes
        else:
            burst_sizes = {size: self._bursts[size] / bursts for size in sorted(self._bursts)}

        if persona < MIN_HOUR_MESSAGES:
            fallback.append(
                f"active_hours: only {persona} persona messages (need {MIN_HOUR_MESSAGES})"
            )
            active_hours = default.active_hours
        else:
            active_hours = [self._hours[hour] / persona for hour in range(24)]

        return TimingProfile(
            seconds_per_char=spc,
            seconds_per_char_sd=spc_sd,
            intra_burst_gap=intra,
            reply_latency=latency,
            burst_sizes=burst_sizes,
            active_hours=active_hours,
            samples=persona,
            fallback=fallback,
        )


def fit_timing_profile(
    source: Persona | Sequence[Transcript] | Sequence[Message],
) -> TimingProfile:
    """Fit a persona's timing profile from its timestamps (side B, ``"response"``).

    - typing speed: robust (Theil-Sen) slope of the gap between two messages of one burst
      against the second message's length, over gaps up to 5 minutes;
    - intra-burst gap: log-normal fit of what is left of those gaps after typing;
    - reply latency: log-normal fit of the time from the partner's last message to the
      persona's first reply, inside a conversation;
    - burst sizes and active hours: observed shares.

    Thin data keep the defaults for the affected parts, and ``fallback`` says which and
    why. Timestamps with minute resolution cannot measure gaps of seconds, so typing speed,
    intra-burst gaps and reply latency then keep their defaults as well.
    """
    fit = TimingFit()
    for conversation in _as_conversations(source):
        fit.add(conversation)
    return fit.profile()


def persona_timing(persona: Persona) -> TimingProfile:
    """The persona's timing profile: the one stored in its file, else fitted from its
    messages (parts with thin data keep the defaults; ``fallback`` says which)."""
    stored = persona.info.timing
    if stored is not None:
        try:
            return TimingProfile.model_validate(stored)
        except ValidationError as error:
            field, problem = validation_problem(error)
            raise InputError(
                f"the stored timing profile of persona {persona.name!r} is invalid ({problem}).",
                field=f"timing.{field}",
                hint="Rebuild the persona file, or remove its 'timing' field to refit it.",
            ) from None
    return fit_timing_profile(persona)


def _seconds(value: float) -> str:
    if value < 90:
        return f"{value:.1f} s"
    if value < 5400:
        return f"{value / 60:.1f} min"
    return f"{value / 3600:.1f} h"


def _spread(distribution: LogNormal) -> str:
    median = math.exp(distribution.mu)
    low = math.exp(distribution.mu - 1.2816 * distribution.sigma)
    high = math.exp(distribution.mu + 1.2816 * distribution.sigma)
    return f"median {_seconds(median)} (80% between {_seconds(low)} and {_seconds(high)})"


def timing_summary(profile: TimingProfile) -> list[tuple[str, str]]:
    """What ``sdtt persona show`` says about the profile: (what, value) in plain text."""
    chars_per_minute = 60 / profile.seconds_per_char
    rows = [
        (
            "typing speed",
            f"{profile.seconds_per_char:.3f} s/char (sd {profile.seconds_per_char_sd:.3f}), "
            f"about {chars_per_minute:.0f} characters a minute",
        ),
        ("gap inside a burst", _spread(profile.intra_burst_gap)),
        ("reply latency", _spread(profile.reply_latency)),
    ]
    mean_burst = sum(size * share for size, share in profile.burst_sizes.items())
    shares = ", ".join(
        f"{size}: {share:.0%}" for size, share in sorted(profile.burst_sizes.items())[:6]
    )
    rows.append(("messages per burst", f"mean {mean_burst:.2f} ({shares})"))
    ranked = sorted(range(24), key=lambda hour: -profile.active_hours[hour])
    if max(profile.active_hours) - min(profile.active_hours) < 1e-9:
        hours_text = "uniform (not fitted)"
    else:
        hours_text = "busiest " + ", ".join(
            f"{hour:02d}h ({profile.active_hours[hour]:.0%})" for hour in ranked[:3]
        )
    rows.append(("active hours", hours_text))
    rows.append(("fitted from", f"{profile.samples} persona messages"))
    if profile.fallback:
        rows.append(("defaults kept", "\n".join(profile.fallback)))
    return rows
