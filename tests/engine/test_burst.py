"""The burst rules as a state machine, tested without an event loop: inputs and times in,
events, model calls and deadlines out."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdtt.dialogue.message import Message
from sdtt.engine.burst import Action, BurstState, CallModel, SessionClosedError
from sdtt.engine.events import (
    Event,
    MessageDropped,
    MessageSent,
    ModelCallStarted,
    ReplyPlanned,
    SessionClosed,
    TypingStarted,
    UserMessage,
)
from sdtt.engine.schedule import CLOSED, SUPERSEDED
from sdtt.engine.session import SessionSettings
from sdtt.errors import InputError
from tests.engine.helpers import START


def bot_messages(call: CallModel, *texts: str) -> list[Message]:
    """A reply with no usable model times: the delay preset decides."""
    return [Message(side="response", text=text, time=call.wall) for text in texts]


def only(actions: list[Action], kind: type) -> list:  # type: ignore[type-arg]
    return [action for action in actions if isinstance(action, kind)]


def test_a_burst_is_answered_t1_after_its_first_message_with_all_of_it() -> None:
    state = BurstState(SessionSettings(t1=3.0), started=START)
    assert state.start(0.0) == []
    assert state.is_idle and state.next_deadline == math.inf
    (user,) = state.user_message(0.0, "so")
    assert isinstance(user, UserMessage) and user.text == "so"
    assert not state.is_idle
    assert state.next_deadline == 3.0
    state.user_message(2.0, "guess what")
    assert state.next_deadline == 3.0, "a later message of the burst does not move t1"
    started, call = state.tick(3.0)
    assert isinstance(started, ModelCallStarted) and isinstance(call, CallModel)
    assert (started.reason, started.unread, started.history) == ("unread", 2, 2)
    assert [m.text for m in call.history] == ["so", "guess what"]
    assert call.wall == START + timedelta(seconds=3)
    assert state.next_deadline == math.inf, "nothing is timed while the model thinks"


def test_a_reply_is_typed_then_sent_at_its_deadlines() -> None:
    state = BurstState(SessionSettings(t1=1.0, seed=4), started=START)
    state.user_message(0.0, "hi")
    (_, call) = state.tick(1.0)
    assert isinstance(call, CallModel)
    actions = state.reply_ready(3.0, call.call, bot_messages(call, "hey there"))
    (plan,) = only(actions, ReplyPlanned)
    (planned,) = plan.messages
    assert state.next_deadline == planned.typing_at > 3.0 or planned.typing_at == 3.0
    typing = state.tick(max(planned.typing_at, 3.0))
    assert [type(a) for a in typing] in ([TypingStarted], [])
    sent = only(state.tick(planned.send_at), MessageSent)
    assert [(e.text, e.clock, e.lateness) for e in sent] == [("hey there", planned.send_at, 0.0)]
    assert state.is_idle and [m.text for m in state.messages] == ["hi", "hey there"]


def test_writing_during_a_call_calls_again_at_once_and_drops_the_old_rest() -> None:
    # A seed whose typing delays type the long message only after the second call.
    state = BurstState(SessionSettings(t1=3.0, seed=9), started=START)
    state.user_message(0.0, "question")
    (_, first) = state.tick(3.0)
    state.user_message(4.0, "oh and another thing")
    assert state.next_deadline == math.inf, "no second call while one is in flight"
    long = "a long message that takes a good while to type out"
    actions = state.reply_ready(5.0, first.call, bot_messages(first, "sure", long))
    calls = only(actions, ModelCallStarted)
    assert [(c.clock, c.reason, c.unread) for c in calls] == [(5.0, "wrote_during_call", 1)]
    (second,) = only(actions, CallModel)
    # "sure" was due before the reply came: it goes out at once, before the second call,
    # which sees it.
    assert [e.text for e in only(actions, MessageSent)] == ["sure"]
    assert [m.text for m in second.history][-2:] == ["oh and another thing", "sure"]
    now = state.next_deadline
    assert [type(a) for a in state.tick(now)] == [TypingStarted]
    actions = state.reply_ready(now, second.call, bot_messages(second, "wait what"))
    dropped = only(actions, MessageDropped)
    assert [(e.text, e.reason) for e in dropped] == [(long, SUPERSEDED)]


def test_a_reply_for_a_call_not_in_flight_is_ignored() -> None:
    state = BurstState(SessionSettings(t1=0.0), started=START)
    (_, _, call) = state.user_message(0.0, "hi")
    assert isinstance(call, CallModel), "t1 = 0: the call starts with the message"
    assert state.reply_ready(1.0, call.call + 1, bot_messages(call, "from nowhere")) == []
    assert state.call_failed(1.0, call.call + 1, "ServerError", "no") == []
    assert state.calling == call.call
    state.close(2.0)
    assert state.reply_ready(3.0, call.call, bot_messages(call, "too late")) == []
    assert [m.text for m in state.messages] == ["hi"]


def test_pingpong_holds_the_partner_until_the_bot_has_answered() -> None:
    state = BurstState(SessionSettings(mode="pingpong", t1=3.0), started=START)
    (call,) = only(state.user_message(0.0, "a"), CallModel)
    assert state.user_message(1.0, "b") == [], "held: the bot's turn is not over"
    assert state.holds(2) and not state.is_idle
    actions = state.reply_ready(2.0, call.call, bot_messages(call, "one", "two"))
    events: list[Action] = list(actions)
    while state.next_deadline < math.inf:
        events += state.tick(state.next_deadline)
    lines = [(type(e).__name__, getattr(e, "text", "")) for e in events]
    sent_at = next(e.clock for e in events if isinstance(e, MessageSent))
    user_b = next(e for e in events if isinstance(e, UserMessage))
    assert ("MessageSent", "two") not in lines, "one message per reply in ping-pong"
    assert user_b.text == "b" and user_b.clock == sent_at
    assert not state.holds(2)


def test_pingpong_failure_or_empty_reply_passes_the_turn_back() -> None:
    state = BurstState(SessionSettings(mode="pingpong"), started=START)
    (call,) = only(state.user_message(0.0, "a"), CallModel)
    state.user_message(0.5, "b")
    actions = state.call_failed(1.0, call.call, "ServerError", "boom")
    assert [type(a).__name__ for a in actions] == [
        "ModelCallFinished",
        "ErrorEvent",
        "UserMessage",
        "ModelCallStarted",
        "CallModel",
    ]
    assert state.errors == 1
    (call,) = only(actions, CallModel)
    state.user_message(1.5, "c")
    actions = state.reply_ready(2.0, call.call, [])
    assert [a.text for a in only(actions, UserMessage)] == ["c"], "an empty reply ends the turn"


def test_the_opening_call_starts_at_once_and_its_unread_waits_t1() -> None:
    state = BurstState(SessionSettings(opening=True, t1=3.0), started=START)
    assert not state.is_idle
    (started, call) = state.start(0.0)
    assert isinstance(started, ModelCallStarted) and started.reason == "opening"
    state.user_message(1.0, "hello?")
    actions = state.reply_ready(2.0, call.call, bot_messages(call, "hi!"))
    assert not only(actions, ModelCallStarted)
    assert state.next_deadline <= 4.0


def test_closing_drops_what_is_pending_and_discards_held_messages() -> None:
    state = BurstState(SessionSettings(mode="pingpong"), started=START)
    (call,) = only(state.user_message(0.0, "a"), CallModel)
    state.user_message(0.5, "b")
    state.reply_ready(1.0, call.call, bot_messages(call, "a reply that takes time"))
    actions = state.close(1.5)
    assert [type(a).__name__ for a in actions][-2:] == ["MessageDropped", "SessionClosed"]
    assert only(actions, MessageDropped)[0].reason == CLOSED
    assert state.discarded == {2} and state.is_idle
    assert state.close(2.0) == []
    with pytest.raises(SessionClosedError):
        state.user_message(3.0, "anyone?")


def test_an_empty_message_is_refused_and_changes_nothing() -> None:
    state = BurstState(SessionSettings(), started=START)
    with pytest.raises(InputError, match="empty"):
        state.user_message(0.0, "  ")
    assert state.is_idle and state.inputs == 0


# ----------------------------------------------------------------- random event sequences

Step = tuple[Literal["user", "wait", "reply", "fail", "stale"], float, int]


@dataclass
class Run:
    """Drives a state through a list of steps exactly on time, recording everything."""

    state: BurstState
    now: float = 0.0
    events: list[Event] = field(default_factory=list)
    calls: list[tuple[int, CallModel]] = field(default_factory=list)
    """Each model call with the number of events logged before it."""
    said: list[str] = field(default_factory=list)

    def take(self, actions: list[Action]) -> None:
        for action in actions:
            if isinstance(action, CallModel):
                self.calls.append((len(self.events), action))
            else:
                self.events.append(action)
        deadline = self.state.next_deadline
        assert deadline > self.now, "whatever is due is done before an input returns"
        idle = deadline == math.inf and self.state.calling is None and not self.state.held
        assert self.state.is_idle == idle, "idle exactly when nothing is pending"

    def until(self, when: float) -> None:
        while self.state.next_deadline <= when:
            deadline = self.state.next_deadline
            assert deadline >= self.now, "deadlines are never in the past"
            self.now = deadline
            self.take(self.state.tick(deadline))
        self.now = when

    def reply(self, count: int) -> None:
        call = self.state.calling
        if call is None:
            return
        _, asked = next(c for c in self.calls if c[1].call == call)
        texts = [f"r{call}.{i}" for i in range(count)]
        times = [asked.wall + timedelta(seconds=3 * i * (count % 2)) for i in range(count)]
        messages = [
            Message(side="response", text=t, time=w) for t, w in zip(texts, times, strict=True)
        ]
        self.take(self.state.reply_ready(self.now, call, messages))

    def step(self, kind: str, gap: float, number: int) -> None:
        self.until(self.now + gap)
        if kind == "user":
            text = f"u{len(self.said)}"
            self.said.append(text)
            self.take(self.state.user_message(self.now, text))
        elif kind == "reply":
            self.reply(number)
        elif kind == "fail" and self.state.calling is not None:
            self.take(self.state.call_failed(self.now, self.state.calling, "ServerError", "x"))
        elif kind == "stale":
            assert self.state.reply_ready(self.now, self.state.calls + 1 + number, []) == []

    def drain(self) -> None:
        """Answer every call until nothing is left to do."""
        for _ in range(1000):
            if self.state.calling is not None:
                self.reply(1)
            elif self.state.next_deadline < math.inf:
                self.until(self.state.next_deadline)
            else:
                return
        raise AssertionError("the chat never came to rest")


steps = st.lists(
    st.tuples(
        st.sampled_from(["user", "user", "wait", "reply", "fail", "stale"]),
        st.floats(min_value=0.0, max_value=20.0).map(lambda x: round(x, 1)),
        st.integers(min_value=0, max_value=4),
    ),
    max_size=40,
)


@given(
    steps=steps,
    mode=st.sampled_from(["burst", "pingpong"]),
    opening=st.booleans(),
    t1=st.sampled_from([0.0, 1.5, 3.0]),
    delays=st.sampled_from(["paper", "jones-bergen"]),
    seed=st.integers(min_value=0, max_value=3),
    close_early=st.booleans(),
)
def test_random_chats_keep_the_burst_invariants(
    steps: list[Step],
    mode: Literal["burst", "pingpong"],
    opening: bool,
    t1: float,
    delays: Literal["paper", "jones-bergen"],
    seed: int,
    close_early: bool,
) -> None:
    settings = SessionSettings(mode=mode, opening=opening, t1=t1, delays=delays, seed=seed)
    run = Run(BurstState(settings, started=START))
    run.take(run.state.start(0.0))
    for kind, gap, number in steps:
        run.step(kind, gap, number)
    if not close_early:
        run.drain()
        assert run.state.is_idle
    run.take(run.state.close(run.now))
    events = run.events
    assert isinstance(events[-1], SessionClosed)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert all(a.clock <= b.clock for a, b in itertools.pairwise(events))

    # Bot messages go out in order, on time, never after a newer reply made them stale.
    sent = [e for e in events if isinstance(e, MessageSent)]
    assert [(e.call, e.index) for e in sent] == sorted({(e.call, e.index) for e in sent})
    assert all(e.lateness == 0.0 for e in sent)
    newest_plan = 0
    for event in events:
        if isinstance(event, ReplyPlanned):
            newest_plan = event.call
        elif isinstance(event, MessageSent):
            assert event.call == newest_plan, "a stale reply was delivered"

    # No partner message is lost: each is taken in order, or was still held at close.
    taken = [e.text for e in events if isinstance(e, UserMessage)]
    assert taken == run.said[: len(taken)]
    assert len(taken) + len(run.state.discarded) == len(run.said)
    transcript = [m.text for m in run.state.messages]
    assert transcript == [e.text for e in events if isinstance(e, UserMessage | MessageSent)]
    if not close_early:
        # ... and every taken message is in the history a later call saw.
        for text in taken:
            at = next(i for i, e in enumerate(events) if getattr(e, "text", None) == text)
            assert any(
                position > at and text in [m.text for m in call.history]
                for position, call in run.calls
            ), f"{text} never reached the model"

    if mode == "pingpong" and not opening:
        sides = "".join(
            "U" if isinstance(e, UserMessage) else "B"
            for e in events
            if isinstance(e, UserMessage | MessageSent)
        )
        assert "BB" not in sides, "the bot wrote twice in a row in ping-pong"
