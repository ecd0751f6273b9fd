"""Style drift of a pseudo-dialogue: how far the persona side moves from the real person.

The generated dialogue's persona side (``"response"``) is cut into windows of turns
(turns 1-10, 11-20, ...); each window's style statistics (words and characters per
message, messages per burst, emoji, emoticon and punctuation rates, from
:mod:`sdtt.personas.style_stats`) are set against the same statistics of the persona's real
messages. ``words_delta`` is the paper's "# Words": mean words per message of the
generated side minus the person's. Several chains are pooled window by window.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sdtt.dialogue.condition import ChatMode
from sdtt.dialogue.message import RESPONSE, Message, Side
from sdtt.dialogue.turns import to_pingpong
from sdtt.generate.chain import TurnRecord
from sdtt.personas.style_stats import StyleStats, style_stats

DEFAULT_WINDOW = 10


@dataclass(frozen=True)
class DriftRow:
    """The persona side's style over turns ``first``..``last`` (1-based, inclusive)."""

    first: int
    last: int
    stats: StyleStats
    words_delta: float
    """Mean words per message minus the real person's."""
    chars_delta: float
    """Mean characters per message minus the real person's."""

    @property
    def label(self) -> str:
        """'1-10', or '7' for a one-turn window."""
        return str(self.first) if self.first == self.last else f"{self.first}-{self.last}"


@dataclass(frozen=True)
class DriftReport:
    """A baseline (the person's real messages) and the generated side's windows."""

    mode: ChatMode
    chains: int
    baseline: StyleStats
    rows: list[DriftRow]
    overall: DriftRow


def baseline_stats(
    conversations: Sequence[Sequence[Message]], mode: ChatMode, side: Side = RESPONSE
) -> StyleStats:
    """The person's style over their real conversations (ping-pong converted if asked)."""
    if mode == "pingpong":
        conversations = [to_pingpong(messages) for messages in conversations]
    return style_stats(conversations, side)


def _row(
    first: int, last: int, windows: list[list[Message]], baseline: StyleStats, side: Side
) -> DriftRow:
    stats = style_stats([window for window in windows if window], side)
    if stats.messages:
        words = stats.words_per_message.mean - baseline.words_per_message.mean
        chars = stats.chars_per_message.mean - baseline.chars_per_message.mean
    else:
        words = chars = 0.0
    return DriftRow(first=first, last=last, stats=stats, words_delta=words, chars_delta=chars)


def drift_report(
    chains: Sequence[Sequence[TurnRecord]],
    baseline: StyleStats,
    *,
    mode: ChatMode,
    window: int = DEFAULT_WINDOW,
    side: Side = RESPONSE,
) -> DriftReport:
    """Per-window style of ``side`` over the turns of ``chains``, against ``baseline``.

    Windows are counted by each turn's index in its chain's pseudo-dialogue, so the
    same window pools the same stretch of every chain.
    """
    if window < 1:
        raise ValueError("window must be at least 1")
    longest = max((turn.turn + 1 for turns in chains for turn in turns), default=0)
    rows: list[DriftRow] = []
    for start in range(0, longest, window):
        end = min(start + window, longest)
        windows = [
            [m for turn in turns if start <= turn.turn < end for m in turn.messages]
            for turns in chains
        ]
        rows.append(_row(start + 1, end, windows, baseline, side))
    everything = [[m for turn in turns for m in turn.messages] for turns in chains]
    overall = _row(1, max(longest, 1), everything, baseline, side)
    return DriftReport(mode=mode, chains=len(chains), baseline=baseline, rows=rows, overall=overall)
