"""Three-party rooms, the own person's private link and the admin page, on the virtual
clock."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio

from sdtt.cli import main
from sdtt.serve.app import build_app
from sdtt.tasks.judgements import read_judgements
from tests.serve.helpers import Browser, make_server, write_spec
from tests.serve.test_app import http_get

pytestmark = pytest.mark.trio


def three_party(spec: Path) -> Path:
    text = spec.read_text().replace(
        'title = "Chat study"', 'title = "Chat study"\nmode = "three-party"'
    )
    spec.write_text(text)
    return spec


async def test_three_party_game_side_by_side(
    tmp_path: Path, autojump_clock: object, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = three_party(write_spec(tmp_path, turns=1))
    server = make_server(spec)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        judge, witness = Browser(server, "J1"), Browser(server, "W1")
        for browser in (judge, witness):
            await browser.open(nursery)
            await browser.say({"type": "consent"})
        await judge.wait_phase("chat")
        await witness.wait_phase("chat")
        assert judge.of("phase")[-1]["chats"] == 2
        assert witness.of("phase")[-1]["chats"] == 1
        [room] = server.store.rooms()
        person = 3 - (room.bot_position or 0)
        for chat in (1, 2):
            await judge.say({"type": "send", "chat": chat, "text": f"hello chat {chat}"})
            await trio.sleep(1)
        await witness.wait(lambda: witness.texts("them") == [f"hello chat {person}"])
        await witness.say({"type": "send", "text": "hi, I am here"})
        await judge.wait_phase("verdict")
        await judge.say({"type": "verdict", "human": "yes", "confidence": 50, "reason": ""})
        await judge.wait(lambda: bool(judge.of("refused")))
        await judge.say(
            {"type": "verdict", "human": str(person), "confidence": 90, "reason": "typo"}
        )
        await judge.wait_phase("done")
        nursery.cancel_scope.cancel()
    shown: dict[int, list[str]] = {1: [], 2: []}
    for frame in judge.of("message"):
        shown[frame["chat"]].append(frame["text"])
    assert shown[person] == [f"hello chat {person}", "hi, I am here"]
    assert len(shown[3 - person]) >= 2, "the bot answered in its chat"
    assert all(f["chat"] == 1 for f in witness.of("message"))
    assert "whether" not in judge.of("refused")[0]["message"]

    out = tmp_path / "export"
    assert main(["serve", "export", str(spec), "--out", str(out)]) == 0
    [judgement] = read_judgements(out / "judgements.jsonl")
    assert judgement.bot_position == room.bot_position
    assert judgement.correct is True and judgement.witness is None
    assert judgement.choice == ("A" if room.bot_position == 1 else "B")
    assert sorted(p.name for p in (out / "chats").glob("*.jsonl")) == sorted(
        [f"{room.id}-1.jsonl", f"{room.id}-2.jsonl", f"{room.id}-{room.bot_position}.events.jsonl"]
    )
    capsys.readouterr()
    assert main(["score", str(out / "judgements.jsonl"), "--bootstrap", "0"]) == 0
    assert "0.0%" in capsys.readouterr().out


async def test_own_person_joins_by_private_link_and_stays_for_more(
    tmp_path: Path, autojump_clock: object
) -> None:
    spec = write_spec(tmp_path, share=1.0, turns=1)
    spec.write_text(
        spec.read_text().replace("belief_slider = true", "belief_slider = true\nown_person = true")
    )
    server = make_server(spec, own_key="secret-key")
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        impostor = Browser(server, "ann", key="wrong")
        await impostor.open(nursery)
        await impostor.gone.wait()
        ann = Browser(server, "ann", key="secret-key")
        await ann.open(nursery)
        await ann.say({"type": "consent"})
        await ann.wait_phase("lobby")
        for index in range(2):
            judge = Browser(server, f"J{index}")
            await judge.enter_chat(nursery)
            await ann.wait_phase("chat")
            await judge.say({"type": "send", "text": "is this really you?"})
            await ann.wait(lambda: ann.texts("them") == ["is this really you?"])
            await ann.say({"type": "send", "text": f"yes it's me ({index})"})
            await judge.wait_phase("verdict")
            await ann.wait_phase("lobby")
        nursery.cancel_scope.cancel()
    assert impostor.of("refused")[0]["message"] == "This private link is not valid."
    rooms = server.store.rooms()
    assert [(r.witness, r.witness_pid) for r in rooms] == [("human", "ann")] * 2


async def test_admin_page_needs_the_token_and_ends_a_room(
    tmp_path: Path, autojump_clock: object
) -> None:
    server = make_server(write_spec(tmp_path, turns=3), admin_token="let-me-in")
    app = build_app(server)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        browser = Browser(server, "P1")
        await browser.enter_chat(nursery)
        assert (await http_get(app, "/admin/pilot"))[0] == 403
        assert (await http_get(app, "/admin/pilot", b"token=guess"))[0] == 403
        status, headers, _ = await http_get(app, "/admin/pilot", b"token=let-me-in")
        # The token moves from the link into a cookie, and out of the address bar.
        assert (status, headers["location"]) == (303, "/admin/pilot")
        cookie = headers["set-cookie"].split(";")[0]
        assert cookie == "sdtt_admin=let-me-in"
        for flag in ("HttpOnly", "SameSite=strict", "Path=/admin/pilot"):
            assert flag in headers["set-cookie"]
        assert (await http_get(app, "/admin/pilot", cookie="sdtt_admin=guess"))[0] == 403
        status, headers, page = await http_get(app, "/admin/pilot", cookie=cookie)
        assert status == 200 and "<script" not in page and "let-me-in" not in page
        assert "form-action 'self'" in headers["content-security-policy"]
        [room] = server.store.rooms()
        assert room.id in page and "mock/chatty" in page and "P1" in page
        assert (await http_post(app, "/admin/pilot/end", f"room={room.id}"))[0] == 403
        sent = await http_post(app, "/admin/pilot/end", f"room={room.id}", cookie=cookie)
        assert sent[0] == 303
        await browser.wait_phase("done")
        nursery.cancel_scope.cancel()
    assert "researcher ended" in browser.of("phase")[-1]["note"]
    assert server.store.rooms()[0].end_reason == "ended_by_admin"
    assert server.overview()["excluded"] == [{"pid": "P1", "outcome": "ended"}]


async def http_post(
    app: Any, path: str, body: str, cookie: str | None = None
) -> tuple[int, dict[str, str]]:
    """Status and headers of a form POST through the ASGI app (with a Cookie header)."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [
            (b"host", b"study.test"),
            (b"content-type", b"application/x-www-form-urlencoded"),
            *([(b"cookie", cookie.encode())] if cookie else []),
        ],
        "server": ("study.test", 80),
        "client": ("127.0.0.1", 5000),
        "root_path": "",
    }
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body.encode(), "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent[0]["status"], {k.decode(): v.decode() for k, v in sent[0]["headers"]}
