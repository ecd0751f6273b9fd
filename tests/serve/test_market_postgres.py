"""Market games on PostgreSQL with two server processes: bettors connected to either
trade in one game, see the same prices and answers, and a game whose process was lost is
ended and paid back, never charged twice."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from sdtt.beliefs.market import TradeRefused
from sdtt.serve.market_room import MarketRoom, carried_points
from sdtt.serve.pgstore import PostgresStore
from sdtt.serve.server import StudyServer
from sdtt.serve.state import NOTES
from tests.serve.helpers import Browser, run_server
from tests.serve.test_market import account, market_spec

pytestmark = pytest.mark.trio


def pg_market_spec(folder: Path, url: str, extra: str = "", lease: float = 100_000) -> Path:
    """A market study on ``url``; no lobby timeout or game clock for a loaded machine to
    reach while a test waits for the other process (the lease as given)."""
    spec = market_spec(folder, extra=extra)
    text = spec.read_text().replace("timeout = 60", "timeout = 100000")
    spec.write_text(text + f'seconds = 0\n\n[storage]\nurl = "{url}"\nlease = {lease}\n')
    return spec


async def join(browsers: list[Browser], nursery: trio.Nursery) -> None:
    for browser in browsers:
        await browser.open(nursery)
        await browser.say({"type": "consent"})
    for browser in browsers:
        await browser.wait(lambda b=browser: b.phase() == "chat" and bool(b.of("market")))


def runner(servers: list[StudyServer]) -> StudyServer:
    """The process that runs the (one) game."""
    [server] = [s for s in servers if s._rooms]
    return server


async def test_bettors_on_two_processes_trade_in_one_game(
    fresh_database: str,
    pg_store: Callable[[], PostgresStore],
    tmp_path: Path,
    mock_clock: trio.testing.MockClock,
) -> None:
    mock_clock.rate = 50  # real threads listen to the database: no jumps, just fast
    spec = pg_market_spec(tmp_path, fresh_database)
    async with trio.open_nursery() as nursery:
        servers = [await run_server(nursery, spec, pg_store()) for _ in range(2)]
        ann, bob, cy = browsers = [
            Browser(servers[0], "ann"),
            Browser(servers[0], "bob"),
            Browser(servers[1], "cy"),
        ]
        await join(browsers, nursery)
        host = runner(servers)
        remote = [b for b in browsers if b.server is not host]
        assert remote  # at least one bettor plays from the other process
        assert {b.game() for b in browsers} == {ann.game()} and ann.game() is not None

        # A question from each process reaches everyone, and so does the answer.
        await cy.play({"type": "send", "text": "where do you live?"})
        for browser in browsers:
            await browser.wait(lambda b=browser: bool(b.texts("them")))
            assert browser.texts()[0] == "where do you live?"
        assert [m["from"] for m in cy.of("message")][:1] == ["you"]
        assert [m["from"] for m in ann.of("message")][:1] == ["other"]

        # Trades from both processes, one book: each sees every price in the same order.
        await cy.play({"type": "quote", "kind": "human", "side": "buy", "count": 3})
        await cy.wait(lambda: bool(cy.of("quote")))
        assert cy.of("quote")[0]["cost"] == 51 + 52 + 53
        await cy.play({"type": "trade", "kind": "human", "side": "buy", "count": 3, "quoted": 156})
        await cy.wait(lambda: account(cy)["count"] == 3)
        await ann.play({"type": "trade", "kind": "computer", "side": "buy", "count": 5})
        await ann.wait(lambda: account(ann)["count"] == 5)
        await bob.play({"type": "trade", "kind": "human", "side": "buy", "count": 2})
        await bob.wait(lambda: account(bob)["count"] == 2)
        await cy.play({"type": "trade", "kind": "computer", "side": "sell", "count": 1})
        await cy.wait(lambda: bool(cy.of("refused")))
        assert cy.of("refused")[0]["message"] == (
            "Trade refused: you hold 0 computer securities, so you cannot sell 1."
        )
        for browser in browsers:
            await browser.wait(lambda b=browser: seen_prices(b)[-1:] == [50.0])
        assert {tuple(seen_prices(b)) for b in browsers} == {(50.0, 53.0, 48.0, 50.0)}

        # A page opened again on the other process is shown the game as it is.
        await cy.close()
        again = Browser(servers[0], "cy")
        await again.open(nursery, token=cy.token)
        await again.wait(lambda: bool(again.of("market")) and bool(again.texts("them")))
        assert account(again)["prices"] == [50.0, 53.0, 48.0, 50.0]
        assert (account(again)["count"], account(again)["points"]) == (3, 1000 - 156)
        assert again.texts()[: len(cy.texts())] == cy.texts()  # (and what came since)

        for browser in (ann, bob, again):
            await browser.play({"type": "done_buying"})
        for browser in (ann, bob, again):
            await browser.wait_phase("done")
        nursery.cancel_scope.cancel()

    store = servers[1].store
    [room] = store.rooms()
    assert (room.mode, room.state, room.end_reason) == ("market", "done", "finished")
    trades = [e for e in store.events(room.id) if e["kind"] == "trade"]
    assert [(e["participant"], e["data"]["price_after"]) for e in trades] == [
        ("cy", 53.0),
        ("ann", 48.0),
        ("bob", 50.0),
    ]
    # The bot was the target: computer securities paid 100 each, human ones nothing.
    assert ann.of("reveal")[0]["paid"] == 500 and again.of("reveal")[0]["paid"] == 0
    computer = sum(range(48, 53))  # ann bought computer at 48..52 (price 53 to 48)
    assert carried_points(store, "ann", 1000) == 1000 - computer + 500
    assert carried_points(store, "cy", 1000) == 1000 - 156


def seen_prices(browser: Browser) -> list[float]:
    """The price history the page shows (its last market frame, then the price frames)."""
    prices: list[float] = []
    for frame in browser.frames:
        if frame["type"] == "market":
            prices = list(frame["prices"])
        elif frame["type"] == "price":
            prices.append(frame["price"])
    return prices


async def test_a_lost_process_game_is_paid_back_and_never_charged_after(
    fresh_database: str,
    pg_store: Callable[[], PostgresStore],
    tmp_path: Path,
    autojump_clock: object,
) -> None:
    lease = 6.0
    spec = pg_market_spec(tmp_path, fresh_database, extra="games = 2\n", lease=lease)
    async with trio.open_nursery() as nursery:
        a = await run_server(nursery, spec, pg_store())
        browsers = [Browser(a, pid) for pid in ("ann", "bob", "cy")]
        await join(browsers, nursery)
        ann = browsers[0]
        [room_id] = a._rooms
        live = a._rooms[room_id]
        assert isinstance(live, MarketRoom) and a.lease is not None
        await ann.play({"type": "trade", "kind": "human", "side": "buy", "count": 4})
        await ann.wait(lambda: account(ann)["count"] == 4)

        # A stalls (beats no more, and B's word is kept from it): B takes it for dead,
        # ends its game and pays the trades back.
        take = a.relay.take

        async def without_states(message: dict[str, Any]) -> None:
            if "state" not in message:
                await take(message)

        a.relay.take = without_states  # type: ignore[method-assign]
        check = a.lease.check
        a.lease.check = lambda *args: None  # type: ignore[method-assign]
        b = await run_server(nursery, spec, pg_store())
        await trio.sleep(2 * lease)
        room = b.store.room(room_id)
        assert room is not None and (room.state, room.end_reason) == ("done", "server_lost")
        assert carried_points(b.store, "ann", 1000) == 1000

        # Still running the game in memory, A takes one more trade: the database no
        # longer has the game live, so it is refused and nothing is charged.
        with pytest.raises(TradeRefused, match="the game has ended"):
            live.trade("bob", "human", "buy", 2)
        assert carried_points(b.store, "bob", 1000) == 1000
        a.lease.check = check  # type: ignore[method-assign]
        for browser in browsers:
            await browser.wait_phase("done")
        nursery.cancel_scope.cancel()
    trades = [e for e in b.store.events(room_id) if e["kind"] == "trade"]
    assert [(e["participant"], e["data"]["count"]) for e in trades] == [("ann", 4)]
    refunds = [e for e in b.store.events(room_id) if e["kind"] == "payout"]
    assert [(e["participant"], e["data"]) for e in refunds] == [
        ("ann", {"paid": 51 + 52 + 53 + 54, "refund": True})
    ]
    assert {browser.of("phase")[-1]["note"] for browser in browsers} == {NOTES["server_lost"]}
