"""Turing Trade market games in ``sdtt serve``, on trio's virtual clock."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
import trio
from scipy.special import expit

from sdtt.beliefs.market import PAYOUT, LmsrMaker
from sdtt.beliefs.traces import read_traces
from sdtt.cli import main
from sdtt.serve.market_room import MarketRoom, carried_points
from sdtt.serve.matchmaker import MarketGame, Matchmaker
from sdtt.serve.server import StudyServer
from tests.serve.helpers import PERSONA, Browser, make_server, write_spec

pytestmark = pytest.mark.trio


def market_spec(folder: Path, *, turns: int = 2, extra: str = "") -> Path:
    spec = write_spec(folder, turns=turns)
    text = spec.read_text().replace('title = "Chat study"', 'title = "Chat study"\nmode = "market"')
    spec.write_text(text + "\n[market]\nbettors = 3\n" + extra)
    return spec


async def join_market(server: StudyServer, nursery: trio.Nursery, pids: list[str]) -> list[Browser]:
    browsers = [Browser(server, pid) for pid in pids]
    for browser in browsers:
        await browser.open(nursery)
        await browser.say({"type": "consent"})
    for browser in browsers:
        await browser.wait_phase("chat")
        if browser.of("phase")[-1]["role"] != "witness":  # a person target does not trade
            await browser.wait(lambda b=browser: bool(b.of("market")))
    return browsers


def account(browser: Browser) -> dict[str, Any]:
    return browser.of("market")[-1]


async def test_matchmaker_forms_market_games_of_the_set_size() -> None:
    lobby = Matchmaker(conditions=2, timeout=60, market_size=3)
    for index, pid in enumerate(["a", "b", "c", "d"]):
        lobby.arrive(pid, float(index))
    assert lobby.step(5) == [MarketGame(("a", "b", "c"), 0)]
    assert lobby.step(30) == []
    assert lobby.step(63) == [MarketGame(("d",), 1, timed_out=True)]
    people = Matchmaker(conditions=1, timeout=60, market_size=2, human_share=1.0)
    for index, pid in enumerate(["a", "b", "c"]):
        people.arrive(pid, float(index))
    assert people.step(5) == [MarketGame(("a", "b"), None, target="c")]
    people.arrive("d", 10)
    people.arrive("e", 11)
    assert people.step(20) == []  # a person target is due: wait for a third
    assert people.step(70) == [MarketGame(("d", "e"), 0)]


async def test_three_bettors_trade_then_reveal_and_payouts(
    tmp_path: Path, autojump_clock: object
) -> None:
    server = make_server(market_spec(tmp_path))
    stored_before_ack: list[bool] = []
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        ann, bob, cy = await join_market(server, nursery, ["ann", "bob", "cy"])

        def check(frame: dict[str, Any]) -> None:
            if frame["type"] == "market" and frame["prices"][1:]:
                trades = [e for e in server.store.events() if e["kind"] == "trade"]
                stored_before_ack.append(len(trades) >= len(frame["prices"]) - 1)

        ann.on_frame = check
        assert account(ann)["prices"] == [50.0] and account(ann)["points"] == 1000
        await ann.play({"type": "send", "text": "what did you have for breakfast?"})
        await bob.wait(lambda: bob.texts("them") != [])
        # Everyone sees the question (as another bettor's) and the public answer.
        assert bob.of("message")[0]["from"] == "other"
        assert ann.of("message")[0]["from"] == "you"

        await ann.play({"type": "trade", "kind": "computer", "side": "buy", "count": 5})
        await ann.wait(lambda: account(ann)["count"] == 5)
        assert account(ann)["kind"] == "computer"
        assert account(ann)["points"] == 1000 - sum(range(51, 56))  # 51 + 52 + ... + 55
        await bob.wait(lambda: bool(bob.of("price")))
        assert bob.of("price")[-1]["price"] == 45

        # Refusals: the other kind while holding one, too many points, malformed.
        await ann.play({"type": "trade", "kind": "human", "side": "buy", "count": 1})
        await ann.wait(lambda: len(ann.of("refused")) == 1)
        assert "sell your computer securities" in ann.of("refused")[-1]["message"]
        await cy.play({"type": "trade", "kind": "human", "side": "buy", "count": 20})
        await cy.wait(lambda: len(cy.of("refused")) == 1)
        assert "costs 1110 points; you have 1000" in cy.of("refused")[-1]["message"]
        await cy.play({"type": "trade", "kind": "human", "side": "sell", "count": 1})
        await cy.wait(lambda: len(cy.of("refused")) == 2)
        assert cy.of("refused")[-1]["message"] == (
            "Trade refused: you hold 0 human securities, so you cannot sell 1."
        )
        await cy.play({"type": "trade", "kind": "human", "side": "buy", "count": 10})
        await cy.wait(lambda: account(cy)["count"] == 10)
        await bob.play({"type": "trade", "kind": "human", "side": "buy", "count": 0})
        await bob.play({"type": "trade", "kind": "cat", "side": "buy", "count": 1})
        await bob.wait(lambda: len(bob.of("refused")) == 2)
        assert all(f["message"].startswith("Bad frame") for f in bob.of("refused"))

        for browser in (ann, bob, cy):
            await browser.play({"type": "done_buying"})
        for browser in (ann, bob, cy):
            await browser.wait_phase("done")
        nursery.cancel_scope.cancel()

    assert stored_before_ack and all(stored_before_ack)
    [reveal] = ann.of("reveal")
    assert reveal["human"] is False and reveal["paid"] == 500
    assert reveal["points"] == 1000 - sum(range(51, 56)) + 500
    cy_points = 1000 - sum(range(46, 56))  # bought at 46..55 after ann's trade moved it
    assert cy.of("reveal")[0] == {"type": "reveal", "human": False, "paid": 0, "points": cy_points}
    [room] = server.store.rooms()
    assert (room.mode, room.state, room.end_reason) == ("market", "done", "finished")
    trades = [e for e in server.store.events(room.id) if e["kind"] == "trade"]
    assert [(e["participant"], e["data"]["count"]) for e in trades] == [("ann", 5), ("cy", 10)]
    assert all(e["time"] for e in trades)

    # The browser never learns what the target is before the reveal.
    for browser in (ann, bob, cy):
        before = browser.raw[: next(i for i, r in enumerate(browser.raw) if '"reveal"' in r)]
        sent = "\n".join(before).lower()
        for secret in (
            *("mock", "chatty", PERSONA, "bot", "model", "persona"),
            *("witness", "condition", "room", "target", '"human":'),
        ):
            assert secret.lower() not in sent, secret


async def test_points_carry_over_and_price_exports_as_a_trace(
    tmp_path: Path,
    autojump_clock: object,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "1000")  # the printed command on one line
    spec = market_spec(
        tmp_path, turns=1, extra='games = 2\nmaker = "lmsr"\nliquidity = 10\nend_at_turns = true\n'
    )
    server = make_server(spec)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        browsers = await join_market(server, nursery, ["ann", "bob", "cy"])
        ann = browsers[0]
        await ann.play({"type": "trade", "kind": "human", "side": "buy", "count": 3})
        await ann.wait(lambda: account(ann)["count"] == 3)
        after_trade = account(ann)["points"]
        assert after_trade == pytest.approx(
            1000 - LmsrMaker(b=10).cost("human", "buy", 3), abs=0.01
        )
        await ann.play({"type": "send", "text": "are you a person?"})
        for browser in browsers:  # the game ends after X = 1 turn, then the lobby again
            await browser.wait(lambda b=browser: bool(b.of("reveal")))
            await browser.wait(lambda b=browser: b.frames[-1]["type"] == "market")
        assert account(ann)["points"] == pytest.approx(after_trade)  # lost the bet, kept the rest
        assert account(ann)["prices"] == [50.0]  # a new market
        for browser in browsers:
            await browser.play({"type": "done_buying"})
        for browser in browsers:
            await browser.wait_phase("done")
        nursery.cancel_scope.cancel()
    out = tmp_path / "export"
    capsys.readouterr()
    assert main(["serve", "export", str(spec), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    traces = read_traces(out / "beliefs.jsonl")
    with (out / "prices.csv").open() as file:
        rows = list(csv.DictReader(file))
    assert len({r["room"] for r in rows}) == 2
    assert all(r["ask"] == r["bid"] for r in rows)  # LMSR has no spread
    prices = [t for t in traces if t.points and t.points[0].source == "price"]
    assert len(prices) == 2 and all(t.item_kind == "room" and not t.target_human for t in prices)
    first = prices[0].points
    assert first[0].belief == 50 and first[1].belief is not None and first[1].belief > 50
    assert first[1].time_s is not None and first[1].message == 0
    # A market gives no verdicts: the scoring command the export printed (an empty
    # judgement file beside the prices) analyses its prices as beliefs. The second game
    # ended before its first answer and still counts.
    command = printed.split("score them: sdtt ")[1].split()
    assert main([*command, "--bootstrap", "0"]) == 0
    scored = capsys.readouterr().out
    assert "Beliefs: calibration of final beliefs" in scored
    calibration = scored.split("Beliefs: calibration")[1].split("Beliefs: pass rate")[0]
    [market_row] = [line for line in calibration.splitlines() if "market" in line]
    assert market_row.split("\u2502")[4].strip() == "2"  # beliefs: both games


async def test_a_trade_outside_a_market_is_refused(tmp_path: Path, autojump_clock: object) -> None:
    server = make_server(write_spec(tmp_path))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        browser = Browser(server, "P1")
        await browser.enter_chat(nursery)
        await browser.play({"type": "trade", "kind": "human", "side": "buy", "count": 1})
        await browser.wait(lambda: bool(browser.of("refused")))
        nursery.cancel_scope.cancel()
    assert browser.of("refused")[0]["message"] == "There is no market to trade in."


async def test_a_person_as_the_target(tmp_path: Path, autojump_clock: object) -> None:
    spec = market_spec(tmp_path)
    spec.write_text(
        spec.read_text()
        .replace("human_witness_share = 0.0", "human_witness_share = 1.0")
        .replace("bettors = 3", "bettors = 2")
    )
    server = make_server(spec)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        ann, bob, tia = await join_market(server, nursery, ["ann", "bob", "tia"])
        assert tia.of("phase")[-1]["role"] == "witness" and not tia.of("market")
        await ann.play({"type": "send", "text": "are you a person?"})
        await tia.wait(lambda: tia.texts("them") == ["are you a person?"])
        await tia.say({"type": "typing"})
        await tia.play({"type": "send", "text": "yes, very much so"})
        for bettor in (ann, bob):
            await bettor.wait(lambda b=bettor: b.texts("them") == ["yes, very much so"])
        # Bettors see the typing indicator by the one policy, not the target's keystrokes:
        # on a while after the question, then the answer (held for it), then off; the
        # bettor who did not ask gets the answer after the asker's head start.
        for bettor in (ann, bob):
            await bettor.wait(lambda b=bettor: len(b.of("typing")) == 2)
        shown = {
            bettor.pid: [
                (f["type"], f.get("on"))
                for f in bettor.frames
                if f["type"] in ("typing", "message")
            ]
            for bettor in (ann, bob)
        }
        assert shown["ann"] == [
            ("message", None),
            ("typing", True),
            ("message", None),
            ("typing", False),
        ]
        assert shown["bob"] == [
            ("message", None),
            ("typing", True),
            ("typing", False),
            ("message", None),
        ]
        await ann.play({"type": "trade", "kind": "human", "side": "buy", "count": 2})
        await ann.wait(lambda: account(ann)["count"] == 2)
        for bettor in (ann, bob):
            await bettor.play({"type": "done_buying"})
        for browser in (ann, bob, tia):
            await browser.wait_phase("done")
        nursery.cancel_scope.cancel()
    assert ann.of("reveal")[0] == {
        "type": "reveal",
        "human": True,
        "paid": 200,
        "points": 1000 - 51 - 52 + 200,
    }
    assert not tia.of("reveal")
    [room] = server.store.rooms()
    assert (room.witness, room.witness_pid, room.cell) == ("human", "tia", None)
    before = "\n".join(r for r in bob.raw if '"reveal"' not in r)
    assert '"human":' not in before


async def test_a_restart_ends_a_market_game_and_pays_back_its_trades(
    tmp_path: Path, autojump_clock: object
) -> None:
    spec = market_spec(tmp_path)
    server = make_server(spec)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        ann = (await join_market(server, nursery, ["ann", "bob", "cy"]))[0]
        await ann.play({"type": "trade", "kind": "human", "side": "buy", "count": 4})
        await ann.wait(lambda: account(ann)["count"] == 4)
        assert carried_points(server.store, "ann", 1000) == 1000 - 51 - 52 - 53 - 54
        nursery.cancel_scope.cancel()  # the server stops mid-game
    server.store.close()
    server = make_server(spec)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        nursery.cancel_scope.cancel()
    [room] = server.store.rooms()
    assert (room.state, room.end_reason) == ("done", "restart")
    for pid in ("ann", "bob", "cy"):
        participant = server.store.participant(pid)
        assert participant is not None and participant.outcome == "restart"
        assert carried_points(server.store, pid, 1000) == 1000


async def test_a_tiny_lmsr_liquidity_keeps_the_socket_and_the_store_in_step(
    tmp_path: Path, autojump_clock: object
) -> None:
    # b = 0.01 and 8 securities: exp(800) overflowed after the trade was applied in memory
    # but before it was stored, which closed the bettor's socket.
    spec = market_spec(tmp_path, extra='maker = "lmsr"\nliquidity = 0.01\n')
    server = make_server(spec)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        ann, bob, _ = await join_market(server, nursery, ["ann", "bob", "cy"])
        await ann.play({"type": "trade", "kind": "computer", "side": "buy", "count": 8})
        await ann.wait(lambda: account(ann)["count"] == 8)
        await ann.play({"type": "trade", "kind": "computer", "side": "sell", "count": 3})
        await ann.wait(lambda: account(ann)["count"] == 5)
        await bob.play({"type": "trade", "kind": "human", "side": "buy", "count": 2})
        await bob.wait(lambda: account(bob)["count"] == 2)
        [room] = server.store.rooms()
        live = server._rooms[room.id]
        assert isinstance(live, MarketRoom)
        market = live.market
        stored = [e["data"] for e in server.store.events(room.id) if e["kind"] == "trade"]
        assert [d["price_after"] for d in stored] == [t.price_after for t in market.trades]
        assert [d["price_after"] for d in stored] == account(bob)["prices"][1:]
        for browser in (ann, bob):
            start = live.spec.start_points
            assert carried_points(server.store, browser.pid, start) == pytest.approx(
                market.accounts[browser.pid].points
            )
        assert market.maker.price == pytest.approx(PAYOUT * expit(-300), rel=1e-12)
        assert not ann.gone.is_set() and not bob.gone.is_set()
        nursery.cancel_scope.cancel()


def person_target_spec(folder: Path, extra: str = "") -> Path:
    spec = market_spec(folder, extra=extra)
    spec.write_text(
        spec.read_text().replace("human_witness_share = 0.0", "human_witness_share = 1.0")
    )
    return spec


async def test_one_question_at_a_time_then_the_queues_round_robin(
    tmp_path: Path, autojump_clock: object
) -> None:
    server = make_server(person_target_spec(tmp_path))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        ann, bob, cy, tia = await join_market(server, nursery, ["ann", "bob", "cy", "tia"])
        assert tia.of("phase")[-1]["role"] == "witness"

        await ann.play({"type": "send", "text": "ann asks first?"})
        await tia.wait(lambda: tia.texts("them") == ["ann asks first?"])
        # While a1 is current, further questions wait, each seen only by its asker.
        for browser, text in (
            (bob, "bob asks first?"),
            (bob, "bob asks again?"),
            (cy, "cy asks first?"),
            (ann, "ann asks again?"),
        ):
            await trio.sleep(1)  # (the spec's min_interval between one's messages)
            await browser.play({"type": "send", "text": text})
            await browser.wait(lambda b=browser, t=text: t in account(b)["queued"])
        assert account(bob)["queued"] == ["bob asks first?", "bob asks again?"] and account(cy)[
            "queued"
        ] == ["cy asks first?"]
        await trio.sleep(30)
        queued_by = {
            "ann": ["ann asks again?"],
            "bob": ["bob asks first?", "bob asks again?"],
            "cy": ["cy asks first?"],
            "tia": [],
        }
        for browser in (ann, bob, cy, tia):
            assert browser.texts() == ["ann asks first?"], browser.pid
            others = [t for pid, texts in queued_by.items() if pid != browser.pid for t in texts]
            seen = [json.loads(r) for r in browser.raw]
            assert not any(t in str(f) for f in seen for t in others), browser.pid

        expected = ["ann asks first?"]
        # Answered, the next question is the next bettor's in order (ann, bob, cy),
        # skipping empty queues: bob's first, cy's, ann's second, bob's second.
        for nxt in ("bob asks first?", "cy asks first?", "ann asks again?", "bob asks again?"):
            await tia.play({"type": "send", "text": f"answer to {expected[-1]}"})
            expected += [f"answer to {expected[-1]}", nxt]
            await tia.wait(lambda n=nxt: tia.texts("them")[-1:] == [n])
            for browser in (ann, bob, cy):
                await browser.wait(lambda b=browser, e=list(expected): b.texts() == e)
        for browser in (ann, bob, cy):  # each saw their queue empty as theirs were asked
            await browser.wait(lambda b=browser: account(b)["queued"] == [])
        nursery.cancel_scope.cancel()
    [room] = server.store.rooms()
    stored = [m.text for m in server.store.messages(room.id)]
    assert stored == expected
    queued = [
        (e["participant"], e["data"]["text"])
        for e in server.store.events(room.id)
        if e["kind"] == "question_queued"
    ]
    assert queued == [
        ("bob", "bob asks first?"),
        ("bob", "bob asks again?"),
        ("cy", "cy asks first?"),
        ("ann", "ann asks again?"),
    ]


async def test_the_asker_sees_the_answer_five_seconds_before_the_others(
    tmp_path: Path, autojump_clock: object
) -> None:
    server = make_server(person_target_spec(tmp_path))
    seen: dict[tuple[str, str], float] = {}

    def timer(pid: str) -> Any:
        def check(frame: dict[str, Any]) -> None:
            if frame["type"] in ("message", "answer_pending"):
                key = (pid, frame.get("text", frame["type"]))
                seen.setdefault(key, trio.current_time())

        return check

    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        ann, bob, cy, tia = (Browser(server, pid) for pid in ("ann", "bob", "cy", "tia"))
        for browser in (ann, bob, cy, tia):
            browser.on_frame = timer(browser.pid)
            await browser.open(nursery)
            await browser.say({"type": "consent"})
        for browser in (ann, bob, cy, tia):
            await browser.wait_phase("chat")
        await bob.play({"type": "send", "text": "what is your job?"})
        await tia.wait(lambda: tia.texts("them") == ["what is your job?"])
        await tia.play({"type": "send", "text": "I fix bicycles"})
        await bob.wait(lambda: bob.texts("them") == ["I fix bicycles"])
        answered = seen[("bob", "I fix bicycles")]
        assert seen[("tia", "I fix bicycles")] <= answered  # the writer sees it at once
        # A page opened again meanwhile does not show the answer early either.
        await trio.sleep(1)
        await cy.close()
        await cy.open(nursery, token=cy.token)
        await cy.wait(lambda: bool(cy.of("history")[1:]))
        assert cy.of("history")[-1]["messages"][-1]["text"] == "what is your job?"
        for other in (ann, cy):
            await other.wait(lambda o=other: o.texts("them") == ["I fix bicycles"])
            assert seen[(other.pid, "answer_pending")] == answered
            assert seen[(other.pid, "I fix bicycles")] == pytest.approx(answered + 5)
        nursery.cancel_scope.cancel()


async def test_the_head_start_is_set_in_the_spec(tmp_path: Path, autojump_clock: object) -> None:
    server = make_server(person_target_spec(tmp_path, extra="advantage = 0\n"))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        ann, bob, cy, tia = await join_market(server, nursery, ["ann", "bob", "cy", "tia"])
        await ann.play({"type": "send", "text": "tea or coffee?"})
        await tia.wait(lambda: tia.texts("them") == ["tea or coffee?"])
        await tia.play({"type": "send", "text": "tea"})
        await ann.wait(lambda: ann.texts("them") == ["tea"])
        answered = trio.current_time()
        for other in (bob, cy):
            await other.wait(lambda o=other: o.texts("them") == ["tea"])
        assert trio.current_time() == answered
        assert not bob.of("answer_pending")
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize(("extra", "seconds"), [("", 120), ("seconds = 45\n", 45)])
async def test_a_game_lasts_two_minutes_on_a_clock_whatever_the_turns(
    tmp_path: Path, autojump_clock: object, extra: str, seconds: float
) -> None:
    server = make_server(market_spec(tmp_path, turns=1, extra=extra))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        ann, bob, cy = await join_market(server, nursery, ["ann", "bob", "cy"])
        started = trio.current_time()
        assert all(b.of("phase")[-1]["ends_in"] == seconds for b in (ann, bob, cy))
        await ann.play({"type": "send", "text": "where are you?"})
        await ann.wait(lambda: bool(ann.texts("them")))
        await trio.sleep(20)  # answered turn X = 1 and then quiet: the game goes on
        await ann.play({"type": "send", "text": "and before that?"})
        assert not ann.of("reveal")
        await ann.wait(lambda: bool(ann.of("reveal")))
        assert trio.current_time() - started == pytest.approx(seconds, abs=0.1)
        nursery.cancel_scope.cancel()
    [room] = server.store.rooms()
    assert room.end_reason == "finished"
    assert [e["data"] for e in server.store.events(room.id) if e["kind"] == "time_limit"] == [
        {"seconds": seconds}
    ]


async def test_a_trade_shows_its_cost_first_and_prices_record_bid_and_ask(
    tmp_path: Path, autojump_clock: object
) -> None:
    spec = market_spec(tmp_path)
    server = make_server(spec)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        ann, bob, cy = await join_market(server, nursery, ["ann", "bob", "cy"])
        assert account(ann)["ask"] == 51  # the paper's price: what one more costs
        buy = {"kind": "human", "side": "buy", "count": 4}
        await ann.play({"type": "quote", **buy})
        await ann.wait(lambda: bool(ann.of("quote")))
        [quote] = ann.of("quote")
        assert quote["cost"] == 51 + 52 + 53 + 54
        assert quote["text"] == "buy 4 human for 210 points"
        await bob.play({"type": "trade", "kind": "human", "side": "buy", "count": 2})
        await bob.wait(lambda: account(bob)["count"] == 2)
        # The price moved since the quote: confirming it is refused, not charged more.
        await ann.play({"type": "trade", **buy, "quoted": quote["cost"]})
        await ann.wait(lambda: bool(ann.of("refused")))
        assert (
            "the price moved: that now costs 218 points, not 210"
            in (ann.of("refused")[-1]["message"])
        )
        assert account(ann)["count"] == 0 and account(ann)["points"] == 1000
        await ann.play({"type": "quote", "kind": "human", "side": "sell", "count": 1})
        await ann.wait(lambda: len(ann.of("refused")) == 2)
        await bob.play({"type": "quote", "kind": "human", "side": "sell", "count": 2})
        await bob.wait(lambda: bool(bob.of("quote")))
        assert bob.of("quote")[-1]["text"] == "sell 2 human for 103 points"  # 52 + 51
        await bob.play(
            {"type": "trade", "kind": "human", "side": "sell", "count": 2, "quoted": -103}
        )
        await bob.wait(lambda: account(bob)["count"] == 0)
        await cy.play({"type": "trade", "kind": "computer", "side": "buy", "count": 3})
        await cy.wait(lambda: account(cy)["count"] == 3)
        await ann.wait(lambda: ann.of("price")[-1]["price"] == 47)
        assert ann.of("price")[-1]["ask"] == 48
        for browser in (ann, bob, cy):
            await browser.play({"type": "done_buying"})
        for browser in (ann, bob, cy):
            await browser.wait_phase("done")
        nursery.cancel_scope.cancel()
    [room] = server.store.rooms()
    trades = [e["data"] for e in server.store.events(room.id) if e["kind"] == "trade"]
    assert [(t["bid"], t["ask"]) for t in trades] == [(52, 53), (50, 51), (47, 48)]
    assert all(t["bid"] == t["price_after"] for t in trades)
    out = tmp_path / "export"
    assert main(["serve", "export", str(spec), "--out", str(out)]) == 0
    with (out / "prices.csv").open() as file:
        rows = list(csv.DictReader(file))
    assert [(r["event"], float(r["bid"]), float(r["ask"])) for r in rows] == [
        ("open", 50, 51),
        ("trade", 52, 53),
        ("trade", 50, 51),
        ("trade", 47, 48),
        ("end", 47, 48),
    ]
    assert {r["room"] for r in rows} == {room.id}
    [trace] = read_traces(out / "beliefs.jsonl")
    assert [(point.belief, point.ask) for point in trace.points] == [
        (float(row["bid"]), float(row["ask"])) for row in rows
    ]


async def test_a_person_target_earns_by_the_final_price(
    tmp_path: Path, autojump_clock: object
) -> None:
    spec = person_target_spec(tmp_path, extra="target_points = 50\n")
    spec.write_text(spec.read_text().replace("bettors = 3", "bettors = 2"))
    server = make_server(spec)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        ann, bob, tia = await join_market(server, nursery, ["ann", "bob", "tia"])
        await ann.play({"type": "trade", "kind": "human", "side": "buy", "count": 14})
        await ann.wait(lambda: account(ann)["count"] == 14)
        await bob.play({"type": "trade", "kind": "computer", "side": "buy", "count": 4})
        await bob.wait(lambda: account(bob)["count"] == 4)
        for bettor in (ann, bob):
            await bettor.play({"type": "done_buying"})
        await tia.wait_phase("done")
        nursery.cancel_scope.cancel()
    final = 50 + 14 - 4  # the Turing Trade price moves one point per security
    assert tia.of("reveal") == [{"type": "reveal", "target": True, "paid": 30.0, "price": final}]
    [reward] = [e for e in server.store.events() if e["kind"] == "target_reward"]
    assert reward["participant"] == "tia"
    assert reward["data"] == {"paid": 50 * final / 100, "price": final}
    assert "target" not in ann.of("reveal")[0]


async def test_no_target_reward_unless_the_spec_sets_one(
    tmp_path: Path, autojump_clock: object
) -> None:
    spec = person_target_spec(tmp_path)
    spec.write_text(spec.read_text().replace("bettors = 3", "bettors = 1"))
    server = make_server(spec)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        ann, tia = Browser(server, "ann"), Browser(server, "tia")
        for browser in (ann, tia):
            await browser.open(nursery)
            await browser.say({"type": "consent"})
        for browser in (ann, tia):
            await browser.wait_phase("chat")
        await ann.play({"type": "done_buying"})
        await tia.wait_phase("done")
        nursery.cancel_scope.cancel()
    assert not tia.of("reveal")
    assert not [e for e in server.store.events() if e["kind"] == "target_reward"]
