"""Tells: how the bot's chats differ from the human chats, side by side and condition by
condition.

Each tell is the bot chat's value minus the human chat's, for User B (the bot, or the
human it is compared with) and for User A (a simulated interrogator is a model too, and
can give the bot's chat away as surely as the bot): words and characters per message,
the shares of messages with an emoji, with punctuation, starting lower-case, right after
the same speaker's previous line (burstiness), the shares of chats the side opens with a
greeting and closes with a goodbye (where the window sits: a live chat stopped at a turn
count has no goodbye), the median seconds before the side answers and the mean hour of
day of the first line (only when times are shown), and the side's messages per chat.
Computed from the lines judges saw (a built study, per condition: a tell of one
condition is not diluted by the others) or from transcripts.

Some tells are not about the words at all (latency, time of day, message count, message
length, runs of one speaker, openings and closings). When one of them separates the
chats, judges can spot the bot without reading it: :func:`tell_warnings` says so.
"""

from __future__ import annotations

import itertools
import math
import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from sdtt.analysis.metrics import condition_name
from sdtt.dialogue.message import Message
from sdtt.personas.style_stats import EMOJI
from sdtt.tasks.questionnaire import AnswerKey, KeyItem, Line, Questionnaire

PUNCTUATION = re.compile(r"[.,!?;:]")
GREETING = re.compile(
    r"^\W*(hi+|hey+|hello|hiya|howdy|yo|heya|greetings|good (morning|afternoon|evening)|"
    r"what'?s up|sup|how are you|how'?s it going)\b",
    re.IGNORECASE,
)
"""A message that opens a chat (checked at its start)."""
FAREWELL = re.compile(
    r"\b(bye+|goodbye|see (ya|you)|cya|ttyl|talk (to you )?(later|soon)|good ?night|"
    r"take care|good talk|nice (talking|chatting)|gotta go|have a good (one|day|night))\b",
    re.IGNORECASE,
)
"""A message that closes a chat."""
NAN = float("nan")


@dataclass(frozen=True)
class Side:
    """One side (User A or User B) of some chats: its message texts and reply latencies in
    seconds, and what each chat shows of it."""

    texts: tuple[str, ...]
    latencies: tuple[float, ...]
    per_chat: tuple[int, ...] = ()
    """The side's messages in each chat."""
    hours: tuple[float, ...] = ()
    """Hour of day (with minutes as a fraction) of each chat's first line, where shown."""
    follows: tuple[bool, ...] = ()
    """Per message (but a chat's first line): whether the line before it is the side's too."""
    opens: tuple[bool, ...] = ()
    """Per chat: whether the side's first message is a greeting."""
    closes: tuple[bool, ...] = ()
    """Per chat: whether the side's last message says goodbye."""


TELLS = (
    ("words", "words per message"),
    ("chars", "characters per message"),
    ("emoji", "share with emoji"),
    ("punctuation", "share with punctuation"),
    ("lowercase", "share starting lower-case"),
    ("latency", "median reply latency (s)"),
    ("messages", "messages per chat"),
    ("hour", "hour of day of the first line"),
    ("runs", "share right after its own line"),
    ("opening", "share of chats opened with a greeting"),
    ("closing", "share of chats closed with a goodbye"),
)
NON_TEXTUAL = {"chars": 0.25, "latency": 0.25, "messages": 0.25}
"""Tells that are not about the words, and the relative difference that is a warning."""
SHARE_GAPS = {"runs": 0.2, "opening": 0.25, "closing": 0.25}
"""Tells that are shares not about the words, and the difference that is a warning."""
HOUR_GAP = 2.0
"""Hours between the sides' mean start times that are a warning."""
SIDES = ("A", "B")


def _mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else NAN


def side_values(side: Side) -> dict[str, float]:
    """The tell values of one side."""
    texts = side.texts
    lettered = [t.strip() for t in texts if t.strip()[:1].isalpha()]
    return {
        "words": _mean([len(t.split()) for t in texts]),
        "chars": _mean([len(t) for t in texts]),
        "emoji": _mean([float(EMOJI.search(t) is not None) for t in texts]),
        "punctuation": _mean([float(PUNCTUATION.search(t) is not None) for t in texts]),
        "lowercase": _mean([float(t[0].islower()) for t in lettered]),
        "latency": statistics.median(side.latencies) if side.latencies else NAN,
        "messages": _mean([float(n) for n in side.per_chat]),
        "hour": _mean(side.hours),
        "runs": _mean([float(f) for f in side.follows]),
        "opening": _mean([float(o) for o in side.opens]),
        "closing": _mean([float(c) for c in side.closes]),
    }


@dataclass(frozen=True)
class TellRow:
    """One tell of one side: the bot chat's value, the human chat's and the difference."""

    name: str
    label: str
    bot: float
    human: float
    side: str = "B"
    """'A' (the interrogator, simulated or a person) or 'B' (the bot or the human)."""

    @property
    def difference(self) -> float:
        """Bot minus human."""
        return self.bot - self.human


def compare(bot: Side, human: Side, side: str = "B") -> list[TellRow]:
    """Every tell of one side, bot chat minus human chat."""
    bot_values, human_values = side_values(bot), side_values(human)
    return [
        TellRow(name, label, bot_values[name], human_values[name], side) for name, label in TELLS
    ]


def compare_chats(bot: Mapping[str, Side], human: Mapping[str, Side]) -> list[TellRow]:
    """Every tell of both sides (``{"A": ..., "B": ...}``), side B first."""
    return [row for side in reversed(SIDES) for row in compare(bot[side], human[side], side)]


def _separated(row: TellRow) -> bool:
    if row.name == "hour":
        return abs(row.difference) >= HOUR_GAP
    if row.name in SHARE_GAPS:
        return abs(row.difference) >= SHARE_GAPS[row.name]
    if row.name in NON_TEXTUAL:
        scale = max(abs(row.bot), abs(row.human))
        return scale > 0 and abs(row.difference) / scale >= NON_TEXTUAL[row.name]
    return False


def tell_warnings(rows: Sequence[TellRow], condition: str | None = None) -> list[str]:
    """One sentence per non-textual tell that separates the bot's chats from the human's
    (naming the side, and ``condition`` when given)."""
    warnings = []
    for row in rows:
        if math.isnan(row.difference) or not _separated(row):
            continue
        where = f"{condition}, " if condition else ""
        shares = row.name in SHARE_GAPS
        bot, human = (
            (f"{row.bot:.0%}", f"{row.human:.0%}")
            if shares
            else (
                f"{row.bot:.1f}",
                f"{row.human:.1f}",
            )
        )
        warnings.append(
            f"{where}side {row.side} {row.label}: bot {bot}, human {human}. This is not "
            "about the words: judges may tell the chats apart by it alone."
        )
    return warnings


def condition_warnings(tells: Mapping[str, Sequence[TellRow]]) -> list[str]:
    """:func:`tell_warnings` of every condition."""
    return [w for condition, rows in tells.items() for w in tell_warnings(rows, condition)]


def _relative(shown: str) -> float | None:
    parts = shown.lstrip("+").split(":")
    if not all(part.isdigit() for part in parts) or len(parts) not in (2, 3):
        return None
    seconds = 0.0
    for part in parts:
        seconds = seconds * 60 + int(part)
    return seconds


def _seconds(shown: str) -> float | None:
    if shown.startswith("+"):
        return _relative(shown)
    for pattern in ("%H:%M:%S", "%Y-%m-%d %H:%M:%S"):
        try:
            moment = datetime.strptime(shown, pattern)
        except ValueError:
            continue
        return (
            moment.hour * 3600
            + moment.minute * 60
            + moment.second
            + (moment.toordinal() * 86400 if pattern != "%H:%M:%S" else 0)
        )
    return None


def _line_latencies(lines: Sequence[Line], speaker: str = "B") -> list[float]:
    latencies = []
    other = "A" if speaker == "B" else "B"
    for before, after in itertools.pairwise(lines):
        if before.speaker == other and after.speaker == speaker and before.time and after.time:
            start, end = _seconds(before.time), _seconds(after.time)
            if start is not None and end is not None:
                # Times shown without dates wrap at midnight.
                latencies.append((end - start) % 86400)
    return latencies


def _hour(shown: str | None) -> float | None:
    if shown is None or shown.startswith("+"):
        return None
    seconds = _seconds(shown)
    return None if seconds is None else (seconds % 86400) / 3600


class _Collector:
    """Gathers one side's values chat by chat."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.latencies: list[float] = []
        self.per_chat: list[int] = []
        self.hours: list[float] = []
        self.follows: list[bool] = []
        self.opens: list[bool] = []
        self.closes: list[bool] = []

    def add(
        self,
        speakers: Sequence[str],
        texts: Sequence[str],
        me: str,
        latencies: Sequence[float],
        hour: float | None,
    ) -> None:
        """One chat: every line's speaker and text, in order."""
        said = [text for speaker, text in zip(speakers, texts, strict=True) if speaker == me]
        self.texts += said
        self.per_chat.append(len(said))
        self.latencies += latencies
        self.follows += [
            after == me and before == me
            for before, after in itertools.pairwise(speakers)
            if after == me
        ]
        if said:
            self.opens.append(GREETING.search(said[0]) is not None)
            self.closes.append(FAREWELL.search(said[-1]) is not None)
        if hour is not None:
            self.hours.append(hour)

    def side(self) -> Side:
        return Side(
            tuple(self.texts),
            tuple(self.latencies),
            tuple(self.per_chat),
            tuple(self.hours),
            tuple(self.follows),
            tuple(self.opens),
            tuple(self.closes),
        )


Chats = dict[str, Side]
"""Both sides of some chats: ``{"A": side A, "B": side B}``."""


def _study_chats(
    questionnaire: Questionnaire, key: AnswerKey
) -> dict[str, tuple[dict[str, _Collector], dict[str, _Collector]]]:
    found: dict[str, tuple[dict[str, _Collector], dict[str, _Collector]]] = {}
    for item in questionnaire.items:
        truth = key.items.get(item.id)
        if truth is None or truth.kind != "test" or truth.is_mirror:  # a design's 2nd view
            continue
        condition = condition_of(truth)
        if condition not in found:
            found[condition] = (
                {side: _Collector() for side in SIDES},
                {side: _Collector() for side in SIDES},
            )
        bot, human = found[condition]
        for position, lines in enumerate(item.chats, start=1):
            chats = bot if position == truth.bot_position else human
            speakers = [line.speaker for line in lines]
            texts = [line.text for line in lines]
            hour = _hour(lines[0].time) if lines else None
            for side in SIDES:
                chats[side].add(speakers, texts, side, _line_latencies(lines, side), hour)
    return found


def condition_of(truth: KeyItem) -> str:
    """The condition a test pair belongs to, labelled as the score tables label it."""
    return condition_name(
        truth.bot.condition, x=truth.x_turns, n=truth.pseudo_turns, turns=truth.total_turns
    )


def study_tells(questionnaire: Questionnaire, key: AnswerKey) -> dict[str, list[TellRow]]:
    """Every tell of both sides, bot chats minus human chats, one list per condition
    (model, mode, interrogator, N, X) of a study's test pairs."""
    return {
        condition: compare_chats(
            {side: bot[side].side() for side in SIDES},
            {side: human[side].side() for side in SIDES},
        )
        for condition, (bot, human) in sorted(_study_chats(questionnaire, key).items())
    }


def study_sides(questionnaire: Questionnaire, key: AnswerKey, side: str = "B") -> tuple[Side, Side]:
    """One side of the bot chats and of the human chats over all of a study's test pairs,
    pooled over conditions (:func:`study_tells` keeps them apart)."""
    bot, human = _Collector(), _Collector()
    for bots, humans in _study_chats(questionnaire, key).values():
        for target, source in ((bot, bots[side]), (human, humans[side])):
            for name in vars(target):
                getattr(target, name).extend(getattr(source, name))
    return bot.side(), human.side()


def transcript_side(conversations: Iterable[Sequence[Message]], side: str = "B") -> Side:
    """One side ("B" = "response", "A" = "user") of some conversations, with its reply
    latencies."""
    me = "response" if side == "B" else "user"
    collected = _Collector()
    for messages in conversations:
        latencies = [
            (after.time - before.time).total_seconds()
            for before, after in itertools.pairwise(messages)
            if before.side != me and after.side == me
        ]
        hour = messages[0].time.hour + messages[0].time.minute / 60 if messages else None
        collected.add([m.side for m in messages], [m.text for m in messages], me, latencies, hour)
    return collected.side()
