"""Tells: how the bot's side B writes compared with the human side B.

Each tell is the bot's value minus the human's: words and characters per message, the
shares of messages with an emoji, with punctuation, starting lower-case, and the median
seconds between User A's last line and User B's first reply (only when times are
shown). Computed from the lines judges saw (a built study) or from transcripts.
"""

from __future__ import annotations

import itertools
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


TELLS = (
    ("words", "words per message"),
    ("chars", "characters per message"),
    ("emoji", "share with emoji"),
    ("punctuation", "share with punctuation"),
    ("lowercase", "share starting lower-case"),
    ("latency", "median reply latency (s)"),
)


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


def _seconds(shown: str) -> float | None:
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


def study_sides(questionnaire: Questionnaire, key: AnswerKey) -> tuple[Side, Side]:
    """Side B of the bot chats and of the human chats over a study's test pairs."""
    texts: dict[str, list[str]] = {"bot": [], "human": []}
    latencies: dict[str, list[float]] = {"bot": [], "human": []}
    for item in questionnaire.items:
        truth = key.items.get(item.id)
        if truth is None or truth.kind != "test" or truth.is_mirror:  # a design's 2nd view
            continue
        for position, lines in enumerate(item.chats, start=1):
            who = "bot" if position == truth.bot_position else "human"
            texts[who] += [line.text for line in lines if line.speaker == "B"]
            latencies[who] += _line_latencies(lines)
    return (
        Side(tuple(texts["bot"]), tuple(latencies["bot"])),
        Side(tuple(texts["human"]), tuple(latencies["human"])),
    )


def transcript_side(conversations: Iterable[Sequence[Message]]) -> Side:
    """Side B ("response") of some conversations, with reply latencies."""
    texts: list[str] = []
    latencies: list[float] = []
    for messages in conversations:
        for before, after in itertools.pairwise(messages):
            if before.side == "user" and after.side == "response":
                latencies.append((after.time - before.time).total_seconds())
        texts += [m.text for m in messages if m.side == "response"]
    return Side(tuple(texts), tuple(latencies))
