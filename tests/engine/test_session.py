"""The trio session on a virtual clock (pytest-trio's ``autojump_clock``): exact timing."""

from __future__ import annotations

import math
from datetime import timedelta
from pathlib import Path

import pytest
import trio
import trio.testing

from sdtt.engine.events import (
    ErrorEvent,
    ListSink,
    MessageDropped,
    MessageSent,
    ModelCallFinished,
    ModelCallStarted,
    SessionClosed,
    TypingStopped,
    read_event_log,
)
from sdtt.engine.schedule import CLOSED, SUPERSEDED, call_seed
from sdtt.engine.session import Session, SessionClosedError, SessionSettings, open_session
from sdtt.errors import InputError, ServerError
from tests.engine.helpers import START, chat_lines, reply, scripted_bot

pytestmark = pytest.mark.trio


async def test_exact_send_times_for_a_known_seed(
    autojump_clock: trio.testing.MockClock, tmp_path: Path
) -> None:
    # "hi there" carries a time already past when the reply arrives: the delay preset
    # times it. "see you later" carries a time 60 s in: it waits for it.
    bot, _ = scripted_bot(reply("hi there", "see you later", delay=2.0, at=[1, 60]))
    sink = ListSink()
    settings = SessionSettings(t1=3.0, seed=11)
    async with open_session(
        bot, settings, sink=sink, log_path=tmp_path / "s.events.jsonl", started=START
    ) as session:
        await session.send_user_message("hey")
        await session.wait_idle()
    draws = call_seed(11, 1, "plan")
    first = 3.0 + draws.gauss(0.3, 0.03) * len("hi there")
    assert first > 5.0, "typing outlasts the 2 s call, so the preset decides"
    sent = [event for event in sink.events if isinstance(event, MessageSent)]
    assert [e.text for e in sent] == ["hi there", "see you later"]
    assert [e.clock for e in sent] == pytest.approx([first, 60.0], abs=1e-9)
    assert all(event.lateness == 0 for event in sent)
    call = sink.of("model_call_started")[0]
    assert call.clock == 3.0
    assert [m.time for m in session.transcript.messages] == [
        START,
        START + timedelta(seconds=math.floor(first)),
        START + timedelta(seconds=60),
    ]


async def test_t1_waits_for_the_burst_to_finish(autojump_clock: trio.testing.MockClock) -> None:
    bot, api = scripted_bot(reply("ok"))
    sink = ListSink()
    async with open_session(bot, SessionSettings(t1=3.0), sink=sink, started=START) as session:
        await session.send_user_message("so")
        await trio.sleep(2.0)
        await session.send_user_message("guess what")
        await session.wait_idle()
    (started,) = [e for e in sink.events if isinstance(e, ModelCallStarted)]
    assert (started.clock, started.unread, started.reason) == (3.0, 2, "unread")
    assert "guess what" in api.prompts[0].dialogue


async def test_user_writing_during_the_call_triggers_a_second_call_at_once(
    autojump_clock: trio.testing.MockClock,
) -> None:
    bot, api = scripted_bot(reply("first answer", delay=2.0), reply("second answer", delay=2.0))
    sink = ListSink()
    async with open_session(bot, SessionSettings(t1=3.0), sink=sink, started=START) as session:
        await session.send_user_message("question")
        await trio.sleep(4.0)  # the first call runs from 3 s to 5 s
        await session.send_user_message("oh and another thing")
        await session.wait_idle()
    calls = [e for e in sink.events if isinstance(e, ModelCallStarted)]
    assert [(c.clock, c.reason) for c in calls] == [(3.0, "unread"), (5.0, "wrote_during_call")]
    assert "oh and another thing" in api.prompts[1].dialogue
    assert "oh and another thing" not in api.prompts[0].dialogue


async def test_a_new_reply_drops_the_unsent_rest_of_the_previous_one(
    autojump_clock: trio.testing.MockClock, tmp_path: Path
) -> None:
    long = "this is a fairly long message that takes a while to type"
    bot, _ = scripted_bot(reply("sure", long, "and more", delay=1.0), reply("wait what", delay=1.0))
    sink = ListSink()
    log = tmp_path / "s.events.jsonl"
    async with open_session(
        bot, SessionSettings(t1=3.0, seed=1), sink=sink, log_path=log, started=START
    ) as session:
        await session.send_user_message("hi")
        # "sure" goes out about 4.2 s in; the long message would take ~17 s more.
        await trio.sleep(6.0)
        await session.send_user_message("hold on")
        await session.wait_idle()
    texts = [m.text for m in session.transcript.messages]
    assert texts == ["hi", "sure", "hold on", "wait what"]
    dropped = [e for e in sink.events if isinstance(e, MessageDropped)]
    assert [(e.text, e.reason) for e in dropped] == [(long, SUPERSEDED), ("and more", SUPERSEDED)]
    # The message being typed stops showing as typed when it is dropped.
    stops = [e for e in sink.events if isinstance(e, TypingStopped) and e.reason == "dropped"]
    assert [(e.call, e.index) for e in stops] == [(1, 1)]
    assert read_event_log(log).transcript.messages == session.transcript.messages


async def test_model_failure_mid_session_is_an_event_and_the_session_recovers(
    autojump_clock: trio.testing.MockClock, tmp_path: Path
) -> None:
    bot, api = scripted_bot(
        reply("hello"),
        ServerError("boom (HTTP 500)"),
        ServerError("boom again (HTTP 503)"),
        reply("sorry, was away"),
        retries=2,
    )
    sink = ListSink()
    log = tmp_path / "s.events.jsonl"
    async with open_session(
        bot, SessionSettings(t1=1.0), sink=sink, log_path=log, started=START
    ) as session:
        await session.send_user_message("hi")
        await session.wait_idle()
        await session.send_user_message("you there?")
        await session.wait_idle()
        assert session.errors == 1
        await session.send_user_message("hello??")
        await session.wait_idle()
    assert len(api.prompts) == 4, "the failed call was retried once by the model's policy"
    (error,) = [e for e in sink.events if isinstance(e, ErrorEvent)]
    assert (error.call, error.kind) == (2, "ServerError")
    assert "Gave up after 2 attempts" in error.message
    finished = [e for e in sink.events if isinstance(e, ModelCallFinished)]
    assert [e.ok for e in finished] == [True, False, True]
    # The failed call's record agrees with its error: 2 attempts, cache use unknown.
    assert (finished[1].attempts, finished[1].cached_input_tokens) == (2, None)
    texts = [m.text for m in session.transcript.messages]
    assert texts == ["hi", "hello", "you there?", "hello??", "sorry, was away"]
    replay = read_event_log(log)
    assert replay.complete
    assert replay.transcript.messages == session.transcript.messages
    assert [e.model_dump() for e in replay.events] == [e.model_dump() for e in sink.events]


async def test_closing_mid_typing_drops_the_message_and_keeps_log_and_transcript_agreeing(
    autojump_clock: trio.testing.MockClock, tmp_path: Path
) -> None:
    bot, _ = scripted_bot(reply("ok", "a message that is still being typed when we leave"))
    sink = ListSink()
    log = tmp_path / "s.events.jsonl"
    transcript_file = tmp_path / "s.jsonl"
    async with open_session(
        bot,
        SessionSettings(t1=1.0),
        sink=sink,
        log_path=log,
        transcript_path=transcript_file,
        session_id="s",
        started=START,
    ) as session:
        await session.send_user_message("hi")
        while not sink.of("message_sent"):
            await session.wait_changed()
        await trio.sleep(1.0)
    texts = [m.text for m in session.transcript.messages]
    assert texts == ["hi", "ok"]
    tail = [event.type for event in sink.events[-3:]]
    assert tail == ["typing_stopped", "message_dropped", "session_closed"]
    dropped = sink.events[-2]
    assert isinstance(dropped, MessageDropped) and dropped.reason == CLOSED
    replay = read_event_log(log)
    assert replay.complete and isinstance(replay.events[-1], SessionClosed)
    assert replay.transcript.messages == session.transcript.messages
    from sdtt.dialogue.store import read_transcripts

    (saved,) = read_transcripts(transcript_file)
    assert saved.messages == session.transcript.messages


async def test_closing_during_a_call_logs_the_call_as_unfinished(
    autojump_clock: trio.testing.MockClock,
) -> None:
    bot, _ = scripted_bot(reply("too late", delay=30.0))
    sink = ListSink()
    async with open_session(bot, SessionSettings(t1=0.0), sink=sink, started=START) as session:
        await session.send_user_message("hi")
        await trio.sleep(5.0)
    finished = [e for e in sink.events if isinstance(e, ModelCallFinished)]
    assert [(e.ok, e.error) for e in finished] == [(False, "Cancelled")]
    with pytest.raises(SessionClosedError):
        await session.send_user_message("anyone?")


async def test_pingpong_never_sends_two_in_a_row_and_holds_the_partner_back(
    autojump_clock: trio.testing.MockClock,
) -> None:
    bot, _ = scripted_bot(reply("one", "two", "three", delay=2.0), reply("four", "five", delay=2.0))
    sink = ListSink()
    settings = SessionSettings(mode="pingpong", t1=3.0)
    async with open_session(bot, settings, sink=sink, started=START) as session:
        await session.send_user_message("a")
        # Waits until the bot has answered "a", however early it is called.
        await session.send_user_message("b")
        await session.wait_idle()
    lines = chat_lines(sink.events)
    assert [(side, text) for _, side, text in lines] == [
        ("user", "a"),
        ("bot", "one"),
        ("user", "b"),
        ("bot", "four"),
    ]
    calls = [e for e in sink.events if isinstance(e, ModelCallStarted)]
    assert calls[0].clock == 0.0, "ping-pong has no t1 wait"
    sent_at = lines[1][0]
    assert lines[2][0] == sent_at, "'b' was delivered the moment the bot's turn ended"


async def test_empty_message_and_block_errors_surface_as_themselves(
    autojump_clock: trio.testing.MockClock,
) -> None:
    bot, _ = scripted_bot(reply("ok"))
    with pytest.raises(InputError, match="empty"):
        async with open_session(bot, started=START) as session:
            await session.send_user_message("   ")
    with pytest.raises(KeyError):
        async with open_session(bot, started=START):
            raise KeyError("not wrapped in an exception group")


async def test_an_existing_log_is_never_overwritten(
    autojump_clock: trio.testing.MockClock, tmp_path: Path
) -> None:
    log = tmp_path / "s.events.jsonl"
    log.write_text('{"type": "session"}\n')
    bot, _ = scripted_bot(reply("ok"))
    with pytest.raises(InputError, match="already exists"):
        async with open_session(bot, log_path=log, started=START):
            pass


async def test_pingpong_message_given_up_on_while_held_is_never_delivered(
    autojump_clock: trio.testing.MockClock,
) -> None:
    bot, _ = scripted_bot(reply("one", delay=2.0), reply("two", delay=2.0))
    sink = ListSink()
    async with open_session(bot, SessionSettings(mode="pingpong"), sink=sink, started=START) as s:
        await s.send_user_message("a")
        with trio.move_on_after(1.0):
            await s.send_user_message("never mind")  # held: the bot has not answered
        assert not s.is_idle
        await s.wait_idle()
        await s.send_user_message("b")
        await s.wait_idle()
    assert [text for _, _, text in chat_lines(sink.events)] == ["a", "one", "b", "two"]


async def test_closing_refuses_a_pingpong_message_still_held(
    autojump_clock: trio.testing.MockClock,
) -> None:
    bot, _ = scripted_bot(reply("too slow", delay=60.0))
    failures: list[BaseException] = []

    async def second(session: Session) -> None:
        try:
            await session.send_user_message("b")  # held until the bot answers "a"
        except SessionClosedError as error:
            failures.append(error)

    settings = SessionSettings(mode="pingpong")
    async with (
        trio.open_nursery() as nursery,
        open_session(bot, settings, started=START) as session,
    ):
        await session.send_user_message("a")
        nursery.start_soon(second, session)
        await trio.sleep(1.0)
    assert [m.text for m in session.messages] == ["a"]
    assert len(failures) == 1 and "before the message was taken" in str(failures[0])
