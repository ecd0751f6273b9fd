"""Lobby timeouts, human witnesses, reconnects, refusals and model failures."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from sdtt.errors import ServerError
from sdtt.models.mock import MockModelAPI
from sdtt.models.model import Model
from sdtt.models.retry import RetryPolicy
from sdtt.serve.spec import Condition
from tests.serve.helpers import Browser, make_server, write_spec

pytestmark = pytest.mark.trio


async def test_lobby_timeout_ends_with_the_code_and_is_recorded(
    tmp_path: Path, autojump_clock: object
) -> None:
    server = make_server(write_spec(tmp_path, share=1.0, timeout=90, on_timeout="end"))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        browser = Browser(server, "P1")
        await browser.open(nursery)
        await browser.say({"type": "consent"})
        await browser.wait_phase("lobby")
        start = trio.current_time()
        await browser.wait_phase("done")
        waited = trio.current_time() - start
        nursery.cancel_scope.cancel()
    assert waited == pytest.approx(90)
    done = browser.of("phase")[-1]
    assert done["code"] == "CODE-123"
    assert "No chat partner" in done["note"]
    assert [e["data"] for e in server.store.events() if e["kind"] == "lobby_timeout"] == [
        {"outcome": "end"}
    ]
    assert server.store.rooms() == []


async def test_human_witness_room_relays_messages_and_typing(
    tmp_path: Path, autojump_clock: object
) -> None:
    server = make_server(write_spec(tmp_path, share=1.0, turns=1))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        judge, witness = Browser(server, "J1"), Browser(server, "W1")
        for browser in (judge, witness):
            await browser.open(nursery)
            await browser.say({"type": "consent"})
        await judge.wait_phase("chat")
        await witness.wait_phase("chat")
        assert judge.of("phase")[-1]["role"] == "interrogator"
        assert witness.of("phase")[-1]["role"] == "witness"
        await judge.say({"type": "send", "text": "are you real?"})
        await witness.wait(lambda: witness.texts("them") == ["are you real?"])
        await witness.say({"type": "typing"})
        await judge.wait(lambda: any(f["on"] for f in judge.of("typing")))
        await witness.say({"type": "send", "text": "yes, very"})
        await judge.wait(lambda: len(judge.texts()) == 2)
        await trio.sleep(1)
        await judge.say({"type": "send", "text": "one more thing"})  # after the last turn
        await trio.sleep(1)
        await witness.say({"type": "send", "text": "and a PS"})  # the answer may go on
        await judge.wait_phase("verdict")
        await witness.wait_phase("done")
        await judge.say({"type": "verdict", "human": "yes", "confidence": 70, "reason": "typos"})
        await judge.wait_phase("done")
        nursery.cancel_scope.cancel()
    assert judge.texts() == ["are you real?", "yes, very", "and a PS"]
    assert judge.of("refused")[0]["message"].startswith("That was the last turn")
    [room] = server.store.rooms()
    assert room.witness == "human" and room.witness_pid == "W1"
    assert room.end_reason == "finished"


async def test_reconnect_shows_everything_again_and_the_chat_goes_on(
    tmp_path: Path, autojump_clock: object
) -> None:
    server = make_server(write_spec(tmp_path, turns=2))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        first = Browser(server, "P1")
        await first.enter_chat(nursery)
        await first.say({"type": "send", "text": "hey, what's up"})
        await first.wait(lambda: len(first.texts()) >= 2)
        await first.close()
        await trio.sleep(15)  # back within the dropout grace period (20 s): a reload
        again = Browser(server, "P1")
        await again.open(nursery, token=first.token)
        await again.wait(lambda: bool(again.of("history")))
        assert again.texts()[: len(first.texts())] == first.texts()
        await again.say({"type": "send", "text": "still there?"})
        await again.wait_phase("verdict")
        nursery.cancel_scope.cancel()
    assert "still there?" in again.texts("you")
    assert [e["kind"] for e in server.store.events() if e["participant"] == "P1"][
        -1
    ] == "reconnected"


async def test_bad_input_is_refused_and_other_rooms_carry_on(
    tmp_path: Path, autojump_clock: object
) -> None:
    server = make_server(write_spec(tmp_path, turns=1))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        good, rude = Browser(server, "GOOD"), Browser(server, "RUDE")
        for browser in (good, rude):
            await browser.enter_chat(nursery)
        for frame in (
            "not json",
            b"\x00\x01",
            "[1, 2]",
            {"type": "shout"},
            {"type": "send", "text": "x" * 201},
            {"type": "send", "text": "   "},
            {"type": "belief", "value": 101},
            {"type": "verdict", "human": "yes", "confidence": 50, "reason": ""},
            {"type": "send", "text": "ok", "extra": 1},
        ):
            await rude.say(frame)
        await rude.say({"type": "send", "text": "first"})
        await rude.say({"type": "send", "text": "second, too soon"})
        await rude.wait(lambda: len(rude.of("refused")) == 10)
        await good.say({"type": "send", "text": "hello"})
        await good.wait_phase("verdict")
        nursery.cancel_scope.cancel()
    messages = [f["message"] for f in rude.of("refused")]
    assert messages[0] == "That frame is not valid JSON."
    assert messages[1] == "Frames must be JSON text."
    assert "too long (at most 200 characters)" in messages[4]
    assert "verdict can only be given" in messages[7]
    assert "too quickly" in messages[9]
    assert not any(f.get("fatal") for f in rude.of("refused"))
    texts = [m.text for r in server.store.rooms() for m in server.store.messages(r.id)]
    assert "second, too soon" not in texts and "first" in texts


async def test_participant_ids_are_checked_and_used_once(
    tmp_path: Path, autojump_clock: object
) -> None:
    server = make_server(write_spec(tmp_path, turns=1))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        first = Browser(server, "P1")
        await first.open(nursery)
        await first.wait_phase("consent")
        thief = Browser(server, "P1")
        await thief.open(nursery, token="guessed-token")
        await thief.gone.wait()
        await first.say({"type": "consent"})
        await first.wait_phase("chat")
        await first.say({"type": "send", "text": "hi"})
        await first.wait_phase("verdict")
        await first.say({"type": "verdict", "human": "no", "confidence": 60, "reason": ""})
        await first.wait_phase("done")
        # Back after finishing, the link shows the done page again (its own test is in
        # test_no_one_stranded.py): never a second chat.
        again = Browser(server, "P1")
        await again.open(nursery)
        await again.wait_phase("done")
        bad = Browser(server, "<script>")
        await bad.open(nursery)
        await bad.gone.wait()
        nursery.cancel_scope.cancel()
    assert thief.of("refused")[0]["message"].startswith("This participant id is already in use")
    assert again.of("refused") == [] and again.phase() == "done"
    assert bad.of("refused")[0]["message"] == "This study link has no valid participant id."
    for browser in (thief, bad):
        assert browser.of("refused")[0]["fatal"] is True
        assert browser.of("joined") == []


async def test_a_failing_model_ends_the_room_and_the_participant_is_paid(
    tmp_path: Path, autojump_clock: object
) -> None:
    def failing(condition: Condition, seed: int) -> Model:
        api = MockModelAPI(lambda prompt, config: ServerError("down"), name="mock/down")
        return Model(api, retry=RetryPolicy(max_attempts=2, jitter=0), seed=seed)

    server = make_server(write_spec(tmp_path, turns=3), open_model=failing)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        browser = Browser(server, "P1")
        await browser.enter_chat(nursery)
        await browser.say({"type": "send", "text": "hello?"})
        await trio.sleep(60)
        await browser.say({"type": "send", "text": "anyone there?"})
        await browser.wait_phase("done")
        nursery.cancel_scope.cancel()
    done = browser.of("phase")[-1]
    assert done["code"] == "CODE-123"
    assert "could not continue" in done["note"]
    [room] = server.store.rooms()
    assert (room.state, room.end_reason) == ("done", "model_error")
    assert server.store.participant("P1").outcome == "partner_error"  # type: ignore[union-attr]


async def test_a_crash_in_one_room_ends_only_that_room(
    tmp_path: Path, autojump_clock: object
) -> None:
    def crash_first(condition: Condition, seed: int) -> Model:
        if condition.index == 0:
            api = MockModelAPI(lambda prompt, config: RuntimeError("bug"), name="mock/bug")
            return Model(api, retry=RetryPolicy(max_attempts=1, jitter=0), seed=seed)
        return Model(MockModelAPI(["Response: hi there"], name="mock/ok"), seed=seed)

    server = make_server(write_spec(tmp_path, turns=1), open_model=crash_first)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        unlucky, lucky = Browser(server, "P1"), Browser(server, "P2")
        for browser in (unlucky, lucky):
            await browser.enter_chat(nursery)
        await unlucky.say({"type": "send", "text": "hello"})
        await unlucky.wait_phase("done")
        await lucky.say({"type": "send", "text": "hello"})
        await lucky.wait_phase("verdict")
        nursery.cancel_scope.cancel()
    assert "went wrong on our side" in unlucky.of("phase")[-1]["note"]
    reasons = {r.interrogator: r.end_reason for r in server.store.rooms()}
    assert reasons == {"P1": "server_error", "P2": None}
