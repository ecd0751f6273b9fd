"""The burst rules as a state machine with no I/O: events in, actions and a deadline out.

:class:`BurstState` holds everything a chat session knows (the history, the partner's
unread messages, the call in flight, the planned reply messages, the ping-pong gate) and
applies method.md's burst rules to it. It never reads a clock, sleeps, or calls a model:
each input carries the time ``now`` (seconds on any monotonic clock, the same one for
every input), and each returns the actions the driver must carry out. The trio
:class:`~sdtt.engine.session.Session` drives it; a web server, a simulation on a virtual
time of its own, or a test can drive it the same way (wsproto's ``Connection`` is the
model).

Inputs (each returns a list of actions)::

    start(now)                       the session opened (starts the opening call, if any)
    user_message(now, text)          the partner wrote
    reply_ready(now, call, messages) the model answered call ``call``
    call_failed(now, call, kind, message)
                                     call ``call`` failed for good (after the model's retries)
    tick(now)                        the time in :attr:`next_deadline` has come
    withdraw(ticket)                 a held ping-pong message is taken back (its sender left)
    close(now)                       the session ends; everything left is accounted for

Actions: the session's events (:mod:`sdtt.engine.events`) to log and show in order,
among them ``typing_started`` (show typing), ``message_sent`` (deliver this message),
``message_dropped`` (a stale or unsent message that will never go out), and
:class:`CallModel` (ask the model for a reply to this history). After any input,
:attr:`next_deadline` is the next time :meth:`tick` must be called (``inf``: nothing is
timed; wait for the next input). It is never earlier than the last ``now``: whatever is
due is done before an input returns.

States (the state is the combination, not one label)::

    partner side   unread  -- user messages not yet shown to the model
                   held    -- ping-pong only: messages waiting for the bot's turn to end
    model side     idle | calling(call n, since, answering these unread)
    sender side    pending planned messages; the head may be typing

Rules:

- **Calling.** In burst mode the model is asked ``t1`` seconds after the first unread
  message (so the partner can finish a burst), with every message unread by then. When a
  call ends (answered or failed) and the partner wrote meanwhile, the next call starts at
  once (reason ``wrote_during_call``). Only one call is in flight at a time. With
  ``opening`` the first call starts when the session opens, before any message; what
  the partner wrote during it waits ``t1`` like any first message.
- **Sending.** A reply is scheduled by the pure planner (:mod:`sdtt.engine.schedule`);
  its arrival drops the unsent rest of every earlier reply (it was written with less of
  the conversation in view). The head of the queue shows typing at its ``typing_at``
  and is sent at its ``send_at``; messages go out strictly in queue order.
- **Ping-pong.** No ``t1`` wait; each reply is cut to one message. Once the partner's
  message is taken, the next one is held until the bot's message is sent (or the call
  fails, or the reply is empty), so the bot never writes twice in a row (unless it
  opened and the partner wrote during the opening call); after a failed call the
  partner may.
- **Stale replies.** A reply or failure for a call that is not the one in flight (a
  cancelled call, or one after :meth:`close`) is ignored.
- **Same instant.** When several things are due at one time: sends (and typing) first,
  then the held partner message, then the model call, so a call sees every message
  sent by then.
- **Idle** (:attr:`is_idle`) exactly when nothing is unread, held, being asked, planned
  or typed, and no opening call is still due.
"""

from __future__ import annotations

import math
import random
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal, Protocol

from sdtt.dialogue.condition import ChatMode as ChatMode  # the mode is a session setting
from sdtt.dialogue.message import Message
from sdtt.engine.events import (
    ErrorEvent,
    Event,
    MessageDropped,
    MessageSent,
    ModelCallFinished,
    ModelCallStarted,
    PlannedRecord,
    ReplyPlanned,
    SessionClosed,
    TypingStarted,
    TypingStopped,
    UserMessage,
)
from sdtt.engine.schedule import (
    CLOSED,
    Drop,
    PlannedMessage,
    PresetName,
    ReplyContext,
    call_seed,
    drop_all,
    drop_stale,
    intended_times,
    make_preset,
    plan_reply,
)
from sdtt.errors import InputError, SdttError
from sdtt.personas.timing import TimingProfile

CallReason = Literal["unread", "wrote_during_call", "opening"]


class SessionClosedError(SdttError):
    """A message was given to a session that has already closed."""


class BurstSettings(Protocol):
    """The settings the rules read (:class:`~sdtt.engine.session.SessionSettings` has them)."""

    @property
    def mode(self) -> ChatMode:
        """'burst' or 'pingpong'."""
        ...

    @property
    def t1(self) -> float:
        """Seconds to wait after the first unread message (burst mode)."""
        ...

    @property
    def delays(self) -> PresetName:
        """The typing-delay preset."""
        ...

    @property
    def timing(self) -> TimingProfile | None:
        """The persona's timing profile, for the 'fitted' preset."""
        ...

    @property
    def max_model_gap(self) -> float | None:
        """Model timestamps further ahead than this are replaced by the preset's."""
        ...

    @property
    def opening(self) -> bool:
        """This side writes first."""
        ...

    @property
    def seed(self) -> int:
        """Seeds every random draw."""
        ...

    @property
    def reply_limit(self) -> int:
        """Messages allowed per reply."""
        ...


@dataclass(frozen=True)
class CallModel:
    """Action: ask the model for the reply to ``history`` and report back with the result
    (:meth:`BurstState.reply_ready` or :meth:`BurstState.call_failed`, passing ``call``)."""

    call: int
    history: tuple[Message, ...]
    wall: datetime
    """The wall time the prompt calls "now" (whole seconds)."""
    seed: int

    def rng(self) -> random.Random:
        """The call's own random generator (independent of every other call's draws)."""
        return call_seed(self.seed, self.call, "reply")


Action = Event | CallModel


@dataclass(frozen=True)
class _Unread:
    at: float
    text: str


@dataclass(frozen=True)
class _InFlight:
    call: int
    reason: CallReason
    started: float
    wall: datetime
    read_text: str
    last_user_at: float | None


class BurstState:
    """One side's chat state under the burst rules (see the module docstring).

    ``origin`` is the time of session clock 0 on the caller's clock and ``started`` the
    wall time it maps to: events carry ``now - origin`` as their clock.
    """

    def __init__(self, settings: BurstSettings, *, started: datetime, origin: float = 0.0) -> None:
        self.settings = settings
        self.started = started
        self.origin = origin
        self.messages: list[Message] = []
        """The transcript so far: partner messages and sent replies, in order."""
        self.calls = 0
        """Model calls started."""
        self.errors = 0
        """Error events emitted."""
        self.out_of_character = 0
        """Messages the model's replies held that broke character (never sent)."""
        self.inputs = 0
        """Partner messages given to :meth:`user_message`."""
        self.discarded: set[int] = set()
        """Numbers of the partner messages still held when the session closed."""
        self.closed = False
        self._preset = make_preset(settings.delays, settings.timing)
        self._seq = 0
        self._held: deque[tuple[int, str]] = deque()
        self._unread: list[_Unread] = []
        self._calling: _InFlight | None = None
        self._opening_due = settings.opening
        self._rush_at: float | None = None
        """When the last call ended, if the partner wrote during it: call again then."""
        self._pending: list[PlannedMessage] = []
        self._typing: PlannedMessage | None = None
        self._awaiting_reply = False
        self._last_user_at: float | None = None
        self._last_sent_at: float | None = None
        self._out: list[Action] = []

    # ----------------------------------------------------------------- what it knows

    @property
    def is_idle(self) -> bool:
        """Nothing is unread, held, being asked, planned or typed, and no opening is due."""
        return not (
            self._held
            or self._unread
            or self._calling is not None
            or self._pending
            or self._opening_due
        )

    @property
    def calling(self) -> int | None:
        """The call in flight, if any."""
        return None if self._calling is None else self._calling.call

    @property
    def pending(self) -> list[PlannedMessage]:
        """Planned reply messages not yet sent, in sending order."""
        return list(self._pending)

    @property
    def held(self) -> int:
        """Ping-pong: partner messages waiting for the bot's turn to end."""
        return len(self._held)

    @property
    def next_deadline(self) -> float:
        """When :meth:`tick` must next be called (``inf``: only an input changes things)."""
        return min(self._send_due(), self._call_due())

    # ----------------------------------------------------------------- inputs

    def start(self, now: float) -> list[Action]:
        """The session opened: the opening call starts now when this side writes first."""
        self._check_open()
        if self._opening_due:
            self._opening_due = False
            self._start_call(now, "opening", [])
        return self._advance(now)

    def user_message(self, now: float, text: str) -> list[Action]:
        """The partner wrote ``text``, message number :attr:`inputs` from now on. In
        ping-pong mode it is held (no action yet) while the partner's previous message is
        unanswered; :meth:`holds` tells when it has joined the history."""
        self._check_open()
        if not text.strip():
            raise InputError("a chat message must not be empty.", field="text")
        self.inputs += 1
        self._held.append((self.inputs, text))
        return self._advance(now)

    def holds(self, ticket: int) -> bool:
        """Whether partner message number ``ticket`` is still held (ping-pong)."""
        return any(number == ticket for number, _ in self._held)

    def withdraw(self, ticket: int) -> bool:
        """Take back held partner message number ``ticket`` (its sender gave up waiting);
        True if it was still held, False if it had already joined the history."""
        for item in self._held:
            if item[0] == ticket:
                self._held.remove(item)
                return True
        return False

    def reply_ready(
        self,
        now: float,
        call: int,
        messages: Sequence[Message],
        *,
        attempts: int = 0,
        input_tokens: int = 0,
        cached_input_tokens: int | None = 0,
        output_tokens: int = 0,
        out_of_character: int = 0,
    ) -> list[Action]:
        """Call ``call`` returned ``messages`` (their times are the model's wishes), after
        attempts whose ``out_of_character`` messages broke character."""
        flight = self._finish_call(now, call)
        if flight is None:
            return []
        self.out_of_character += out_of_character
        self._out.append(
            ModelCallFinished(
                **self._stamp(now),
                call=call,
                ok=True,
                latency=now - flight.started,
                attempts=attempts,
                input_tokens=input_tokens,
                cached_input_tokens=cached_input_tokens,
                output_tokens=output_tokens,
                messages=len(messages),
                out_of_character=out_of_character,
            )
        )
        kept, dropped = drop_stale(self._pending, new_call=call)
        self._pending = kept
        self._drop(now, dropped)
        context = ReplyContext(
            call=call,
            call_started=flight.started,
            reply_ready=now,
            last_user_at=flight.last_user_at,
            last_sent_at=self._last_sent_at,
            read_text=flight.read_text,
        )
        intended = intended_times(
            [message.time for message in messages],
            call_wall=flight.wall,
            context=context,
            max_gap=self.settings.max_model_gap,
        )
        planned = plan_reply(
            [message.text for message in messages],
            context,
            self._preset,
            call_seed(self.settings.seed, call, "plan"),
            intended=intended,
            max_messages=self.settings.reply_limit,
        )
        self._pending.extend(planned)
        self._out.append(
            ReplyPlanned(
                **self._stamp(now),
                call=call,
                messages=[
                    PlannedRecord(
                        index=p.index,
                        text=p.text,
                        typing_at=p.typing_at - self.origin,
                        send_at=p.send_at - self.origin,
                    )
                    for p in planned
                ],
            )
        )
        if not planned:
            # Nothing will be sent: the turn passes back rather than holding the partner.
            self._awaiting_reply = False
        return self._advance(now)

    def call_failed(
        self,
        now: float,
        call: int,
        kind: str,
        message: str,
        *,
        attempts: int = 0,
        out_of_character: int = 0,
    ) -> list[Action]:
        """Call ``call`` failed with an error of class ``kind`` after ``attempts`` provider
        calls (0: unknown), its replies holding ``out_of_character`` messages that broke
        character; the session carries on (``message`` must already be free of secrets)."""
        flight = self._finish_call(now, call)
        if flight is None:
            return []
        self.errors += 1
        self.out_of_character += out_of_character
        if self.settings.mode == "pingpong":
            self._awaiting_reply = False
        self._out.append(
            ModelCallFinished(
                **self._stamp(now),
                call=call,
                ok=False,
                latency=now - flight.started,
                attempts=attempts,
                # A failed call reports no usage: what a cache served is unknown, not 0.
                cached_input_tokens=None,
                error=kind,
                out_of_character=out_of_character,
            )
        )
        self._out.append(ErrorEvent(**self._stamp(now), call=call, kind=kind, message=message))
        return self._advance(now)

    def tick(self, now: float) -> list[Action]:
        """Do whatever is due by ``now`` (call it at :attr:`next_deadline`)."""
        if self.closed:
            return []
        return self._advance(now)

    def close(self, now: float) -> list[Action]:
        """End the session: unsent messages are dropped, a call in flight ends unfinished,
        held partner messages are discarded (never taken). Closing twice does nothing."""
        if self.closed:
            return []
        self.closed = True
        self.discarded.update(number for number, _ in self._held)
        self._held.clear()
        pending, self._pending = self._pending, []
        self._drop(now, drop_all(pending, CLOSED))
        if self._calling is not None:
            flight, self._calling = self._calling, None
            # Cut off in flight: how many attempts it made and what a cache served are
            # unknown (None), not 0.
            self._out.append(
                ModelCallFinished(
                    **self._stamp(now),
                    call=flight.call,
                    ok=False,
                    latency=now - flight.started,
                    attempts=None,
                    cached_input_tokens=None,
                    error="Cancelled",
                )
            )
        self._unread.clear()
        self._opening_due = False
        self._out.append(
            SessionClosed(
                **self._stamp(now),
                messages=len(self.messages),
                calls=self.calls,
                errors=self.errors,
            )
        )
        return self._flush()

    # ----------------------------------------------------------------- the rules

    def _check_open(self) -> None:
        if self.closed:
            raise SessionClosedError("The chat session has closed; start a new one.")

    def _wall(self, now: float) -> datetime:
        return self.started + timedelta(seconds=now - self.origin)

    def _send_due(self) -> float:
        if not self._pending:
            return math.inf
        head = self._pending[0]
        return head.send_at if self._typing is head else head.typing_at

    def _gate_open(self) -> bool:
        return not (self.settings.mode == "pingpong" and self._awaiting_reply)

    def _call_due(self) -> float:
        if self._calling is not None or not self._unread or self.closed:
            return math.inf
        if self._rush_at is not None:
            return self._rush_at
        if self.settings.mode == "pingpong":
            return self._unread[0].at
        return self._unread[0].at + self.settings.t1

    def _advance(self, now: float) -> list[Action]:
        while True:
            if self._send_due() <= now:
                self._send_step(now)
            elif self._held and self._gate_open():
                self._take(now, self._held.popleft()[1])
            elif self._call_due() <= now:
                reason: CallReason = "unread" if self._rush_at is None else "wrote_during_call"
                unread, self._unread = self._unread, []
                self._start_call(now, reason, unread)
            else:
                return self._flush()

    def _take(self, now: float, text: str) -> None:
        wall = self._wall(now)
        message = Message(side="user", text=text, time=wall)
        self.messages.append(message)
        self._last_user_at = now
        self._awaiting_reply = True
        self._unread.append(_Unread(now, text))
        self._out.append(UserMessage(**self._stamp(now), text=text, time=message.time))

    def _start_call(self, now: float, reason: CallReason, unread: list[_Unread]) -> None:
        self.calls += 1
        self._rush_at = None
        flight = _InFlight(
            call=self.calls,
            reason=reason,
            started=now,
            wall=self._wall(now).replace(microsecond=0),
            read_text="\n".join(item.text for item in unread),
            last_user_at=self._last_user_at,
        )
        self._calling = flight
        history = tuple(self.messages)
        self._out.append(
            ModelCallStarted(
                **self._stamp(now),
                call=flight.call,
                reason=reason,
                history=len(history),
                unread=len(unread),
            )
        )
        self._out.append(CallModel(flight.call, history, flight.wall, self.settings.seed))

    def _finish_call(self, now: float, call: int) -> _InFlight | None:
        flight = self._calling
        if self.closed or flight is None or flight.call != call:
            return None
        self._calling = None
        # What the partner wrote during a call is answered at once; not so after the
        # opening call, whose unread messages wait for t1 like any first message.
        if self._unread and flight.reason != "opening":
            self._rush_at = now
        return flight

    def _send_step(self, now: float) -> None:
        head = self._pending[0]
        if self._typing is not head:
            self._typing = head
            self._out.append(TypingStarted(**self._stamp(now), call=head.call, index=head.index))
            return
        self._pending.pop(0)
        self._typing = None
        message = Message(side="response", text=head.text, time=self._wall(now))
        self.messages.append(message)
        self._last_sent_at = now
        if self.settings.mode == "pingpong":
            self._awaiting_reply = False
        self._out.append(
            TypingStopped(**self._stamp(now), call=head.call, index=head.index, reason="sent")
        )
        self._out.append(
            MessageSent(
                **self._stamp(now),
                call=head.call,
                index=head.index,
                text=head.text,
                time=message.time,
                scheduled=head.send_at - self.origin,
                lateness=now - head.send_at,
            )
        )

    def _drop(self, now: float, drops: Sequence[Drop]) -> None:
        for drop in drops:
            message = drop.message
            if self._typing is message:
                self._typing = None
                self._out.append(
                    TypingStopped(
                        **self._stamp(now), call=message.call, index=message.index, reason="dropped"
                    )
                )
            self._out.append(
                MessageDropped(
                    **self._stamp(now),
                    call=message.call,
                    index=message.index,
                    text=message.text,
                    reason=drop.reason,
                )
            )

    def _stamp(self, now: float) -> dict[str, Any]:
        self._seq += 1
        return {"seq": self._seq, "clock": now - self.origin, "wall": self._wall(now)}

    def _flush(self) -> list[Action]:
        out, self._out = self._out, []
        return out
