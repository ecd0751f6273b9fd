"""A whole two-party game with the persona bot, on trio's virtual clock."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import trio

from sdtt.serve.server import StudyServer
from tests.serve.helpers import PERSONA, Browser, make_server, write_spec

pytestmark = pytest.mark.trio


async def play_bot_game(
    server: StudyServer,
    nursery: trio.Nursery,
    pid: str,
    *,
    verdict: str = "no",
    study_id: str = "S1",
    session_id: str = "X9",
) -> Browser:
    """Join, consent, chat until the verdict is asked (a turn after the last is
    refused and sends no belief reading), give it."""
    browser = Browser(server, pid, study_id=study_id, session_id=session_id)
    await browser.open(nursery)
    await browser.wait_phase("consent")
    await browser.say({"type": "consent"})
    await browser.wait_phase("chat")
    for turn in range(5):
        if browser.phase() != "chat":
            break
        refused = len(browser.of("refused"))
        await browser.say({"type": "send", "text": f"hello there, question {turn}"})
        await trio.sleep(0.1)
        if len(browser.of("refused")) > refused:
            break
        await browser.say({"type": "belief", "value": 40 + turn})
        replies = len(browser.texts("them"))
        await browser.wait(
            lambda r=replies: len(browser.texts("them")) > r or browser.phase() != "chat"
        )
        await trio.sleep(20)
    await browser.wait_phase("verdict")
    await browser.say(
        {"type": "verdict", "human": verdict, "confidence": 80, "reason": "too quick"}
    )
    await browser.wait_phase("done")
    return browser


async def test_frames_queued_together_reach_the_page_as_one_message_in_order(
    tmp_path: Path, autojump_clock: object
) -> None:
    server = make_server(write_spec(tmp_path))
    notices = [{"type": "notice", "message": f"notice {n}"} for n in range(3)]
    alone = {"type": "notice", "message": "on its own"}
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        browser = Browser(server, "P1")
        await browser.open(nursery)
        await browser.wait_phase("consent")
        before = len(browser.messages)
        for notice in notices:
            server.connections.deliver("P1", notice)
        await browser.wait(lambda: len(browser.of("notice")) == 3)
        server.connections.deliver("P1", alone)
        await browser.wait(lambda: len(browser.of("notice")) == 4)
        nursery.cancel_scope.cancel()
    # One message (a list) for the three, in the order queued; a bare frame for the one.
    assert [json.loads(m) for m in browser.messages[before:]] == [notices, alone]


async def test_bot_game_from_link_to_completion_code(
    tmp_path: Path, autojump_clock: object
) -> None:
    server = make_server(write_spec(tmp_path, turns=2))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        browser = await play_bot_game(server, nursery, "P1")
        nursery.cancel_scope.cancel()

    joined = browser.of("joined")[0]
    assert joined["consent"].startswith("You agree")
    assert joined["slider"] is True
    assert joined["speed"] == 1  # the page's clocks count the study's seconds as real ones
    done = browser.of("phase")[-1]
    assert done["code"] == "CODE-123"
    assert done["url"] == "https://example.org/done?cc=CODE-123"
    assert browser.texts("them"), "the bot answered"

    store = server.store
    [room] = store.rooms()
    assert room.state == "done" and room.end_reason == "finished"
    assert room.witness == "bot"
    messages = store.messages(room.id)
    assert [m.text for m in messages] == browser.texts()
    assert {m.sender for m in messages} == {"interrogator", "witness"}
    [verdict] = store.verdicts()
    assert (verdict.human, verdict.confidence, verdict.reason) == ("no", 80, "too quick")
    beliefs = store.beliefs()
    assert [b.value for b in beliefs][:2] == [40, 41]
    assert all(b.room == room.id and b.participant == "P1" for b in beliefs)
    assert beliefs[0].seq >= 1
    participant = store.participant("P1")
    assert participant is not None
    assert (participant.platform_study, participant.platform_session) == ("S1", "X9")
    assert participant.outcome == "finished"
    kinds = {e["data"].get("type") for e in store.events(room.id) if e["kind"] == "engine"}
    assert {"user_message", "message_sent", "model_call_started"} <= kinds


async def test_each_message_is_stored_before_the_browser_gets_it(
    tmp_path: Path, autojump_clock: object
) -> None:
    server = make_server(write_spec(tmp_path, turns=1))
    unstored: list[dict[str, object]] = []

    def check(frame: dict[str, object]) -> None:
        if frame["type"] == "message":
            texts = [m.text for r in server.store.rooms() for m in server.store.messages(r.id)]
            if frame["text"] not in texts:
                unstored.append(frame)

    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        browser = Browser(server, "P1")
        browser.on_frame = check
        await browser.enter_chat(nursery)
        await browser.say({"type": "send", "text": "hi, how are you"})
        await browser.wait_phase("verdict")
        nursery.cancel_scope.cancel()
    assert browser.of("message")
    assert unstored == []


async def test_conditions_are_assigned_in_balance(tmp_path: Path, autojump_clock: object) -> None:
    server = make_server(write_spec(tmp_path, turns=1, models=("mock/chatty", "mock/echo")))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        browsers = [Browser(server, f"P{i}") for i in range(8)]
        for browser in browsers:
            await browser.open(nursery)
            await browser.say({"type": "consent"})
        for browser in browsers:
            await browser.wait_phase("chat")
        nursery.cancel_scope.cancel()
    counts = [0] * 4
    for room in server.store.rooms():
        assert room.cell is not None
        counts[room.cell] += 1
    assert counts == [2, 2, 2, 2]


async def test_nothing_sent_to_a_browser_tells_what_the_witness_is(
    tmp_path: Path, autojump_clock: object
) -> None:
    server = make_server(write_spec(tmp_path, turns=2))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        browser = await play_bot_game(server, nursery, "P1")
        nursery.cancel_scope.cancel()
    sent = "\n".join(browser.raw).lower()
    room = server.store.rooms()[0]
    for secret in (
        "mock",
        "chatty",
        PERSONA,
        "paper",
        "jones",
        "bot",
        "model",
        "persona",
        "condition",
        "witness",
        room.id.lower(),
        "room",
    ):
        assert secret.lower() not in sent, secret
    message_keys = {tuple(sorted(f)) for f in browser.of("message")}
    assert message_keys == {("chat", "from", "id", "text", "type")}


async def test_no_token_a_participant_is_given_can_spell_a_word(
    tmp_path: Path, autojump_clock: object
) -> None:
    # A base64 token spelled "bot" about once in 1,500 joins; the page keeps it where a
    # participant can read it, and the frames a participant gets must not say "bot".
    server = make_server(write_spec(tmp_path, turns=1))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        browsers = [Browser(server, f"P{i}") for i in range(12)]
        for browser in browsers:
            await browser.open(nursery)
            await browser.wait_phase("consent")
        nursery.cancel_scope.cancel()
    tokens = [browser.token for browser in browsers]
    assert len(set(tokens)) == len(tokens)
    for token in [*tokens, server.own_key]:
        assert token is not None and len(token) >= 27  # over 128 bits of 27 characters
        assert re.search(r"[aeiouy01]", token, re.IGNORECASE) is None, token
