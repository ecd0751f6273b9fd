"""The moderation endpoint of ``sdtt serve`` against a local fake of an OpenAI-compatible
``/moderations`` API: the client's answers and failures, and in a running study a flagged
message refused like a blocked word, an endpoint outage that delivers and records, the
bot's messages checked as a person's are (the same wait in either kind of room), and a
key that never leaves the request header."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import trio

from sdtt.cli import main
from sdtt.engine.virtual_clock import VirtualClock
from sdtt.serve.handling import MODERATED
from sdtt.serve.moderation import EndpointClient, Screener, Screening, parse_result
from sdtt.serve.server import StudyServer
from sdtt.serve.wsclient import WebSocketClient
from tests.fakes.http_fake import ScriptedReply
from tests.fakes.moderation_fake import FakeModerationServer
from tests.serve.helpers import Browser, make_server, write_spec
from tests.serve.process import free_port, start_server, stop_server

pytestmark = pytest.mark.trio

KEY = "sk-mod-5ecret-key-0123456789"
KEY_ENV = "SDTT_TEST_MODERATION_KEY"


@pytest.fixture
def virtual_clock() -> VirtualClock:
    """The clock of simulations: waiting is free, the endpoint's calls take real time."""
    return VirtualClock()


def _spec(
    tmp_path: Path, url: str, *, share: float = 0.0, turns: int = 2, limit: float = 2
) -> Path:
    spec = write_spec(tmp_path, share=share, turns=turns)
    spec.write_text(
        spec.read_text()
        + f'\n[moderation]\nbase_url = "{url}"\napi_key_env = "{KEY_ENV}"\ntime_limit = {limit}\n'
    )
    return spec


def _kinds(server: StudyServer, kind: str) -> list[dict[str, Any]]:
    return [e for e in server.store.events() if e["kind"] == kind]


# ---------------------------------------------------------------- the client


async def test_the_client_reads_flagged_and_clean_answers_and_sends_the_key() -> None:
    with FakeModerationServer({"idiot": "harassment"}, expected_key=KEY) as fake:
        client = EndpointClient(fake.base_url, "omni-moderation-latest", KEY)
        flagged = await client.classify("you are an idiot")
        clean = await client.classify("what a lovely day")
        await client.aclose()
    assert flagged == Screening(flagged=True, categories=("harassment",))
    assert clean == Screening(flagged=False)
    request = fake.requests[0]
    assert request.method == "POST" and request.path == "/v1/moderations"
    assert request.json() == {"model": "omni-moderation-latest", "input": "you are an idiot"}
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert KEY not in repr(client)


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (ScriptedReply(status=500, body={"error": {"message": "boom"}}), "HTTP 500"),
        (ScriptedReply(status=200, body="<html>not json</html>"), "not a moderation answer"),
        (ScriptedReply(status=200, body={"results": []}), "not a moderation answer"),
        (
            ScriptedReply(status=200, body={"results": [{"flagged": "yes"}]}),
            "not a moderation answer",
        ),
    ],
)
async def test_a_failing_endpoint_is_an_error_not_a_verdict(
    reply: ScriptedReply, error: str
) -> None:
    with FakeModerationServer() as fake:
        fake.enqueue(reply)
        client = EndpointClient(fake.base_url, "m", "")
        result = await client.classify("hello")
        await client.aclose()
    assert result == Screening(error=error)
    assert fake.requests[0].headers["authorization"] == "Bearer not-needed"  # no key: none


async def test_a_rejected_key_echoed_by_the_server_is_not_passed_on() -> None:
    with FakeModerationServer(expected_key="another-key") as fake:
        client = EndpointClient(fake.base_url, "m", KEY)
        result = await client.classify("hello")
        await client.aclose()
    assert result == Screening(error="HTTP 401")
    assert KEY in fake.requests[0].headers["authorization"]  # (the server did see it)


async def test_an_endpoint_slower_than_the_limit_is_given_up_on_time() -> None:
    records: list[tuple[str, dict[str, Any]]] = []
    with FakeModerationServer() as fake:
        fake.enqueue(ScriptedReply(delay=10.0, body={"results": []}))
        client = EndpointClient(fake.base_url, "m", "")
        screener = Screener(client, 0.3, lambda kind, data, **_: records.append((kind, data)))
        start = trio.current_time()
        result = await screener.screen("hello", sender="interrogator", room="r1")
        waited = trio.current_time() - start
        await screener.aclose()
    assert result.error == "no answer within 0.3 s" and not result.flagged
    assert 0.3 <= waited < 2.0
    assert records == [
        ("moderation_unavailable", {"sender": "interrogator", "error": "no answer within 0.3 s"})
    ]


async def test_parse_result_names_only_the_flagged_categories() -> None:
    body = {"results": [{"flagged": True, "categories": {"hate": False, "violence": True}}]}
    assert parse_result(json.dumps(body)) == Screening(flagged=True, categories=("violence",))


# ---------------------------------------------------------------- in a running study


async def _bot_room(
    server: StudyServer, nursery: trio.Nursery, *texts: str
) -> tuple[Browser, list[str]]:
    """A participant in a bot room who sends ``texts`` (each answered by a refusal or
    shown as sent); the refusals."""
    await nursery.start(server.run)
    browser = Browser(server, "P1")
    await browser.enter_chat(nursery)
    refusals: list[str] = []
    for text in texts:
        before = len(browser.of("refused"))
        await browser.say({"type": "send", "text": text})
        await browser.wait(
            lambda t=text, n=before: (
                t in browser.texts("you")  # type: ignore[misc]
                or len(browser.of("refused")) > n
            )
        )
        refusals += [f["message"] for f in browser.of("refused")[before:]]
        await trio.sleep(1)
    return browser, refusals


async def test_a_flagged_message_is_refused_and_recorded_and_the_bot_is_checked_too(
    tmp_path: Path, virtual_clock: VirtualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeModerationServer({"idiot": "harassment"}, expected_key=KEY) as fake:
        server = make_server(_spec(tmp_path, fake.base_url))
        async with trio.open_nursery() as nursery:
            browser, refusals = await _bot_room(
                server, nursery, "you are an idiot", "hello there, how are you"
            )
            fake.flag_all = True  # from now on the bot's answers are flagged
            await browser.wait(lambda: len(browser.texts("them")) >= 1)
            nursery.cancel_scope.cancel()
    assert refusals == [MODERATED]
    assert browser.texts("you") == ["hello there, how are you"]
    stored = [m.text for r in server.store.rooms() for m in server.store.messages(r.id)]
    assert "you are an idiot" not in stored
    [moderated] = _kinds(server, "message_moderated")
    assert moderated["data"] == {"categories": ["harassment"]}
    assert moderated["participant"] == "P1"
    # The bot's messages went to the endpoint as well; flagged, they are shown anyway
    # (the session sent them) and recorded.
    bot_texts = browser.texts("them")
    assert set(bot_texts) <= set(fake.inputs())
    flagged = _kinds(server, "bot_message_flagged")
    assert flagged and flagged[0]["data"] == {"chat": 1, "categories": ["harassment"]}
    assert not _kinds(server, "moderation_unavailable")


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (ScriptedReply(status=500, body={"error": {"message": "down"}}), "HTTP 500"),
        (ScriptedReply(delay=5.0, body={"results": []}), "no answer within 0.5 s"),
        (ScriptedReply(body="{{{ garbage"), "not a moderation answer"),
    ],
)
async def test_an_endpoint_outage_delivers_the_message_and_records_it(
    tmp_path: Path,
    virtual_clock: VirtualClock,
    monkeypatch: pytest.MonkeyPatch,
    reply: ScriptedReply,
    error: str,
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeModerationServer({"idiot": "harassment"}) as fake:
        fake.enqueue(reply)
        server = make_server(_spec(tmp_path, fake.base_url, limit=0.5))
        async with trio.open_nursery() as nursery:
            browser, refusals = await _bot_room(server, nursery, "is anyone there?")
            await browser.wait(lambda: len(browser.texts("them")) >= 1)  # the chat goes on
            nursery.cancel_scope.cancel()
    assert refusals == []
    assert browser.texts("you") == ["is anyone there?"]
    [outage] = _kinds(server, "moderation_unavailable")[:1]
    assert outage["data"] == {"sender": "interrogator", "error": error}
    assert outage["participant"] == "P1"


async def test_a_person_witness_flagged_is_refused_like_the_interrogator(
    tmp_path: Path, virtual_clock: VirtualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeModerationServer({"idiot": "harassment"}) as fake:
        server = make_server(_spec(tmp_path, fake.base_url, share=1.0))
        async with trio.open_nursery() as nursery:
            await nursery.start(server.run)
            one, two = Browser(server, "P1"), Browser(server, "P2")
            for browser in (one, two):
                await browser.open(nursery)
                await browser.say({"type": "consent"})
            for browser in (one, two):
                await browser.wait_phase("chat")
            roles = {b: b.of("phase")[-1]["role"] for b in (one, two)}
            asker = one if roles[one] == "interrogator" else two
            witness = two if asker is one else one
            await asker.say({"type": "send", "text": "hi, who are you?"})
            await witness.wait(lambda: bool(witness.texts("them")))
            await witness.say({"type": "send", "text": "none of your business idiot"})
            await witness.wait(lambda: bool(witness.of("refused")))
            await trio.sleep(1)
            await witness.say({"type": "send", "text": "sorry, i am sam"})
            await asker.wait(lambda: bool(asker.texts("them")))
            nursery.cancel_scope.cancel()
    assert witness.of("refused")[0]["message"] == MODERATED
    assert asker.texts("them") == ["sorry, i am sam"]
    [moderated] = _kinds(server, "message_moderated")
    assert moderated["participant"] == witness.pid


async def _witness_delays(tmp_path: Path, share: float, latency: float) -> list[float]:
    """Seconds between a witness's message being ready (a person pressing Send, the
    bot's session sending it) and its being shown, in a room with a bot or a person."""
    with FakeModerationServer(latency=latency) as fake:
        server = make_server(_spec(tmp_path, fake.base_url, share=share, turns=2))
        delays: list[float] = []
        async with trio.open_nursery() as nursery:
            await nursery.start(server.run)
            people = [Browser(server, f"P{i}") for i in (1, 2)][: 2 if share else 1]
            for browser in people:
                await browser.open(nursery)
                await browser.say({"type": "consent"})
            for browser in people:
                await browser.wait_phase("chat")
            asker = next(b for b in people if b.of("phase")[-1]["role"] == "interrogator")
            witness = next((b for b in people if b is not asker), None)
            for turn in range(2):
                if witness is None:  # the bot: its answers come as they come
                    await asker.wait(lambda t=turn: len(asker.texts("them")) >= t)  # type: ignore[misc]
                await trio.sleep(4)
                await asker.say({"type": "send", "text": f"question number {turn}"})
                await asker.wait(lambda t=turn: len(asker.texts("you")) > t)  # type: ignore[misc]
                if witness is not None:
                    await trio.sleep(4)
                    ready = server.records.wall()
                    await witness.say({"type": "send", "text": f"answer number {turn}"})
                    await asker.wait(lambda t=turn: len(asker.texts("them")) > t)  # type: ignore[misc]
                    [room] = server.store.rooms()
                    shown = server.store.messages(room.id)[-1].time
                    delays.append((_wall(shown) - ready).total_seconds())
            if witness is None:
                await asker.wait(lambda: len(asker.texts("them")) >= 2)
            nursery.cancel_scope.cancel()
    if witness is None:
        [room] = server.store.rooms()
        sent = [
            e["time"]
            for e in server.store.events(room.id)
            if e["kind"] == "engine" and e["data"]["type"] == "message_sent"
        ]
        shown_at = [m.time for m in server.store.messages(room.id) if m.sender == "witness"]
        delays = [
            (_wall(b) - _wall(a)).total_seconds() for a, b in zip(sent, shown_at, strict=False)
        ]
    return delays


def _wall(text: str) -> datetime:
    return datetime.fromisoformat(text)


async def test_the_check_takes_as_long_for_the_bot_as_for_a_person(
    tmp_path: Path, virtual_clock: VirtualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    latency = 0.4
    (tmp_path / "bot").mkdir()
    (tmp_path / "person").mkdir()
    bot = await _witness_delays(tmp_path / "bot", 0.0, latency)
    person = await _witness_delays(tmp_path / "person", 1.0, latency)
    assert bot and person
    for delay in bot + person:
        # (the upper bound leaves room for a loaded machine: the call runs in real time)
        assert latency <= delay < latency + 1.0, (bot, person)


async def test_a_missing_key_variable_stops_serve_with_one_clear_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    spec = _spec(tmp_path, "http://127.0.0.1:9/v1")
    assert main(["serve", str(spec), "--port", "1"]) != 0
    err = capsys.readouterr().err
    line = next(n for n, t in enumerate(spec.read_text().splitlines(), 1) if "api_key_env" in t)
    assert f"study.toml:{line}" in err and "moderation.api_key_env" in err
    assert KEY_ENV in err and "not set" in err and f"export {KEY_ENV}=" in err


async def test_a_key_pasted_into_the_spec_is_refused_without_echoing_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = _spec(tmp_path, "http://127.0.0.1:9/v1")
    spec.write_text(spec.read_text().replace(f'"{KEY_ENV}"', f'"{KEY}"'))
    assert main(["serve", str(spec)]) != 0
    err = capsys.readouterr().err
    assert "moderation.api_key_env" in err and "not the key itself" in err
    assert KEY not in err


async def test_the_key_is_nowhere_in_the_store_or_the_export(
    tmp_path: Path, virtual_clock: VirtualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    # The server rejects the key and echoes it in its error body, as careless ones do.
    with FakeModerationServer(expected_key="another-key") as fake:
        spec = _spec(tmp_path, fake.base_url)
        server = make_server(spec)
        async with trio.open_nursery() as nursery:
            browser, _ = await _bot_room(server, nursery, "hello there")
            await browser.wait(lambda: len(browser.texts("them")) >= 1)
            nursery.cancel_scope.cancel()
    assert any(e["data"]["error"] == "HTTP 401" for e in _kinds(server, "moderation_unavailable"))
    out = tmp_path / "export"
    assert main(["serve", "export", str(spec), "--out", str(out)]) == 0
    for path in [*tmp_path.glob("*"), *out.rglob("*")]:
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


async def _frames_until(client: WebSocketClient, kind: str, **match: object) -> dict[str, Any]:
    with trio.fail_after(60):
        while True:
            frame = await client.receive()
            assert frame is not None, "the server closed the connection"
            if frame["type"] == kind and all(frame.get(k) == v for k, v in match.items()):
                return frame


async def test_sdtt_serve_reads_the_key_and_checks_messages_with_the_endpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)  # the server process inherits it
    with FakeModerationServer({"idiot": "harassment"}, expected_key=KEY) as fake:
        spec = _spec(tmp_path, fake.base_url)
        spec.write_text(spec.read_text().replace("[chat]\n", "[chat]\nspeed = 20\n"))
        port = free_port()
        process = start_server(spec, port)
        try:
            client = await WebSocketClient.connect("127.0.0.1", port, "/ws/pilot")
            await client.send({"type": "join", "pid": "P1"})
            await client.send({"type": "consent"})
            await _frames_until(client, "phase", phase="chat")
            await client.send({"type": "send", "text": "you idiot"})
            refused = await _frames_until(client, "refused")
            await trio.sleep(0.2)
            await client.send({"type": "send", "text": "hello, anyone?"})
            await _frames_until(client, "message", text="hello, anyone?")
            answer = await _frames_until(client, "message", **{"from": "them"})
            await client.aclose()
        finally:
            stop_server(process)
    assert refused["message"] == MODERATED
    assert fake.inputs()[:2] == ["you idiot", "hello, anyone?"]
    assert answer["text"] in fake.inputs()  # the bot's answer was checked too
    assert all(r.headers["authorization"] == f"Bearer {KEY}" for r in fake.requests)
    with sqlite3.connect(tmp_path / "pilot.sqlite3") as db:
        events = list(db.execute("SELECT kind, data FROM events WHERE kind LIKE 'moderation%'"))
        moderated = list(db.execute("SELECT data FROM events WHERE kind = 'message_moderated'"))
    assert events == []  # the endpoint answered every time
    assert [json.loads(d) for (d,) in moderated] == [{"categories": ["harassment"]}]
    for path in tmp_path.glob("pilot*"):
        assert KEY.encode() not in path.read_bytes(), path
