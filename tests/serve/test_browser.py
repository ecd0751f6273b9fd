"""Whole games in headless Chromium against a real ``sdtt serve`` process on localhost:
two-party with the bot and a reconnect, three-party with two browsers, a three-bettor
market game, and the admin page. The study clock runs 20 times faster, so the bot's
human delays take moments."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from tests.serve.helpers import PERSONA, write_spec
from tests.serve.process import free_port, start_server, stop_server

HERE = Path(__file__).parent
NODE_MODULES = HERE.parent / "questionnaires" / "js" / "node_modules" / "playwright-core"


def _tools() -> tuple[str, str]:
    node = shutil.which("node")
    chromium = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if node is None or not NODE_MODULES.exists() or not Path(chromium).exists():
        pytest.fail(
            "the browser tests need node, Chromium and playwright-core. "
            "Run: bash tests/questionnaires/js/install.sh"
        )
    return node, chromium


@contextmanager
def serving(spec: Path, token: str) -> Iterator[str]:
    """``sdtt serve SPEC`` on a free localhost port, stopped afterwards."""
    port = free_port()
    process = start_server(spec, port, token)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_server(process)


def _play(base: str, study: str, scenario: str, token: str, *more: str) -> dict[str, object]:
    node, chromium = _tools()
    result = subprocess.run(
        [node, str(HERE / "serve_browser.cjs"), base, study, scenario, token, *more],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "CHROMIUM": chromium},
    )
    assert result.returncode == 0, result.stderr[-6000:]
    found: dict[str, object] = json.loads(result.stdout)
    return found


def _fast(spec: Path, *extra: str) -> Path:
    text = spec.read_text().replace("[chat]\n", "[chat]\nspeed = 20\n")
    spec.write_text(
        text.replace('title = "Chat study"', "\n".join(('title = "Chat study"', *extra)))
    )
    return spec


def test_two_party_game_with_a_reconnect_and_the_admin_page(tmp_path: Path) -> None:
    spec = _fast(write_spec(tmp_path, turns=2))
    with serving(spec, "admin-secret") as base:
        log = _play(base, "pilot", "two-party", "admin-secret")
    assert log["errors"] == [] and log["blocked"] == []
    assert log["consent"] == "You agree to chat for about five minutes."
    # The 300 study seconds of the chat's limit are 15 real ones at speed 20: the page's
    # clock counts those down, as the server's does.
    clock = re.fullmatch(r"Time left: 0:(\d\d)", str(log["clock"]))
    assert clock is not None and 5 <= int(clock[1]) <= 15, log["clock"]
    before = log["beforeReload"]
    assert isinstance(before, list) and log["afterReload"][: len(before)] == before  # type: ignore[index]
    assert log["code"] == "CODE-123"
    assert log["boldElements"] == 0, "chat text is shown as text, never as HTML"
    assert {"from": "you", "text": "hi! <b>bold</b> how are you"} in log["transcript"]  # type: ignore[operator]
    admin = str(log["admin"])
    assert "mock/chatty" in admin and "Finished games per condition" in admin
    assert log["adminDenied"] == 403
    sent = "\n".join(log["frames"]).lower()  # type: ignore[arg-type]
    for secret in ("mock", "chatty", PERSONA, "paper", "bot", "model", "persona", "room-"):
        assert secret not in sent, secret


def test_three_party_game_in_two_browsers(tmp_path: Path) -> None:
    spec = _fast(write_spec(tmp_path, turns=1), 'mode = "three-party"')
    with serving(spec, "admin-secret") as base:
        log = _play(base, "pilot", "three-party", "admin-secret")
    assert log["errors"] == [] and log["blocked"] == []
    assert (log["panes"], log["witnessPanes"]) == (2, 1)
    chats = [log["chat1"], log["chat2"]]
    person = next(c for c in chats if {"from": "them", "text": "hi, it's me, a real person"} in c)  # type: ignore[operator]
    assert log["witnessSaw"][0]["text"] in ("hello one", "hello two")  # type: ignore[index]
    bot = chats[1 - chats.index(person)]
    assert any(m["from"] == "them" for m in bot)  # type: ignore[union-attr]
    assert log["code"] == "CODE-123"


@pytest.mark.parametrize("processes", [1, 2])
def test_market_game_with_three_bettors(
    tmp_path: Path, processes: int, request: pytest.FixtureRequest
) -> None:
    # No lobby timeout, reveal timeout or lease a loaded machine could reach at speed 20.
    spec = _fast(write_spec(tmp_path, turns=3, timeout=100_000), 'mode = "market"')
    market = "[market]\nbettors = 3\nmax_trade = 100\ngames = 2\nreveal_seconds = 100000\n"
    spec.write_text(spec.read_text() + "\n" + market)
    if processes == 2:  # A1 and A2 on one process, A3 on another, sharing PostgreSQL
        url = request.getfixturevalue("fresh_database")
        spec.write_text(spec.read_text() + f'\n[storage]\nurl = "{url}"\nlease = 100000\n')
    with serving(spec, "admin-secret") as base, ExitStack() as more:
        others = [more.enter_context(serving(spec, "admin-secret"))] if processes == 2 else []
        log = _play(base, "pilot", "market", "admin-secret", *others)
    assert log["errors"] == [] and log["blocked"] == []
    assert log["startPoints"] == "1000"
    assert log["confirmText"] == f"Buy 3 computer for {51 + 52 + 53} points?"
    assert log["holdingBeforeConfirm"] == "nothing" and log["confirmShownAfter"] is False
    assert log["annPoints"] == str(1000 - 51 - 52 - 53)
    assert log["bobAsk"] == "48"  # one more human security costs the price plus one
    # The opening price and one trade, held to the right edge past the later answers.
    assert len(str(log["bobChart"]).split()) == 3
    assert str(log["bobChart"]).split()[-1].startswith("295,")
    assert log["bobAnswerMarks"] >= 2  # type: ignore[operator]
    assert all(5 <= x <= 295 for x in log["answerMarkX"])  # type: ignore[attr-defined]
    assert log["queuedShown"] is False and log["pendingCleared"] is True
    assert "costs" in str(log["cyRefused"]) and "you have 1000" in str(log["cyRefused"])
    assert log["cyConfirmShown"] is False
    assert log["revealVisible"] is True and log["nextGameShown"] is True
    assert log["revealAfterContinue"] is False
    # Two had pressed Continue, one was still reading: no game opened for anyone.
    assert log["lobbyWhileReading"] == [True, True, True]
    assert str(log["lobbyText"]).startswith("Waiting for the other bettors of your next game")
    assert log["nextGameCount"] == "1"  # a new game's trade box starts afresh
    assert log["reveal"] == (
        "The chat partner was a computer program. Your securities paid 300 points; "
        "you now have 1144 points."
    )
    assert log["code"] == "CODE-123"
    assert log["italic"] == 0, "chat text is shown as text, never as HTML"
    frames = [str(f) for f in log["frames"]]  # type: ignore[union-attr]
    before = "\n".join(f for f in frames if '"reveal"' not in f).lower()
    for secret in ("mock", "chatty", PERSONA, "bot", "model", "persona", "room-", '"human":'):
        assert secret not in before, secret
