"""The burst engine's pure part: when each reply message is typed and sent, and what goes stale.

No I/O and no clock: every function takes the times it needs (seconds on the session
clock) and a seeded ``random.Random``, so a plan is reproducible and tested without an
event loop. The trio session (:mod:`sdtt.engine.session`) drives it.

Timing rule (method.md, "Burst engine"): a message of ``n`` characters is sent a typing
delay ``d`` after it may start. The first message of a reply may start when the model
call started (the generation time counts as reading and thinking time) or, if later,
when the bot's previous message went out (nobody types two messages at once); each later
message may start when the one before it was sent. A message never goes out before its
reply exists, nor before the time the model wrote for it when that time is usable.

Delay presets (``--delays``):

- ``paper``: ``d = N(0.3, 0.03) * n`` seconds (Wu, Wu & Zhao); the typing indicator
  shows for the whole typing time.
- ``jones-bergen``: ``d = 1 + N(0.3, 0.03) * n + N(0.03, 0.003) * n_read +
  Gamma(shape 2.5, scale 0.25)``, where ``n_read`` is the length of the partner's text the
  message answers (the unread messages, for a reply's first message; nothing new to read
  for the messages after it); the typing indicator shows ``2 + U(0, 3)`` s after the
  message being answered arrived (turingtest.live).
- ``fitted``: the persona's own rhythm from a :class:`TimingProfile`: typing speed,
  gaps between messages of one burst, the latency of a first reply, and burst sizes (a
  reply is cut to a burst size drawn from the person's own distribution).
- ``human``: how the people of the chitchat corpus reply
  (:data:`~sdtt.personas.reply_timing.HUMAN`): a reply's first message goes out a delay
  drawn from the corpus's reply delays at its length after the partner's last message
  (reading, thinking and typing in one), each later one a gap drawn from the corpus's
  gaps inside a burst at its length, and a reply is cut to a burst size drawn from the
  corpus's. The model's own timestamps are not used: they come from no one's rhythm (a
  mock or a model writes them a fixed few seconds apart), and were a floor under every
  answer.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from sdtt.dialogue.condition import DelayName
from sdtt.errors import ConfigError
from sdtt.personas.reply_timing import HUMAN, ReplyTiming
from sdtt.personas.timing import LogNormal, TimingProfile
from sdtt.seeds import seeded_rng

PresetName = DelayName
PRESETS: tuple[PresetName, ...] = ("paper", "jones-bergen", "fitted", "human")

MIN_SECONDS_PER_CHAR = 0.01
"""A drawn typing speed is never faster than this (a normal draw can dip absurdly low)."""
FITTED_MAX_WAIT = 120.0
"""Seconds: fitted gaps and reply latencies are clipped here, so the long tail of a real
person's pauses (meals, sleep) never leaves a live partner waiting for minutes."""

SUPERSEDED = "superseded: a newer reply arrived before it was sent"
CLOSED = "session closed before it was sent"


@dataclass(frozen=True)
class MessageTiming:
    """One draw of a preset for one message (all in seconds)."""

    delay: float
    """From the moment the message may start to its send."""
    typing: float | None
    """How long the typing indicator shows before the send; ``None`` when the preset
    places the indicator by ``indicator_after`` instead."""
    indicator_after: float | None = None
    """Seconds after the answered message arrived at which the indicator shows."""
    min_latency: float | None = None
    """The message may not be sent earlier than this after the partner's last message."""


class DelayPreset(Protocol):
    """A typing-delay model."""

    @property
    def name(self) -> PresetName:
        """The preset's name."""
        ...

    def timing(
        self, text: str, *, first: bool, read_text: str, rng: random.Random
    ) -> MessageTiming:
        """Draw the timing of ``text``; ``first`` for a reply's first message, which
        answers ``read_text`` (the partner's unread messages)."""
        ...

    def burst_limit(self, rng: random.Random) -> int | None:
        """At most this many messages in the next reply, or ``None`` for no limit."""
        ...

    @property
    def model_times(self) -> bool:
        """Whether a message waits for the time the model wrote for it."""
        ...


def _rate(mean: float, sd: float, rng: random.Random) -> float:
    return max(MIN_SECONDS_PER_CHAR, rng.gauss(mean, sd))


@dataclass(frozen=True)
class PaperDelays:
    """``d = N(0.3, 0.03) * n``: the paper's typing delay."""

    seconds_per_char: float = 0.3
    seconds_per_char_sd: float = 0.03
    name: PresetName = "paper"
    model_times: bool = True

    def timing(
        self, text: str, *, first: bool, read_text: str, rng: random.Random
    ) -> MessageTiming:
        """Typing time only; the indicator shows while typing."""
        typing = _rate(self.seconds_per_char, self.seconds_per_char_sd, rng) * len(text)
        return MessageTiming(delay=typing, typing=typing)

    def burst_limit(self, rng: random.Random) -> int | None:
        """No limit beyond the session's own."""
        return None


@dataclass(frozen=True)
class JonesBergenDelays:
    """Jones & Bergen's delay with reading time, think time and a delayed indicator."""

    name: PresetName = "jones-bergen"
    model_times: bool = True

    def timing(
        self, text: str, *, first: bool, read_text: str, rng: random.Random
    ) -> MessageTiming:
        """``1 + N(.3,.03)*n + N(.03,.003)*n_read + Gamma(2.5, .25)``; indicator 2 + U(0,3) s."""
        n_read = len(read_text) if first else 0
        delay = (
            1.0
            + _rate(0.3, 0.03, rng) * len(text)
            + max(0.0, rng.gauss(0.03, 0.003)) * n_read
            + rng.gammavariate(2.5, 0.25)
        )
        return MessageTiming(delay=delay, typing=None, indicator_after=2.0 + rng.uniform(0.0, 3.0))

    def burst_limit(self, rng: random.Random) -> int | None:
        """No limit beyond the session's own."""
        return None


def _lognormal(dist: LogNormal, rng: random.Random) -> float:
    return min(FITTED_MAX_WAIT, math.exp(rng.gauss(dist.mu, dist.sigma)))


@dataclass(frozen=True)
class FittedDelays:
    """The persona's own typing speed, gaps, reply latency and burst sizes."""

    profile: TimingProfile
    name: PresetName = "fitted"
    model_times: bool = True

    def timing(
        self, text: str, *, first: bool, read_text: str, rng: random.Random
    ) -> MessageTiming:
        """Typing at the person's speed; later messages add an intra-burst gap; a first
        message waits at least one of the person's reply latencies."""
        profile = self.profile
        typing = _rate(profile.seconds_per_char, profile.seconds_per_char_sd, rng) * len(text)
        if first:
            return MessageTiming(
                delay=typing, typing=typing, min_latency=_lognormal(profile.reply_latency, rng)
            )
        return MessageTiming(delay=typing + _lognormal(profile.intra_burst_gap, rng), typing=typing)

    def burst_limit(self, rng: random.Random) -> int | None:
        """A burst size drawn from the person's burst-size distribution."""
        sizes = sorted(
            (size, weight) for size, weight in self.profile.burst_sizes.items() if weight > 0
        )
        if not sizes:
            return None
        total = sum(weight for _, weight in sizes)
        point = rng.random() * total
        for size, weight in sizes:
            point -= weight
            if point < 0:
                return max(1, size)
        return max(1, sizes[-1][0])


@dataclass(frozen=True)
class HumanDelays:
    """The corpus's reply delays, gaps inside a burst and burst sizes."""

    table: ReplyTiming = HUMAN
    name: PresetName = "human"
    model_times: bool = False

    def timing(
        self, text: str, *, first: bool, read_text: str, rng: random.Random
    ) -> MessageTiming:
        """A first message no sooner than a reply delay after the partner's last
        message; a later one a gap after the message before it. The indicator (of
        ``sdtt chat``) shows for a typing time at the paper's speed before the send, at
        most the whole wait."""
        typing = _rate(0.3, 0.03, rng) * len(text)
        if first:
            wait = self.table.draw_delay(len(text), rng)
            return MessageTiming(delay=0.0, typing=min(typing, wait), min_latency=wait)
        gap = self.table.draw_gap(len(text), rng)
        return MessageTiming(delay=gap, typing=min(typing, gap))

    def burst_limit(self, rng: random.Random) -> int | None:
        """A burst size drawn from the corpus's."""
        return self.table.draw_burst(rng)


def make_preset(name: str, profile: TimingProfile | None = None) -> DelayPreset:
    """The preset called ``name``; ``fitted`` uses ``profile`` (the paper's typing speed
    and default gaps when there is none)."""
    if name == "paper":
        return PaperDelays()
    if name == "jones-bergen":
        return JonesBergenDelays()
    if name == "fitted":
        return FittedDelays(
            profile if profile is not None else TimingProfile(fallback=["no timing profile"])
        )
    if name == "human":
        return HumanDelays()
    raise ConfigError(f"Unknown delay preset {name!r}: use one of {', '.join(PRESETS)}.")


@dataclass(frozen=True)
class ReplyContext:
    """What :func:`plan_reply` needs to know about the call that produced a reply."""

    call: int
    """Number of the model call (1, 2, ...)."""
    call_started: float
    """Session clock when the call started."""
    reply_ready: float
    """Session clock when the reply arrived (nothing can be sent earlier)."""
    last_user_at: float | None = None
    """When the partner's last message arrived, if any."""
    last_sent_at: float | None = None
    """When this side's previous message went out, if any."""
    read_text: str = ""
    """The partner's messages this reply answers, joined."""


@dataclass(frozen=True)
class PlannedMessage:
    """One reply message with its schedule (session clock seconds)."""

    call: int
    index: int
    """Position in its reply, from 0."""
    text: str
    typing_at: float
    """When the typing indicator shows (``typing_at <= send_at``)."""
    send_at: float


def intended_times(
    times: Sequence[datetime | None],
    *,
    call_wall: datetime,
    context: ReplyContext,
    max_gap: float | None,
) -> list[float | None]:
    """The model's timestamps as session-clock times, or ``None`` where one is resampled.

    ``call_wall`` is the wall time the prompt called "now" (the call's start). A
    timestamp is replaced by the delay preset's time (``None``) when it is missing, already
    past when the reply arrives, earlier than the previous usable one, or more than
    ``max_gap`` seconds after the previous message's time (the reply's arrival for the
    first).
    """
    result: list[float | None] = []
    previous = context.reply_ready
    for time in times:
        if time is None:
            result.append(None)
            continue
        clock = context.call_started + (time - call_wall).total_seconds()
        past = clock < previous
        too_far = max_gap is not None and clock - previous > max_gap
        if past or too_far:
            result.append(None)
            continue
        result.append(clock)
        previous = clock
    return result


def preset_decides(earliest: datetime, text: str, rng: random.Random) -> datetime:
    """A reply-parsing resampler for bots the engine runs (``PersonaBot(resample=...)``).

    A missing or bad timestamp gets no time of its own (the earliest allowed), so the
    session's delay preset alone decides when that message goes out, instead of a second,
    paper-style typing draw made while parsing.
    """
    return earliest


def plan_reply(
    texts: Sequence[str],
    context: ReplyContext,
    preset: DelayPreset,
    rng: random.Random,
    *,
    intended: Sequence[float | None] | None = None,
    max_messages: int | None = None,
) -> list[PlannedMessage]:
    """Schedule a reply's messages (see the module docstring for the rule).

    ``intended`` holds the usable model timestamps from :func:`intended_times`; the
    reply is cut to ``max_messages`` and to the preset's burst limit.
    """
    limit = preset.burst_limit(rng)
    for cap in (max_messages, limit):
        if cap is not None:
            texts = texts[: max(1, cap)]
    wanted = list(intended or [])
    planned: list[PlannedMessage] = []
    start = context.call_started
    if context.last_sent_at is not None:
        start = max(start, context.last_sent_at)
    previous_send = context.last_sent_at
    for index, text in enumerate(texts):
        first = index == 0
        timing = preset.timing(text, first=first, read_text=context.read_text, rng=rng)
        send = max(start + timing.delay, context.reply_ready)
        if first and timing.min_latency is not None and context.last_user_at is not None:
            send = max(send, context.last_user_at + timing.min_latency)
        model_time = wanted[index] if index < len(wanted) and preset.model_times else None
        if model_time is not None:
            send = max(send, model_time)
        floor = (
            context.reply_ready
            if previous_send is None
            else max(context.reply_ready, previous_send)
        )
        if timing.typing is not None:
            typing_at = send - timing.typing
        else:
            answered = context.last_user_at if first else previous_send
            if answered is None:
                answered = context.call_started
            typing_at = answered + (timing.indicator_after or 0.0)
        typing_at = min(max(typing_at, floor), send)
        planned.append(
            PlannedMessage(
                call=context.call, index=index, text=text, typing_at=typing_at, send_at=send
            )
        )
        start = send
        previous_send = send
    return planned


@dataclass(frozen=True)
class Drop:
    """A planned message that will not be sent, and why."""

    message: PlannedMessage
    reason: str


def drop_stale(
    pending: Sequence[PlannedMessage], *, new_call: int
) -> tuple[list[PlannedMessage], list[Drop]]:
    """Split ``pending`` when the reply of call ``new_call`` arrives.

    Every not-yet-sent message of an earlier reply is stale: the new reply was written
    with more of the conversation in view, so the old plan is dropped (method.md: "any
    not-yet-sent messages of the previous reply are dropped"). Returns ``(kept, dropped)``.
    """
    kept = [message for message in pending if message.call >= new_call]
    dropped = [Drop(message, SUPERSEDED) for message in pending if message.call < new_call]
    return kept, dropped


def drop_all(pending: Sequence[PlannedMessage], reason: str = CLOSED) -> list[Drop]:
    """Everything still pending, dropped for ``reason`` (e.g. the session closed)."""
    return [Drop(message, reason) for message in pending]


def call_seed(seed: int, call: int, purpose: str) -> random.Random:
    """A generator for one call and purpose, independent of how many draws others made
    (the one seed rule: :func:`~sdtt.seeds.seeded_rng`)."""
    return seeded_rng(seed, purpose, call)
