"""Drift: the persona side's style per turn window against the real person."""

from __future__ import annotations

from datetime import timedelta

from sdtt.analysis.drift import baseline_stats, drift_report
from sdtt.dialogue.message import Message
from sdtt.generate.chain import ChainSettings, TurnRecord
from tests.generate.helpers import START


def turn(index: int, words: int, *, burst: int = 1, emoji: bool = False) -> TurnRecord:
    at = START + timedelta(minutes=index)
    text = " ".join(["word"] * words) + (" 😀" if emoji else "")
    messages = [Message(side="user", text="and you?", time=at)] + [
        Message(side="response", text=text, time=at + timedelta(seconds=5 + k))
        for k in range(burst)
    ]
    return TurnRecord(
        chain="c",
        topic_index=0,
        topic="t",
        turn_index=index,
        turn=index,
        model="mock/x",
        mode="burst",
        settings=ChainSettings(),
        calls=[0],
        usage={},
        messages=messages,
    )


def person() -> list[list[Message]]:
    at = START
    return [
        [
            Message(side="user", text="hi there", time=at),
            Message(side="response", text="hey", time=at + timedelta(seconds=3)),
            Message(side="response", text="whats up", time=at + timedelta(seconds=6)),
        ]
    ]


def test_messages_growing_longer_show_as_a_rising_words_delta():
    chain = [turn(i, words=2 + i) for i in range(20)]
    baseline = baseline_stats(person(), "burst")
    report = drift_report([chain], baseline, mode="burst", window=10)
    assert baseline.words_per_message.mean == 1.5
    assert [row.label for row in report.rows] == ["1-10", "11-20"]
    first, second = report.rows
    assert first.words_delta == (sum(2 + i for i in range(10)) / 10) - 1.5
    assert second.words_delta > first.words_delta
    assert report.overall.words_delta == (sum(2 + i for i in range(20)) / 20) - 1.5


def test_windows_pool_the_same_turns_of_several_chains_and_count_bursts_and_emoji():
    chain_a = [turn(i, 3, burst=2, emoji=True) for i in range(4)]
    chain_b = [turn(i, 3, burst=1) for i in range(4)]
    report = drift_report(
        [chain_a, chain_b], baseline_stats(person(), "burst"), mode="burst", window=2
    )
    first = report.rows[0].stats
    assert first.messages == 2 * 2 + 2
    assert first.burst_size.mean == 1.5
    assert first.emoji == 4 / 6


def test_pingpong_compares_with_the_persons_first_message_of_each_burst():
    assert baseline_stats(person(), "pingpong").words_per_message.mean == 1.0
