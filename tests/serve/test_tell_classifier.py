"""The tell audit's classifiers (tests/serve/tell_audit.py): every timing feature the
interrogator's browser can compute is scored (a new kind of frame brings its own), a tell
put back into any one of them is caught, and the audit stays at chance without one; the
three-party classifier finds a tell that only the bot's chat shows, and stays at chance
without one even when the lobby put the bot in chat 1 in most rooms."""

from __future__ import annotations

import random
from pathlib import Path
from statistics import mean

import numpy as np
import pytest
import trio
import trio.testing

from tests.serve.tell_audit import (
    Audit,
    Seen,
    _cross_validated,
    classify_pairs,
    describe,
    features,
    matrix,
    play,
    strongest,
)

TELL = "typing_them_on:per_question"
FEATURES = (*(f"feature_{n}" for n in range(12)), TELL)


def _chat(rng: random.Random, **tell: float) -> dict[str, float]:
    return {name: rng.random() for name in FEATURES} | tell


def _rooms(
    rng: random.Random, first_bot: list[bool], tell: bool
) -> list[tuple[dict[str, float], dict[str, float]]]:
    pairs = []
    for first in first_bot:
        bot = _chat(rng, **{TELL: rng.choice((4.0, 5.0))}) if tell else _chat(rng)
        person = _chat(rng, **{TELL: 2.0}) if tell else _chat(rng)
        pairs.append((bot, person) if first else (person, bot))
    return pairs


def test_a_tell_in_the_bot_chat_alone_is_found_in_every_room() -> None:
    rng = random.Random(1)
    first_bot = [rng.random() < 0.5 for _ in range(20)]
    for seed in range(10):
        assert classify_pairs(_rooms(rng, first_bot, tell=True), first_bot, seed=seed) == 20


def test_without_a_tell_it_is_at_chance_though_chat_1_was_mostly_the_bot() -> None:
    # A classifier of the room's two rows could learn "chat 1" and be right in 15 of 20.
    rng = random.Random(2)
    first_bot = [True] * 15 + [False] * 5
    accuracy = [
        classify_pairs(_rooms(rng, first_bot, tell=False), first_bot, seed=seed) / 20
        for seed in range(60)
    ]
    assert 0.42 <= mean(accuracy) <= 0.58


@pytest.fixture(scope="module")
def sound(tmp_path_factory: pytest.TempPathFactory) -> Audit:
    """The rooms of a virtual-clock audit of the sound server (about 80)."""
    folder = tmp_path_factory.mktemp("audit")
    return trio.run(
        lambda: play(Path(folder), people=120), clock=trio.testing.MockClock(autojump_threshold=0)
    )


def _room(answer_at: float, extra: bool = False) -> Seen:
    frames = [
        (10.0, {"type": "phase", "phase": "chat", "role": "interrogator"}),
        (15.0, {"type": "message", "chat": 1, "from": "you", "text": "question 1?"}),
        (18.0, {"type": "typing", "chat": 1, "from": "them", "on": True}),
        (answer_at, {"type": "message", "chat": 1, "from": "them", "text": "lol"}),
        (answer_at, {"type": "typing", "chat": 1, "from": "them", "on": False}),
    ]
    if extra:
        frames.append((answer_at + 1, {"type": "novel", "chat": 1}))
    frames.append((answer_at + 8, {"type": "phase", "phase": "verdict"}))
    return Seen(frames=frames, sent=[14.9], consented=2.0, refusal="no more")


def test_the_features_come_from_the_frames_received_a_new_kind_of_frame_with_them() -> None:
    row = features(_room(21.0), {})
    # The timings the issue found telling the bot: delay per character of an answer, the
    # time to the first answer, how long the indicator showed, messages per question.
    assert row["message_you>message_them/char:first"] == pytest.approx(6.0 / 3)
    assert row["asked>message_them:first"] == pytest.approx(6.1)
    assert row["typing_them_on>typing_them_off:mean"] == pytest.approx(3.0)
    assert row["message_them:per_question"] == 1.0
    assert row["message_them>phase_verdict:last"] == pytest.approx(8.0)
    assert row["typing_them_off>message_them:next_share"] == 0.0
    novel = features(_room(21.0, extra=True), {})
    assert {"novel:count", "message_them>novel:first", "novel>phase_verdict:mean"} <= set(novel)
    assert not any("novel" in name for name in row)


def test_a_tell_put_back_in_any_one_feature_is_caught(sound: Audit) -> None:
    # Each feature moved by two of its own spreads (or by 1 where it does not vary) in the
    # bot's rooms, every other feature as measured. Features always equal to another are
    # moved together (a tell in one is a tell in both), and the tree is given the features
    # that vary only (the same tree: it never splits on one that does not), so the 1,600
    # features make about 300 audits of a few seconds in all.
    names, x = matrix(sound.rows)
    bot = np.array(sound.bot)
    groups: dict[bytes, list[int]] = {}
    for column in range(len(names)):
        groups.setdefault(np.round(x[:, column], 6).tobytes(), []).append(column)
    varying = [same[0] for same in groups.values() if np.ptp(x[:, same[0]]) > 1e-6]
    missed = []
    for same in groups.values():
        column = same[0]
        shown = x[:, sorted({*varying, column})].copy()
        at = sorted({*varying, column}).index(column)
        spread = shown[:, at].std()
        shown[bot, at] += 2 * spread if spread > 1e-6 else 1.0
        correct = _cross_validated(shown, bot, 0)
        low, _ = Audit(rows=sound.rows, bot=list(bot), correct=correct).interval()
        if low <= 0.5:
            missed.append((names[column], correct))
    assert len(groups) > 100, len(groups)
    assert not missed, missed


@pytest.mark.trio
async def test_a_bot_timed_as_before_is_caught(tmp_path: Path, autojump_clock: object) -> None:
    # The "paper" delays under mock/chatty: answers in 2-3 fragments after a floor of
    # about 6 s, which the audit of a few chosen features did not score.
    audit = await play(tmp_path, people=120, delays="paper")
    low, _ = audit.interval()
    assert low > 0.5, describe(audit)
    assert strongest(audit)[2] < 0.01, describe(audit)


def test_one_telling_feature_among_many_is_found_at_a_chromium_audits_size(
    sound: Audit,
) -> None:
    # 33 rooms, as a Chromium audit has; the tell: the answer's delay per character a
    # third as long with the bot, about as a loaded machine's pages once made a person's
    # three times too long (the tree was at 54.5% there; this feature's AUC was 0.11).
    rooms = [dict(row) for row in sound.rows[:33]]
    bot = sound.bot[:33]
    name = "message_you>message_them/char:min"
    for row, is_bot in zip(rooms, bot, strict=True):
        if is_bot:
            row[name] *= 0.35
    found, auc, p = strongest(Audit(rows=rooms, bot=bot, correct=0))
    assert (found, p < 0.01) == (name, True), (found, auc, p)
