"""Study options from Jones & Bergen's public Turing test: completion codes per outcome,
the platform's study id, a moderation word list, "report this partner", questions with
the verdict (exported as the judgement's demographics) and "were you right?" feedback."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from sdtt.cli import main
from sdtt.tasks.judgements import read_judgements
from tests.serve.helpers import Browser, make_server, write_spec

pytestmark = pytest.mark.trio

QUESTIONS = """
feedback = true
platform_study_id = "S-42"

[study.completion_codes]
timeout = "CODE-TIMEOUT"

[[study.questions]]
id = "ai_use"
text = "How often do you use AI chatbots?"
options = ["never", "monthly", "weekly", "daily"]
required = true

[[study.questions]]
id = "age"
text = "Your age"
"""


def _spec(tmp_path: Path, **kwargs: object) -> Path:
    spec = write_spec(tmp_path, **kwargs)  # type: ignore[arg-type]
    text = spec.read_text().replace("belief_slider = true\n", "belief_slider = true\n" + QUESTIONS)
    text = text.replace("[chat]\n", '[chat]\nblocked_words = ["idiot", "stupid fool"]\n')
    spec.write_text(text)
    return spec


async def test_a_timed_out_participant_gets_the_timeout_code(
    tmp_path: Path, autojump_clock: object
) -> None:
    server = make_server(_spec(tmp_path, share=1.0, timeout=30, on_timeout="end"))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        browser = Browser(server, "P1", study_id="S-42")
        await browser.open(nursery)
        await browser.say({"type": "consent"})
        await browser.wait_phase("done")
        nursery.cancel_scope.cancel()
    done = browser.of("phase")[-1]
    assert done["code"] == "CODE-TIMEOUT"
    assert done["url"] == "https://example.org/done?cc=CODE-TIMEOUT"


async def test_a_link_of_another_platform_study_is_refused(
    tmp_path: Path, autojump_clock: object
) -> None:
    server = make_server(_spec(tmp_path))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        wrong, missing = Browser(server, "P1", study_id="S-7"), Browser(server, "P2")
        for browser in (wrong, missing):
            await browser.open(nursery)
            await browser.gone.wait()
        nursery.cancel_scope.cancel()
    for browser in (wrong, missing):
        [refused] = browser.of("refused")
        assert refused["fatal"] and "another study" in refused["message"]
    assert server.store.participants() == []


async def test_blocked_words_are_refused_and_recorded_and_reports_recorded(
    tmp_path: Path, autojump_clock: object
) -> None:
    server = make_server(_spec(tmp_path, turns=3))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        browser = Browser(server, "P1", study_id="S-42")
        await browser.enter_chat(nursery)
        await browser.say({"type": "send", "text": "you IDIOT!"})
        await browser.wait(lambda: bool(browser.of("refused")))
        await trio.sleep(1)
        await browser.say({"type": "send", "text": "idiotic? no, a fine idea"})
        await browser.wait(lambda: "idiotic? no, a fine idea" in browser.texts("you"))
        await browser.say({"type": "report", "reason": "rude"})
        await browser.wait(lambda: bool(browser.of("notice")))
        nursery.cancel_scope.cancel()
    assert "friendly" in browser.of("refused")[0]["message"]
    assert "you IDIOT!" not in [
        m.text for r in server.store.rooms() for m in server.store.messages(r.id)
    ]
    kinds = {e["kind"]: e for e in server.store.events()}
    assert kinds["message_moderated"]["data"] == {"word": "idiot"}
    assert kinds["message_moderated"]["participant"] == "P1"
    assert kinds["partner_reported"]["data"] == {"chat": 1, "reason": "rude"}


async def test_answers_to_the_questions_are_exported_and_feedback_says_if_right(
    tmp_path: Path, autojump_clock: object, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = _spec(tmp_path, turns=1)
    server = make_server(spec)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        browser = Browser(server, "P1", study_id="S-42")
        await browser.enter_chat(nursery)
        await browser.say({"type": "send", "text": "hello, who are you?"})
        await browser.wait_phase("verdict")
        verdict = {"type": "verdict", "human": "yes", "confidence": 70, "reason": "warm"}
        for answers in ({}, {"ai_use": "hourly"}):  # required; one of the options
            before = len(browser.of("refused"))
            await browser.say({**verdict, "answers": answers})
            await browser.wait(lambda n=before: len(browser.of("refused")) > n)  # type: ignore[misc]
        await browser.say({**verdict, "answers": {"ai_use": "weekly", "age": " 34 "}})
        await browser.wait_phase("done")
        nursery.cancel_scope.cancel()
    refusals = [f["message"] for f in browser.of("refused")]
    assert refusals == [
        "Please answer: How often do you use AI chatbots?",
        "Choose one of the answers to: How often do you use AI chatbots?",
    ]
    assert browser.of("phase")[-1]["right"] is False  # the bot, judged a person
    out = tmp_path / "export"
    assert main(["serve", "export", str(spec), "--out", str(out)]) == 0
    [judgement] = read_judgements(out / "judgements.jsonl")
    assert judgement.demographics == {"ai_use": "weekly", "age": "34"}
    assert judgement.strategy == "warm"


async def test_export_scrub_replaces_personal_data_in_participants_text(
    tmp_path: Path, autojump_clock: object, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(tmp_path, turns=1, share=0.5)
    server = make_server(spec)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        # The first interrogator gets the bot, then two participants share a room.
        pages = [Browser(server, pid) for pid in ("B1", "J1", "W1")]
        for page in pages:
            await page.open(nursery)
            await page.say({"type": "consent"})
            await page.wait(lambda p=page: p.phase() in ("chat", "lobby"))  # type: ignore[misc]
        for page in pages:
            await page.wait_phase("chat")
        roles = {p.pid: p.of("phase")[-1]["role"] for p in pages}
        for page in pages:
            if roles[page.pid] == "interrogator":
                await page.say({"type": "send", "text": "hi, I'm Anna, mail anna.b@example.org"})
        witness = next(p for p in pages if roles[p.pid] == "witness")
        await witness.wait(lambda: bool(witness.texts("them")))
        await witness.say({"type": "send", "text": "call me on +44 20 7946 0958"})
        judges = [p for p in pages if roles[p.pid] == "interrogator"]
        for page in judges:
            await page.wait_phase("verdict")
            await page.say(
                {
                    "type": "verdict",
                    "human": "yes",
                    "confidence": 60,
                    "reason": "ask anna.b@example.org",
                }
            )
            await page.wait_phase("done")
        nursery.cancel_scope.cancel()
    out = tmp_path / "export"
    assert main(["serve", "export", str(spec), "--out", str(out), "--scrub"]) == 0
    # two interrogators' messages and reasons, the human witness's message
    printed = capsys.readouterr().out
    assert "scrubbed: 5 participant text(s) changed" in " ".join(printed.split()), printed
    written = "".join(p.read_text() for p in (out / "chats").glob("*.jsonl"))
    written += (out / "judgements.jsonl").read_text()
    for secret in ("anna.b@example.org", "7946 0958", "Anna"):
        assert secret not in written, secret
    assert "[EMAIL_1]" in written and "[PHONE_1]" in written
    assert list((out / "chats").glob("*.events.jsonl")) == []
    bot_room = next(r for r in server.store.rooms() if r.witness == "bot")
    bot_text = [m.text for m in server.store.messages(bot_room.id) if m.sender == "witness"]
    assert bot_text and all(text in written for text in bot_text)  # the bot's, untouched
