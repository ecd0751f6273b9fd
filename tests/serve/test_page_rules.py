"""What the server lets each participant's page do and what it tells it: the belief
slider only where the page shows it, declining consent, and the figures the page shows
(turns, lobby wait), on the virtual clock."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from sdtt.serve.matchmaker import HumanRoom, Matchmaker
from tests.serve.helpers import Browser, make_server, write_spec

pytestmark = pytest.mark.trio


def _with(spec: Path, *lines: str) -> Path:
    text = spec.read_text().replace(
        'title = "Chat study"', "\n".join(('title = "Chat study"', *lines))
    )
    spec.write_text(text)
    return spec


async def _reading_refused(browser: Browser) -> str | None:
    """Send a slider reading; the refusal it got, or None if it was stored."""
    before = len(browser.of("refused"))
    await browser.say({"type": "belief", "value": 70})
    await trio.sleep(1)
    refused = browser.of("refused")[before:]
    return refused[0]["message"] if refused else None


async def test_slider_readings_only_from_a_two_party_interrogator_of_a_slider_study(
    tmp_path: Path, autojump_clock: object
) -> None:
    server = make_server(write_spec(tmp_path, share=1.0, turns=3))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        judge, witness = Browser(server, "J1"), Browser(server, "W1")
        for browser in (judge, witness):
            await browser.open(nursery)
            await browser.say({"type": "consent"})
        await judge.wait_phase("chat")
        await witness.wait_phase("chat")
        interrogator = judge if judge.of("phase")[-1]["role"] == "interrogator" else witness
        other = witness if interrogator is judge else judge
        assert await _reading_refused(interrogator) is None
        assert await _reading_refused(other) == "This chat has no belief slider."
        nursery.cancel_scope.cancel()
    assert [(b.participant, b.value) for b in server.store.beliefs()] == [(interrogator.pid, 70)]


@pytest.mark.parametrize(
    "lines",
    [("belief_slider = false",), ('mode = "three-party"',)],
    ids=["slider-off", "three-party"],
)
async def test_no_slider_readings_where_the_page_shows_no_slider(
    tmp_path: Path, autojump_clock: object, lines: tuple[str, ...]
) -> None:
    spec = write_spec(tmp_path, turns=3)
    spec.write_text(spec.read_text().replace("belief_slider = true\n", ""))
    server = make_server(_with(spec, *lines))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        judge, witness = Browser(server, "J1"), Browser(server, "W1")
        for browser in (judge, witness):
            await browser.open(nursery)
            await browser.say({"type": "consent"})
        await judge.wait_phase("chat")
        assert await _reading_refused(judge) == "This chat has no belief slider."
        nursery.cancel_scope.cancel()
    assert server.store.beliefs() == []


async def test_declining_consent_ends_without_a_code_and_is_recorded(
    tmp_path: Path, autojump_clock: object
) -> None:
    server = make_server(write_spec(tmp_path))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        browser = Browser(server, "P1")
        await browser.open(nursery)
        await browser.say({"type": "decline"})
        await browser.wait_phase("done")
        await browser.say({"type": "consent"})  # too late: stays done, no room
        await trio.sleep(5)
        nursery.cancel_scope.cancel()
    done = browser.of("phase")[-1]
    assert done["phase"] == "done" and done["code"] is None and done["url"] is None
    assert "chose not to take part" in done["note"]
    participant = server.store.participant("P1")
    assert participant is not None and participant.outcome == "declined"
    assert server.store.rooms() == []


async def test_the_lobby_says_how_long_it_waits_at_most(
    tmp_path: Path, autojump_clock: object
) -> None:
    spec = write_spec(tmp_path, share=1.0, timeout=90)
    spec.write_text(spec.read_text().replace("[chat]\n", "[chat]\nspeed = 3\n"))
    server = make_server(spec)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        browser = Browser(server, "P1")
        await browser.open(nursery)
        await browser.say({"type": "consent"})
        await browser.wait_phase("lobby")
        nursery.cancel_scope.cancel()
    assert browser.of("phase")[-1]["wait"] == 30  # 90 s of a clock three times as fast


async def test_a_reconnect_puts_the_slider_back_and_the_chat_says_its_turns(
    tmp_path: Path, autojump_clock: object
) -> None:
    server = make_server(write_spec(tmp_path, turns=4))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        browser = Browser(server, "P1")
        await browser.enter_chat(nursery)
        first = browser.of("phase")[-1]
        for value in (30, 65):
            await browser.say({"type": "belief", "value": value})
            await trio.sleep(1)
        again = Browser(server, "P1")
        await again.open(nursery, token=browser.token)
        await again.wait_phase("chat")
        nursery.cancel_scope.cancel()
    assert (first["turns"], first["belief"]) == (4, None)
    assert again.of("phase")[-1]["belief"] == 65


async def test_the_own_persons_link_stays_on_its_device_until_the_person_moves_it(
    tmp_path: Path, autojump_clock: object
) -> None:
    spec = _with(write_spec(tmp_path, share=1.0), "own_person = true")
    server = make_server(spec, own_key="secret-key")
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        first = Browser(server, "own-person", key="secret-key")
        await first.open(nursery)
        await first.say({"type": "consent"})
        await first.wait_phase("lobby")
        second = Browser(server, "own-person", key="secret-key")
        await second.open(nursery)  # someone else's device, or the person's phone
        await second.gone.wait()
        await trio.sleep(5)
        assert first.of("refused") == [] and not first.gone.is_set()  # not kicked
        moved = Browser(server, "own-person", key="secret-key", move=True)  # type: ignore[arg-type]
        await moved.open(nursery)
        await moved.wait_phase("lobby")
        await first.gone.wait()
        back = Browser(server, "own-person", key="secret-key")
        await back.open(nursery, token=first.token)  # the old token no longer lets in
        await back.gone.wait()
        nursery.cancel_scope.cancel()
    [asked] = second.of("refused")
    assert asked["fatal"] and asked["move"] and "another device" in asked["message"]
    assert first.of("refused")[-1]["fatal"]
    assert back.of("refused")[0]["move"]
    assert moved.token != first.token
    assert [e["kind"] for e in server.store.events() if e["kind"] == "moved_device"] == [
        "moved_device"
    ]


async def test_rounds_alternate_roles_and_end_with_the_code(
    tmp_path: Path, autojump_clock: object
) -> None:
    spec = write_spec(tmp_path, share=1.0, turns=1)
    spec.write_text(spec.read_text().replace("turns = 1\n", "turns = 1\nrounds = 3\n"))
    server = make_server(spec)
    roles: list[dict[str, str]] = []
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        ann, bob = Browser(server, "ann"), Browser(server, "bob")
        for browser in (ann, bob):
            await browser.open(nursery)
            await browser.say({"type": "consent"})
            await trio.sleep(1)
        for played in range(1, 4):
            for browser in (ann, bob):
                await browser.wait(
                    lambda b=browser, n=played: (  # type: ignore[misc]
                        b.phase() == "chat" and b.of("phase")[-1]["round"] == [n, 3]
                    )
                )
            now = {b.pid: b.of("phase")[-1]["role"] for b in (ann, bob)}
            roles.append(now)
            judge = ann if now["ann"] == "interrogator" else bob
            witness = bob if judge is ann else ann
            await judge.say({"type": "send", "text": f"round {played}: who are you?"})
            await witness.wait(lambda w=witness: bool(w.texts("them")))  # type: ignore[misc]
            await witness.say({"type": "send", "text": "a person, honest"})
            await judge.wait_phase("verdict")
            await judge.say({"type": "verdict", "human": "yes", "confidence": 80, "reason": ""})
        for browser in (ann, bob):
            await browser.wait_phase("done")
        nursery.cancel_scope.cancel()
    assert roles == [
        {"ann": "interrogator", "bob": "witness"},
        {"ann": "witness", "bob": "interrogator"},
        {"ann": "interrogator", "bob": "witness"},
    ]
    assert len(server.store.rooms()) == 3 and len(server.store.verdicts()) == 3
    assert ann.of("phase")[-1]["code"] == "CODE-123"


async def test_whoever_interrogated_last_is_the_witness_next() -> None:
    lobby = Matchmaker(conditions=1, timeout=60, human_share=1.0)
    lobby.arrive("ann", 0.0, last_role="interrogator")  # waiting longest
    lobby.arrive("bob", 1.0, last_role="witness")
    lobby.arrive("cy", 2.0)
    lobby.arrive("dan", 3.0, last_role="interrogator")
    assert lobby.step(4.0) == [
        HumanRoom(interrogator="bob", witness="ann"),
        HumanRoom(interrogator="cy", witness="dan"),
    ]
