"""The tell audit with real Chromium pages (tests/serve/browser_audit.py): nothing the
interrogator's page receives or shows tells a bot room from a person room, and the same
audit does catch a tell put back into the server; the same for three-party rooms, where
the classifier is asked which of the interrogator's two chats is the bot's.

The rooms run in real time (the study's clock 10 times faster), so no two runs are
alike: the check uses the 99% interval, which a sound server leaves about one run in a
hundred. Its power, with the rooms of :data:`PEOPLE` participants (about 33): a tell that
lets the classifier be right in about three rooms out of four fails it (25 of 33 puts
the interval's low end above 50%); the second test shows a tell that does.

The pages' load also stalls the whole machine now and then: while an audit ran, a plain
process sleeping 10 ms at a time woke up to 2.5 s late (under 25 busy processes instead,
30 ms at most), and the server's own timers with it, so an indicator can come seconds
after its 2 to 5 s. It strikes bot and person rooms alike (over eight two-party audits,
32 of 256 indicators late in bot rooms, 27 of 272 in person rooms, Mann-Whitney p = 0.28
on each room's latest), and the classifier's leaves of at least four rooms
(``tell_audit.LEAF``) keep one such room from making a rule.

Each run draws a new seed (the participants' script, their arrivals, the lobby, the
indicator's delays), so each run is a fresh sample. With one fixed seed every run met the
same chance imbalance: under seed 0 the interrogators the lobby gave the bot drew
indicator delays 0.4 to 0.6 s longer on average than the others (about 1.8 s against
1.4 s of the 0 to 3 s added), and timing noise took that past the bound in one of nine
fresh-clone CI runs. A run whose check fails is played once more with another seed: an
audit at chance fails only if both runs do (for a sound server about one time in several
thousand), and a tell put back passes if either run catches it. ``SDTT_AUDIT_SEED``
replays the seed a failure names.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from pathlib import Path

import pytest
from scipy.stats import binomtest

from tests.serve.browser_audit import BrowserAudit, play_in_chromium
from tests.serve.tell_audit import Audit, describe

PEOPLE = 50
"""Participants of the audit (about two in three are interrogators)."""
THREE_PARTY_PEOPLE = 40
"""Participants of the three-party audit (about 20 rooms of two)."""
THREE_PARTY_CAUGHT_PEOPLE = 60
"""Participants of the three-party audit that must catch a tell put back (about 30 rooms)."""
SPEED = 10
LEVEL = 0.99
ATTEMPTS = 2
"""Runs an audit gets: the test fails only if every one of them fails its check."""


def _report(name: str, audit: Audit) -> str:
    return f"{name}: {describe(audit)}"


def _indicator_before_every_answer(name: str, audit: Audit) -> None:
    # Answers came after their chat's indicator, once per question, with the bot as with
    # a person (a quick answer, mostly the bot's, used to come with none: 0.7 of the bot's
    # answers had one, 0.9 of a person's). Not every single one: a page that reconnects
    # on a loaded machine gets the answers it missed in its history, which the features
    # leave out (tests/serve/test_tell_audit.py checks every answer on a virtual clock).
    for feature in ("typing_them_on>message_them:next_share", "typing_them_on:per_question"):
        for bot in (True, False):
            values = [
                r.get(feature, 0.0) for r, b in zip(audit.rows, audit.bot, strict=True) if b is bot
            ]
            assert sum(values) / len(values) >= 0.95, _report(name, audit)


def _seeds() -> list[int]:
    """The seed of each run: new ones each time, or the one ``SDTT_AUDIT_SEED`` names."""
    pinned = os.environ.get("SDTT_AUDIT_SEED")
    if pinned:
        return [int(pinned)]
    fresh = random.SystemRandom()
    return [fresh.randrange(1_000_000) for _ in range(ATTEMPTS)]


def _audit_until_it_passes(
    folder: Path,
    check: Callable[[BrowserAudit], None],
    *,
    people: int,
    module: str = "sdtt.cli",
    mode: str = "two-party",
) -> None:
    """Play the audit with a new seed until ``check`` passes; fail with every run's
    report if none does."""
    failures = []
    for seed in _seeds():
        (run := folder / f"seed-{seed}").mkdir()
        found = play_in_chromium(
            run, people=people, speed=SPEED, seed=seed, module=module, mode=mode
        )
        try:
            check(found)
        except AssertionError as failure:
            failures.append(f"seed {seed}: {failure}")
        else:
            return
    pytest.fail("\n".join(failures))


def _two_party_at_chance(found: BrowserAudit) -> None:
    assert found.errors == []
    for name, audit in (("received", found.received), ("seen", found.seen)):
        bots = sum(audit.bot)
        assert bots >= 12 and len(audit.bot) - bots >= 12, _report(name, audit)
        low, high = audit.interval(LEVEL)
        assert low <= 0.5 <= high, _report(name, audit)
        _indicator_before_every_answer(name, audit)
    # The power claimed above: with these many rooms, a classifier right in fewer than
    # 80% of them already fails the check.
    rooms = len(found.seen.bot)
    caught = min(
        k
        for k in range(rooms + 1)
        if binomtest(k, rooms).proportion_ci(LEVEL, method="exact").low > 0.5
    )
    assert caught / rooms < 0.8, (caught, rooms)


def _three_party_at_chance(found: BrowserAudit) -> None:
    assert found.errors == []
    for name, audit in (("received", found.received), ("seen", found.seen)):
        first = sum(audit.bot[::2])
        assert first >= 6 and audit.trials - first >= 6, _report(name, audit)
        low, high = audit.interval(LEVEL)
        assert low <= 0.5 <= high, _report(name, audit)
        _indicator_before_every_answer(name, audit)


def _caught(found: BrowserAudit) -> None:
    assert found.errors == []
    for name, audit in (("received", found.received), ("seen", found.seen)):
        low, _ = audit.interval(LEVEL)
        assert low > 0.5, _report(name, audit)


def test_chromium_pages_cannot_tell_bot_rooms_from_person_rooms(tmp_path: Path) -> None:
    _audit_until_it_passes(tmp_path, _two_party_at_chance, people=PEOPLE)


def test_three_party_pages_cannot_tell_which_chat_is_the_bot(tmp_path: Path) -> None:
    _audit_until_it_passes(
        tmp_path, _three_party_at_chance, people=THREE_PARTY_PEOPLE, mode="three-party"
    )


def test_the_three_party_audit_catches_a_bot_chat_showing_its_own_typing(
    tmp_path: Path,
) -> None:
    # The server of tests/serve/tell_typing.py: the bot's chat shows the bot's typing as
    # it happens (on t1 after each question, off before each message). With about 20
    # rooms the check needs 17 right; since the audit scores every generated feature
    # (about 1,200 here), it fell short in three runs of five on 2026-12-02 (both seeds
    # each time): the tree was right in 75-80% of 20 rooms, though the tell's own feature
    # alone had an AUC of 0.07. About 30 rooms (22 right needed) give it back its power.
    _audit_until_it_passes(
        tmp_path,
        _caught,
        people=THREE_PARTY_CAUGHT_PEOPLE,
        module="tests.serve.tell_typing",
        mode="three-party",
    )


def test_the_chromium_audit_catches_a_bot_chat_that_ends_at_once(tmp_path: Path) -> None:
    # The server of tests/serve/tell_injected.py: a bot chat ends the moment the bot has
    # answered, a person's after 8 s of quiet; the page switches to the verdict then.
    _audit_until_it_passes(tmp_path, _caught, people=30, module="tests.serve.tell_injected")
