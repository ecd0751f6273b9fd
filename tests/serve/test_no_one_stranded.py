"""No participant is stranded: one table of phase moves, dropouts detected, a time limit,
one server per SQLite study, the other-window refusal delivered, the code shown again,
bad text and floods refused on a kept connection, belief readings stored once."""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import trio

from sdtt.commands.serve import _check_port, _serving, hypercorn_config, logging_errors
from sdtt.errors import ConfigError
from sdtt.serve.phases import BadMove, move_participant, move_room
from sdtt.serve.spec import read_study
from sdtt.serve.state import NOTES
from sdtt.serve.store import Participant, Room
from tests.serve.helpers import Browser, make_server, run_server, write_spec

if TYPE_CHECKING:
    import trio.testing

    from sdtt.serve.pgstore import PostgresStore


async def _pair(server: object, nursery: trio.Nursery) -> tuple[Browser, Browser]:
    judge, witness = Browser(server, "J1"), Browser(server, "W1")  # type: ignore[arg-type]
    for browser in (judge, witness):
        await browser.open(nursery)
        await browser.say({"type": "consent"})
    await judge.wait_phase("chat")
    await witness.wait_phase("chat")
    return judge, witness


def test_a_move_the_table_does_not_list_raises(tmp_path: Path) -> None:
    store = make_server(write_spec(tmp_path)).store
    store.add_participant(Participant("P1", "tok", "consent", None, None, None, "t0"))
    with pytest.raises(BadMove, match="from 'consent' to 'chat'"):
        move_participant(store, "P1", "chat")  # never straight from consent to a chat
    move_participant(store, "P1", "lobby")
    assert store.participant("P1").state == "lobby"  # type: ignore[union-attr]
    store.add_room(Room("r1", "two-party", "bot", 0, "P1", None, "live", None, "t1", None))
    move_room(store, "r1", "verdict")
    with pytest.raises(BadMove, match="from 'verdict' to 'live'"):
        move_room(store, "r1", "live")
    with pytest.raises(BadMove, match="no participant"):
        move_participant(store, "nobody", "lobby")


@pytest.mark.trio
async def test_a_witness_who_leaves_ends_the_chat_with_a_note_and_the_code(
    tmp_path: Path, autojump_clock: object
) -> None:
    server = make_server(write_spec(tmp_path, share=1.0))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        judge, witness = await _pair(server, nursery)
        await witness.close()
        await trio.sleep(10)  # within the grace period: a reload would keep the room
        assert judge.phase() == "chat"
        await judge.wait_phase("done")
        nursery.cancel_scope.cancel()
    done = judge.of("phase")[-1]
    assert done["code"] == "CODE-123" and done["note"] == NOTES["partner_left"]
    [room] = server.store.rooms()
    assert (room.state, room.end_reason) == ("done", "partner_left")
    outcomes = {p.pid: p.outcome for p in server.store.participants()}
    assert outcomes == {"J1": "partner_left", "W1": "left"}
    assert [e["participant"] for e in server.store.events() if e["kind"] == "participant_left"] == [
        "W1"
    ]


@pytest.mark.trio
async def test_an_abandoned_bot_room_ends_and_a_lobby_dropout_is_let_go(
    tmp_path: Path, autojump_clock: object
) -> None:
    server = make_server(write_spec(tmp_path, share=1.0, timeout=600, on_timeout="end"))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        waiting = Browser(server, "GONE")
        await waiting.open(nursery)
        await waiting.say({"type": "consent"})
        await waiting.wait_phase("lobby")
        await waiting.close()
        await trio.sleep(30)
        # The one who left is not anyone's partner: the next two pair up.
        await _pair(server, nursery)
        nursery.cancel_scope.cancel()
    assert server.store.participant("GONE").outcome == "left"  # type: ignore[union-attr]
    [room] = server.store.rooms()
    assert {room.interrogator, room.witness_pid} == {"J1", "W1"}

    (tmp_path / "bots").mkdir()
    bots = make_server(write_spec(tmp_path / "bots"))
    async with trio.open_nursery() as nursery:
        await nursery.start(bots.run)
        alone = Browser(bots, "ALONE")
        await alone.enter_chat(nursery)
        await alone.close()
        await trio.sleep(30)
        nursery.cancel_scope.cancel()
    [room] = bots.store.rooms()
    assert (room.state, room.end_reason) == ("done", "partner_left")


@pytest.mark.trio
async def test_a_chat_ends_at_the_time_limit_shown_as_a_clock(
    tmp_path: Path, autojump_clock: object
) -> None:
    server = make_server(write_spec(tmp_path, share=1.0, turns=2))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        judge, witness = await _pair(server, nursery)
        assert judge.of("phase")[-1]["ends_in"] == 300
        await judge.say({"type": "send", "text": "hi"})
        started = trio.current_time()
        with trio.move_on_after(400):
            while judge.phase() == "chat":  # a witness who types and never answers
                await witness.say({"type": "typing"})
                await trio.sleep(2)
        assert judge.phase() == "verdict"
        assert trio.current_time() - started <= 302
        nursery.cancel_scope.cancel()
    assert [e for e in server.store.events() if e["kind"] == "time_limit"]


@pytest.mark.trio
async def test_a_second_window_is_told_and_the_first_stops(
    tmp_path: Path, autojump_clock: object
) -> None:
    server = make_server(write_spec(tmp_path))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        first = Browser(server, "P1")
        await first.open(nursery)
        await first.wait_phase("consent")
        second = Browser(server, "P1")
        await second.open(nursery, token=first.token)
        await first.gone.wait()
        await second.wait_phase("consent")
        nursery.cancel_scope.cancel()
    [refusal] = first.of("refused")
    assert refusal["fatal"] is True and "another window" in refusal["message"]


@pytest.mark.trio
async def test_reopening_the_link_after_finishing_shows_the_code_again(
    tmp_path: Path, autojump_clock: object
) -> None:
    from tests.serve.test_two_party import play_bot_game

    server = make_server(write_spec(tmp_path))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        await play_bot_game(server, nursery, "P1")
        again = Browser(server, "P1")
        await again.open(nursery)  # no token: the page forgot it at the end
        await again.wait_phase("done")
        await again.say({"type": "consent"})
        await again.say({"type": "send", "text": "let me in"})
        await again.wait(lambda: bool(again.of("refused")))
        nursery.cancel_scope.cancel()
    assert again.of("phase")[-1]["code"] == "CODE-123"
    assert len(server.store.rooms()) == 1


@pytest.mark.trio
async def test_nul_text_and_floods_are_refused_and_the_connection_stays(
    tmp_path: Path, autojump_clock: object
) -> None:
    server = make_server(write_spec(tmp_path, turns=5))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        browser = Browser(server, "P1")
        await browser.enter_chat(nursery)
        await browser.say({"type": "send", "text": "nul \x00 here"})
        await browser.wait(lambda: bool(browser.of("refused")))
        assert "U+0000" in browser.of("refused")[0]["message"]
        for number in range(500):
            await browser.say({"type": "send", "text": f"flood {number}"})
        await trio.sleep(5)
        await browser.say({"type": "send", "text": "still here?"})
        await browser.wait(lambda: "still here?" in browser.texts("you"))
        nursery.cancel_scope.cancel()
    assert not browser.gone.is_set()
    assert len(browser.of("refused")) >= 100


@pytest.mark.trio
async def test_belief_readings_are_stored_once_and_rate_limited(
    tmp_path: Path, autojump_clock: object
) -> None:
    server = make_server(write_spec(tmp_path, turns=5))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        browser = Browser(server, "P1")
        await browser.enter_chat(nursery)
        for _ in range(8):  # a page resending its one reading
            await browser.say({"type": "belief", "value": 30})
        await trio.sleep(10)
        for number in range(3000):  # a script
            await browser.say({"type": "belief", "value": number % 100})
        await trio.sleep(1)
        nursery.cancel_scope.cancel()
    values = [b.value for b in server.store.beliefs()]
    assert values[0] == 30 and values.count(30) == 1
    assert len(values) <= 1 + 5 + 2  # one, then the burst of five and little more


def test_one_server_per_sqlite_study_and_a_taken_port_is_one_line(tmp_path: Path) -> None:
    study = read_study(write_spec(tmp_path))
    # A second server on the study is refused, naming the first.
    held = _serving(study)
    with held, pytest.raises(ConfigError, match="already being served by process"), _serving(study):
        pass
    with _serving(study):  # released when the first stopped
        pass
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ConfigError) as caught:
            _check_port("127.0.0.1", port)
    assert f"127.0.0.1:{port}" in str(caught.value) and "\n" not in str(caught.value)
    config = hypercorn_config("127.0.0.1", port, 1.0, errorlog=tmp_path / "pilot.errors.log")
    assert config.errorlog == str(tmp_path / "pilot.errors.log")


def test_an_error_that_stops_the_server_goes_to_the_errors_log(tmp_path: Path) -> None:
    log = tmp_path / "pilot.errors.log"
    with pytest.raises(ConfigError), logging_errors(log):
        raise ConfigError("a bad spec")  # said on the terminal in one line, not logged
    assert not log.exists() or "a bad spec" not in log.read_text()
    with pytest.raises(RuntimeError), logging_errors(log):
        raise RuntimeError("the loop broke")
    text = log.read_text()
    assert "the server stopped on an error" in text and "Traceback" in text
    assert "RuntimeError: the loop broke" in text


@pytest.mark.trio
async def test_a_participant_back_on_another_process_has_not_left(
    fresh_database: str,
    pg_store: Callable[[], PostgresStore],
    tmp_path: Path,
    mock_clock: trio.testing.MockClock,
) -> None:
    from tests.serve.test_postgres import real_time_spec

    mock_clock.rate = 50  # real threads listen to the database: no jumps, just fast
    spec = real_time_spec(tmp_path, fresh_database, turns=1, share=1.0)
    spec.write_text(spec.read_text().replace("[chat]\n", "[chat]\ndropout_grace = 100\n"))
    async with trio.open_nursery() as nursery:
        servers = [await run_server(nursery, spec, pg_store()) for _ in range(2)]
        judge, witness = Browser(servers[0], "J1"), Browser(servers[1], "W1")
        for browser in (judge, witness):
            await browser.open(nursery)
            await browser.say({"type": "consent"})
            await browser.wait(
                lambda b=browser: "lobby" in [f["phase"] for f in b.of("phase")]  # type: ignore[misc]
            )
        await witness.wait_phase("chat")
        await judge.wait_phase("chat")

        # From here on the process they leave hears nothing from the other (its news
        # can come late on a loaded machine), and the clock jumps: only what the
        # database says counts.
        async def late(message: dict[str, Any]) -> None:
            pass

        servers[1].relay.take = late  # type: ignore[method-assign]
        mock_clock.rate, mock_clock.autojump_threshold = 0, 0
        await witness.close()
        back = Browser(servers[0], "W1")  # the reload reached the other process
        await back.open(nursery, token=witness.token)
        await back.wait_phase("chat")
        await trio.sleep(150)  # past the grace period of the process they left
        nursery.cancel_scope.cancel()
    store = servers[1].store
    [room] = store.rooms()
    assert room.state == "live" and judge.phase() == "chat"
    assert store.participant("W1").state == "chat"  # type: ignore[union-attr]
    assert not [e for e in store.events() if e["kind"] == "participant_left"]
