"""How a chat ends tells the interrogator nothing of the witness: it counts from when the
witness's last message left for the interrogator's page, not from when it was stored
(under load a bot room showed the verdict page 0.8 s after the bot's last message
reached the page, against 8 s in person rooms), and an early end reads the same whoever
the partner was."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio

from sdtt.dialogue.condition import Condition
from sdtt.errors import ServerError
from sdtt.models.mock import MockModelAPI
from sdtt.models.model import Model
from sdtt.models.retry import RetryPolicy
from sdtt.serve.room import END_GRACE
from tests.serve.helpers import Browser, make_server, person_room, write_spec

pytestmark = pytest.mark.trio
LATE = 5.0
"""Seconds each of the witness's messages takes to reach the interrogator's page."""


def _late_answers(frames: list[dict[str, Any]]) -> float:
    return LATE if any(f["type"] == "message" and f["from"] == "them" for f in frames) else 0.0


@pytest.mark.parametrize("witness", ["bot", "person"])
async def test_the_verdict_comes_the_grace_after_the_last_answer_reached_the_page(
    tmp_path: Path, autojump_clock: object, witness: str
) -> None:
    share = 1.0 if witness == "person" else 0.0
    server = make_server(write_spec(tmp_path, turns=1, share=share))
    arrived: dict[str, list[float]] = {"answer": [], "verdict": []}

    def note(frame: dict[str, Any]) -> None:
        if frame["type"] == "message" and frame["from"] == "them":
            arrived["answer"].append(trio.current_time())
        if frame["type"] == "phase" and frame["phase"] == "verdict":
            arrived["verdict"].append(trio.current_time())

    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        if witness == "person":
            judge, person = await person_room(server, nursery)
        else:
            judge = Browser(server, "J1")
            await judge.enter_chat(nursery)
        judge.slow = _late_answers
        judge.on_frame = note
        await judge.say({"type": "send", "text": "hi, how is your day going?"})
        if witness == "person":
            await person.wait(lambda: person.texts("them") != [])
            await trio.sleep(6)
            await person.say({"type": "send", "text": "pretty good, a bit tired"})
        await judge.wait_phase("verdict")
        nursery.cancel_scope.cancel()
    assert arrived["answer"], arrived
    [verdict] = arrived["verdict"]
    assert verdict - arrived["answer"][-1] == pytest.approx(END_GRACE, abs=0.01)


async def test_an_early_end_reads_the_same_whether_a_person_left_or_the_bot_failed(
    tmp_path: Path, autojump_clock: object
) -> None:
    # "Your chat partner left" told the interrogator the partner had been a person.
    def failing(condition: Condition, seed: int) -> Model:
        api = MockModelAPI(lambda prompt, config: ServerError("down"), name="mock/down")
        return Model(api, retry=RetryPolicy(max_attempts=2, jitter=0), seed=seed)

    (tmp_path / "bot").mkdir()
    (tmp_path / "person").mkdir()
    done = {}
    bot_server = make_server(write_spec(tmp_path / "bot", turns=3), open_model=failing)
    person_server = make_server(write_spec(tmp_path / "person", share=1.0))
    async with trio.open_nursery() as nursery:
        await nursery.start(bot_server.run)
        judge = Browser(bot_server, "J1")
        await judge.enter_chat(nursery)
        await judge.say({"type": "send", "text": "hello?"})
        await trio.sleep(60)
        await judge.say({"type": "send", "text": "anyone there?"})
        await judge.wait_phase("done")
        done["bot"] = judge.of("phase")[-1]
        await nursery.start(person_server.run)
        judge, witness = await person_room(person_server, nursery)
        await witness.close()
        await judge.wait_phase("done")
        done["person"] = judge.of("phase")[-1]
        nursery.cancel_scope.cancel()
    outcomes = {
        kind: server.store.participant("J1").outcome  # type: ignore[union-attr]
        for kind, server in (("bot", bot_server), ("person", person_server))
    }
    assert outcomes == {"bot": "partner_error", "person": "partner_left"}
    assert done["bot"]["note"] == done["person"]["note"]
    assert "ended early" in done["bot"]["note"]
