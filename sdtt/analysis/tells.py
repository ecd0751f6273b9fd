"""Tells: how the bot's side B writes compared with the human side B.

Each tell is the bot's value minus the human's: words and characters per message, the
shares of messages with an emoji, with punctuation, starting lower-case, the median
seconds between User A's last line and User B's first reply and the mean hour of day of
the first line (only when times are shown), and side B's messages per chat. Computed
from the lines judges saw (a built study) or from transcripts.

Some tells are not about the words at all (latency, time of day, message count,
message length). When one of them separates the sides, judges can spot the bot
without reading it: :func:`tell_warnings` says so.
"""

from __future__ import annotations

import itertools
import math
import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from sdtt.dialogue.message import Message
from sdtt.personas.stats import EMOJI
from sdtt.questionnaires.questionnaire import AnswerKey, Line, Questionnaire

PUNCTUATION = re.compile(r"[.,!?;:]")
NAN = float("nan")


@dataclass(frozen=True)
class Side:
    """Side B of some chats: its message texts and reply latencies in seconds."""

    texts: tuple[str, ...]
    latencies: tuple[float, ...]
    per_chat: tuple[int, ...] = ()
    """Side B's messages in each chat."""
    hours: tuple[float, ...] = ()
    """Hour of day (with minutes as a fraction) of each chat's first line, where shown."""


TELLS = (
    ("words", "words per message"),
    ("chars", "characters per message"),
    ("emoji", "share with emoji"),
    ("punctuation", "share with punctuation"),
    ("lowercase", "share starting lower-case"),
    ("latency", "median reply latency (s)"),
    ("messages", "side B messages per chat"),
    ("hour", "hour of day of the first line"),
)
NON_TEXTUAL = {"chars": 0.25, "latency": 0.25, "messages": 0.25}
"""Tells that are not about the words, and the relative difference that is a warning."""
HOUR_GAP = 2.0
"""Hours between the sides' mean start times that are a warning."""


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
    }


@dataclass(frozen=True)
class TellRow:
    """One tell: the bot's value, the human's and the difference."""

    name: str
    label: str
    bot: float
    human: float

    @property
    def difference(self) -> float:
        """Bot minus human."""
        return self.bot - self.human


def compare(bot: Side, human: Side) -> list[TellRow]:
    """Every tell, bot minus human."""
    bot_values, human_values = side_values(bot), side_values(human)
    return [TellRow(name, label, bot_values[name], human_values[name]) for name, label in TELLS]


def tell_warnings(rows: Sequence[TellRow]) -> list[str]:
    """One sentence per non-textual tell that separates the bot's side from the human's."""
    warnings = []
    for row in rows:
        if math.isnan(row.difference):
            continue
        if row.name == "hour":
            separated = abs(row.difference) >= HOUR_GAP
        elif row.name in NON_TEXTUAL:
            scale = max(abs(row.bot), abs(row.human))
            separated = scale > 0 and abs(row.difference) / scale >= NON_TEXTUAL[row.name]
        else:
            continue
        if separated:
            warnings.append(
                f"{row.label}: bot {row.bot:.1f}, human {row.human:.1f}. This is not about "
                "the words: judges may tell the chats apart by it alone."
            )
    return warnings


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


def _line_latencies(lines: Sequence[Line]) -> list[float]:
    latencies = []
    for before, after in itertools.pairwise(lines):
        if before.speaker == "A" and after.speaker == "B" and before.time and after.time:
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


def study_sides(questionnaire: Questionnaire, key: AnswerKey) -> tuple[Side, Side]:
    """Side B of the bot chats and of the human chats over a study's test pairs."""
    texts: dict[str, list[str]] = {"bot": [], "human": []}
    latencies: dict[str, list[float]] = {"bot": [], "human": []}
    per_chat: dict[str, list[int]] = {"bot": [], "human": []}
    hours: dict[str, list[float]] = {"bot": [], "human": []}
    for item in questionnaire.items:
        truth = key.items.get(item.id)
        if truth is None or truth.kind != "test" or truth.is_mirror:  # a design's 2nd view
            continue
        for position, lines in enumerate(item.chats, start=1):
            who = "bot" if position == truth.bot_position else "human"
            said = [line.text for line in lines if line.speaker == "B"]
            texts[who] += said
            per_chat[who].append(len(said))
            latencies[who] += _line_latencies(lines)
            hour = _hour(lines[0].time) if lines else None
            if hour is not None:
                hours[who].append(hour)

    def side(who: str) -> Side:
        return Side(
            tuple(texts[who]), tuple(latencies[who]), tuple(per_chat[who]), tuple(hours[who])
        )

    return side("bot"), side("human")


def transcript_side(conversations: Iterable[Sequence[Message]]) -> Side:
    """Side B ("response") of some conversations, with reply latencies."""
    texts: list[str] = []
    latencies: list[float] = []
    per_chat: list[int] = []
    hours: list[float] = []
    for messages in conversations:
        for before, after in itertools.pairwise(messages):
            if before.side == "user" and after.side == "response":
                latencies.append((after.time - before.time).total_seconds())
        said = [m.text for m in messages if m.side == "response"]
        texts += said
        per_chat.append(len(said))
        if messages:
            first = messages[0].time
            hours.append(first.hour + first.minute / 60)
    return Side(tuple(texts), tuple(latencies), tuple(per_chat), tuple(hours))
