"""One market game after another, on trio's virtual clock: a frame meant for a game that
has ended never reaches the next one, and the next game waits for its bettors to have
read the reveal (or for the spec's reveal_seconds)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio

from sdtt.serve.server import StudyServer
from tests.serve.helpers import Browser, make_server
from tests.serve.test_market import account, join_market, market_spec

pytestmark = pytest.mark.trio


def two_games(folder: Path, extra: str = "") -> StudyServer:
    return make_server(market_spec(folder, extra="games = 2\n" + extra))


def in_new_game(browser: Browser, first: str | None) -> bool:
    """Whether the page shows a market game other than ``first``."""
    return bool(browser.of("market")) and account(browser)["game"] not in (None, first)


async def finish_game(browsers: list[Browser]) -> None:
    """Every bettor is done buying: the game ends and each sees its reveal."""
    for browser in browsers:
        await browser.play({"type": "done_buying"})
    for browser in browsers:
        await browser.wait(lambda b=browser: bool(b.of("reveal")))
        await browser.wait_phase("lobby")


async def test_a_frame_meant_for_the_last_game_is_refused_in_the_next(
    tmp_path: Path, autojump_clock: object
) -> None:
    server = two_games(tmp_path)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        ann, bob, cy = browsers = await join_market(server, nursery, ["ann", "bob", "cy"])
        first = ann.game()
        assert first is not None and {b.game() for b in browsers} == {first}
        assert all(b.of("phase")[-1]["game"] == first for b in browsers)
        await finish_game(browsers)
        for browser in browsers:
            await browser.say({"type": "continue"})
        for browser in browsers:
            await browser.wait(lambda b=browser: b.phase() == "chat" and in_new_game(b, first))
        second = ann.game()
        assert second is not None and second != first
        before = {b.pid: len(b.frames) for b in browsers}

        # What ann's page sent as the first game ended arrives now, in the second game.
        late: list[dict[str, Any]] = [
            {"type": "trade", "kind": "human", "side": "buy", "count": 3},
            {"type": "quote", "kind": "human", "side": "buy", "count": 1},
            {"type": "send", "text": "a question for the first game"},
            {"type": "done_buying"},
        ]
        for frame in late:
            await ann.say({**frame, "game": first})
        await ann.say({"type": "trade", "kind": "human", "side": "buy", "count": 1})  # no game
        await ann.wait(lambda: len(ann.frames) >= before["ann"] + 5)
        await trio.sleep(30)  # (time for anything that did get through to show)
        refused = [f["message"] for f in ann.frames[before["ann"] :] if f["type"] == "refused"]
        assert refused == [
            *["That was meant for a game that has ended, so it had no effect."] * 4,
            "Please reload the page: that did not say which game it was for, so it had no effect.",
        ]
        assert [f["type"] for f in ann.frames[before["ann"] :]] == ["refused"] * 5
        for other in (bob, cy):  # no price moved, no question shown
            assert other.frames[before[other.pid] :] == []
        assert account(ann)["count"] == 0 and account(ann)["points"] == 1000
        assert not account(ann)["done"]

        # The page's frames for the game it shows are taken as ever.
        await ann.play({"type": "trade", "kind": "human", "side": "buy", "count": 1})
        await ann.wait(lambda: account(ann)["count"] == 1)
        nursery.cancel_scope.cancel()
    rooms = server.store.rooms()
    assert len(rooms) == 2
    second_room = rooms[1].id
    assert server.store.messages(second_room) == []
    kinds = [e["kind"] for e in server.store.events(second_room) if e["participant"] == "ann"]
    assert "done_buying" not in kinds and kinds.count("trade") == 1


async def test_a_target_answer_for_an_ended_game_is_refused(
    tmp_path: Path, autojump_clock: object
) -> None:
    spec = market_spec(tmp_path, extra="bettors = 1\n")
    spec.write_text(
        spec.read_text()
        .replace("human_witness_share = 0.0", "human_witness_share = 1.0")
        .replace("bettors = 3\n", "")
    )
    server = make_server(spec)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        ann, tia = await join_market(server, nursery, ["ann", "tia"])
        game = tia.game()
        assert game is not None and tia.of("phase")[-1]["market"] is False
        await ann.play({"type": "send", "text": "hello?"})
        await tia.wait(lambda: tia.texts("them") == ["hello?"])
        await tia.say({"type": "send", "text": "hi", "game": "0" * 12})
        await tia.wait(lambda: bool(tia.of("refused")))
        assert tia.of("refused")[0]["message"].startswith("That was meant for a game that")
        await tia.play({"type": "send", "text": "hi there"})
        await ann.wait(lambda: ann.texts("them") == ["hi there"])
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize("reveal", [None, 20.0])
async def test_the_next_game_waits_until_every_bettor_read_the_reveal(
    tmp_path: Path, autojump_clock: object, reveal: float | None
) -> None:
    extra = "" if reveal is None else f"reveal_seconds = {reveal}\n"
    server = two_games(tmp_path, extra)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        ann, bob, cy = browsers = await join_market(server, nursery, ["ann", "bob", "cy"])
        await finish_game(browsers)
        ended = trio.current_time()
        await ann.say({"type": "continue"})
        await trio.sleep(1)
        await bob.say({"type": "continue"})
        await trio.sleep(9)
        # cy is still reading: no game starts, for anyone.
        assert [b.phase() for b in browsers] == ["lobby"] * 3
        assert len(server.store.rooms()) == 1
        if reveal is None:
            await cy.say({"type": "continue"})
        for browser in browsers:
            await browser.wait_phase("chat")
        opened = trio.current_time() - ended
        assert opened == pytest.approx(10 if reveal is None else reveal, abs=0.1)
        assert {b.game() for b in browsers} != {browsers[0].of("phase")[1].get("game")}
        nursery.cancel_scope.cancel()
    read = [e["participant"] for e in server.store.events() if e["kind"] == "reveal_read"]
    assert read == (["ann", "bob", "cy"] if reveal is None else ["ann", "bob"])


async def test_an_idle_bettor_holds_the_next_game_up_for_a_minute_at_most(
    tmp_path: Path, autojump_clock: object
) -> None:
    server = two_games(tmp_path)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        browsers = await join_market(server, nursery, ["ann", "bob", "cy"])
        await finish_game(browsers)
        ended = trio.current_time()
        for browser in browsers[:2]:
            await browser.say({"type": "continue"})
        for browser in browsers:
            await browser.wait_phase("chat")
        assert trio.current_time() - ended == pytest.approx(60, abs=0.1)
        # The reveal stays on the idle bettor's page until they press Continue.
        assert browsers[2].of("reveal") and not browsers[2].of("refused")
        nursery.cancel_scope.cancel()
