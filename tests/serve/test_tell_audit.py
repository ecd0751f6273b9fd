"""Nothing the interrogator's browser receives tells the bot from a person: the tell
audit (tests/serve/tell_audit.py) at chance, the two chats of a three-party room
refusing alike, and a quick answer held until the indicator has shown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio

from sdtt.serve.indicator import TYPING_MIN
from sdtt.serve.state import state_frames
from tests.serve.helpers import make_server, person_room, write_spec
from tests.serve.tell_audit import describe, play, strongest
from tests.serve.test_three_party import three_party

pytestmark = pytest.mark.trio


async def test_a_classifier_cannot_tell_bot_rooms_from_what_the_browser_receives(
    tmp_path: Path, autojump_clock: object
) -> None:
    # On every timing feature the browser can compute (tell_audit.features), the bot
    # timed by the study's default delays and people replying as the corpus's do.
    audit = await play(tmp_path, people=120)
    bots = sum(audit.bot)
    assert bots >= 30 and len(audit.bot) - bots >= 30, describe(audit)
    low, high = audit.interval()
    assert low <= 0.5 <= high, describe(audit)
    # Nor does any one feature alone, beyond what chance gives the strongest of 1,600.
    assert strongest(audit)[2] > 0.01, describe(audit)
    # What gave the bot away before, each now the same in every room: the end of the
    # chat, the refusal.
    for name in ("message_them>phase_verdict:last", "refusal"):
        assert len({round(row[name], 6) for row in audit.rows}) == 1, describe(audit)
    # Every answer, the bot's or a person's, came right after the indicator went on, once
    # per question (a quick answer, mostly the bot's, used to come with no indicator).
    for name in ("typing_them_on>message_them:next_share", "typing_them_on:per_question"):
        assert {row[name] for row in audit.rows} == {1.0}, describe(audit)
    # The indicator came 2 + U(0, 3) s after each question, with either witness.
    assert all(row["asked>typing_them_on:min"] >= 2 for row in audit.rows)
    assert all(row["asked>typing_them_on:max"] <= 5 for row in audit.rows)


async def test_the_two_chats_of_a_three_party_room_refuse_alike(
    tmp_path: Path, autojump_clock: object
) -> None:
    server = make_server(three_party(write_spec(tmp_path, turns=1)))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        judge, witness = await person_room(server, nursery)
        [room] = server.store.rooms()
        person = 3 - (room.bot_position or 0)
        for chat in (1, 2):
            await judge.say({"type": "send", "chat": chat, "text": f"hello chat {chat}"})
            await trio.sleep(1)
        bot = server._rooms[room.id].chats[3 - person]
        while not (bot.session and bot.session.is_idle and judge.texts("them")):
            await trio.sleep(0.5)  # the bot has answered its last turn in full
        await witness.say({"type": "send", "text": "hi, I am here"})
        await judge.wait(lambda: "hi, I am here" in judge.texts("them"))
        # One more message to each chat: the bot's (done answering) and the person's
        # (who may still add to their answer) are refused alike.
        for chat in (3 - person, person):
            await judge.say({"type": "send", "chat": chat, "text": "one more"})
            await trio.sleep(1)
        await judge.wait(lambda: len(judge.of("refused")) == 2)
        nursery.cancel_scope.cancel()
    first, second = (f["message"] for f in judge.of("refused"))
    assert first == second


async def test_a_quick_answer_waits_for_the_indicator_but_its_writer_sees_it_at_once(
    tmp_path: Path, autojump_clock: object
) -> None:
    server = make_server(write_spec(tmp_path, turns=2, share=1.0))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        judge, witness = await person_room(server, nursery)
        shown: dict[str, float] = {}

        def note(frame: dict[str, Any]) -> None:
            key = f"{frame['type']}:{frame.get('on', frame.get('from'))}"
            shown.setdefault(key, trio.current_time())

        judge.on_frame = note
        await judge.say({"type": "send", "text": "hi, who are you?"})
        asked = trio.current_time()
        await witness.wait(lambda: witness.texts("them") == ["hi, who are you?"])
        await witness.say({"type": "send", "text": "me"})  # at once, before any indicator
        sent = trio.current_time()
        await witness.wait(lambda: witness.texts("you") == ["me"])
        assert trio.current_time() == sent  # the writer sees it at once
        # Held: not in what a reload of the interrogator's page would get either.
        # Once the indicator is on, such a page gets it on too.
        reloaded = {
            pid: state_frames(server.study, server.store, server._rooms, pid)
            for pid in ("J1", "W1")
        }
        histories = {
            pid: next(f for f in frames if f["type"] == "history")
            for pid, frames in reloaded.items()
        }
        assert [m["text"] for m in histories["J1"]["messages"]] == ["hi, who are you?"]
        assert [m["text"] for m in histories["W1"]["messages"]] == ["hi, who are you?", "me"]
        assert not [f for f in reloaded["J1"] if f["type"] == "typing"]
        await judge.wait(lambda: "typing:True" in shown)
        reloaded_on = state_frames(server.study, server.store, server._rooms, "J1")
        assert [f for f in reloaded_on if f["type"] == "typing"] == [
            {"type": "typing", "chat": 1, "from": "them", "on": True}
        ]
        assert not [
            f
            for f in state_frames(server.study, server.store, server._rooms, "W1")
            if f["type"] == "typing"
        ]
        await judge.wait(lambda: "typing:False" in shown)
        nursery.cancel_scope.cancel()
    # The indicator went on by the policy, the answer came a typing time after it (the
    # least, for two characters), and only then did the indicator go off.
    assert 2 <= shown["typing:True"] - asked <= 5
    assert shown["message:them"] - shown["typing:True"] == pytest.approx(TYPING_MIN)
    assert shown["typing:False"] == shown["message:them"]
    order = [f["type"] + str(f.get("on", "")) for f in judge.frames[-3:]]
    assert order == ["typingTrue", "message", "typingFalse"]
    assert judge.texts("them") == ["me"]
    assert [e["kind"] for e in server.store.events() if e["kind"] == "answer_held"]


async def test_an_answer_after_a_late_loop_still_comes_after_its_indicator(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    # A busy process can hold the room's loop past the time the indicator was due; an
    # answer stored then was shown at once with no indicator at all (seen in Chromium).
    server = make_server(write_spec(tmp_path, turns=2, share=1.0))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        judge, _ = await person_room(server, nursery)
        order: list[str] = []

        def note(frame: dict[str, Any]) -> None:
            if frame["type"] in ("typing", "message"):
                order.append(f"{frame['type']}:{frame.get('on', frame.get('from'))}")

        judge.on_frame = note
        await judge.say({"type": "send", "text": "hi, who are you?"})
        await judge.wait(lambda: judge.texts("you") == ["hi, who are you?"])
        [room] = server.store.rooms()
        live = server._rooms[room.id]
        # No checkpoint from here to the answer: the room's loop cannot run meanwhile.
        autojump_clock.jump(10)  # past the indicator's 2 + U(0, 3) seconds
        answer = server.store.add_message(room.id, "witness", "me", server.records.wall_iso(), 1)
        live.deliver(answer)
        await judge.wait(lambda: judge.texts("them") == ["me"])
        nursery.cancel_scope.cancel()
    assert order[order.index("message:you") + 1 :][:2] == ["typing:True", "message:them"]
