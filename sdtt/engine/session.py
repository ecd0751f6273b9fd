"""A live chat session on trio: Input Listener, Model Caller and Output Sender.

::

    async with open_session(bot, SessionSettings(mode="burst"), sink=ui) as session:
        await session.send_user_message("hey")
        ...

The session owns a nursery with three tasks joined by memory channels (method.md,
"Burst engine"):

- the **Input Listener** takes the partner's messages, stamps them, adds them to the
  history and passes them on as unread;
- the **Model Caller** waits ``t1`` after the first unread message (so the partner can
  finish a burst), then asks the bot with the whole history. When a call returns and the
  partner wrote meanwhile, it calls again at once; otherwise it waits for the next
  message. A model failure (after the model's own retries) becomes an ``error`` event
  and the session carries on: the next message triggers a new call;
- the **Output Sender** schedules each reply with the pure planner
  (:mod:`sdtt.engine.schedule`), drops the unsent rest of the previous reply when a new
  one arrives, shows typing, and sends each message when it is due. A sent message's
  timestamp is its real send time on the session clock, mapped onto ``started``; the
  times the model wrote only decide the schedule. Build a
  :class:`~sdtt.personas.bot.PersonaBot` for a session with
  ``resample=planner.preset_decides``, so a timestamp the model left out is timed by
  the delay preset alone.

Only trio's clock is read, so under ``trio.testing.MockClock`` (pytest-trio's
``autojump_clock``) a session runs hours of chat in milliseconds, exactly.

**Ping-pong mode**: one message per side per turn, no ``t1`` wait (a turn has only one
partner message to wait for), and every reply is cut to one message. While the partner's
message awaits its answer, :meth:`Session.send_user_message` waits for the bot's turn to
end before delivering the next one, so the bot never sends two messages in a row. If the
call fails, the turn passes back to the partner (whose next message is then the second of
the run: the only way a side can write twice in a row in ping-pong).

**Closing**: leaving the ``async with`` block cancels the tasks. A message being typed or
waiting to be sent is not sent: it is logged as ``message_dropped`` (reason "session
closed"), so the transcript, the log and its replay agree. A call in flight ends as a
``model_call_finished`` event with ``ok=False``.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal, Protocol

import trio
from pydantic import BaseModel, ConfigDict, Field

from sdtt.dialogue.message import Message, Transcript
from sdtt.dialogue.store import TranscriptWriter
from sdtt.engine.events import (
    ErrorEvent,
    Event,
    EventLog,
    EventSink,
    MessageDropped,
    MessageSent,
    ModelCallFinished,
    ModelCallStarted,
    PlannedRecord,
    ReplyPlanned,
    SessionClosed,
    SessionHeader,
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
from sdtt.errors import InputError, ModelError, SdttError
from sdtt.models.base import Usage
from sdtt.personas.bot import BotReply
from sdtt.personas.timing import TimingProfile
from sdtt.redact import redact_text

Mode = Literal["burst", "pingpong"]
UNREAD_BUFFER = 1000
"""Partner messages that may wait unread before the listener pauses."""


class SessionClosedError(SdttError):
    """A message was given to a session that has already closed."""


class Replier(Protocol):
    """What a session asks for replies (a :class:`sdtt.personas.bot.PersonaBot`)."""

    async def reply(
        self, dialogue: Sequence[Message], now: datetime, rng: random.Random
    ) -> BotReply:
        """The next messages after ``dialogue``; ``now`` is the wall time of the request."""
        ...


class SessionSettings(BaseModel):
    """How a session behaves. Written into the event log's header."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: Mode = Field(default="burst", description="'burst' or 'pingpong'.")
    t1: float = Field(
        default=3.0,
        ge=0,
        description="Seconds to wait after the first unread partner message before calling "
        "the model, so a burst can finish (burst mode only).",
    )
    delays: PresetName = Field(default="paper", description="Typing-delay preset.")
    timing: TimingProfile | None = Field(
        default=None, description="The persona's timing profile for the 'fitted' preset."
    )
    max_messages: int = Field(default=5, ge=1, description="Most messages sent per reply.")
    max_model_gap: float | None = Field(
        default=120.0,
        ge=0,
        description="A timestamp the model wrote more than this many seconds after the "
        "previous message is replaced by the delay preset's time.",
    )
    opening: bool = Field(
        default=False, description="This side writes first, without waiting for a message."
    )
    seed: int = Field(default=0, description="Seeds every random draw of the session.")

    @property
    def reply_limit(self) -> int:
        """Messages allowed per reply: one in ping-pong mode."""
        return 1 if self.mode == "pingpong" else self.max_messages


@dataclass(frozen=True)
class _Draft:
    """A reply on its way from the caller to the sender."""

    call: int
    call_started: float
    call_wall: datetime
    messages: list[Message]
    read_text: str
    last_user_at: float | None


class Session:
    """A running chat session; get one from :func:`open_session`."""

    def __init__(
        self,
        bot: Replier,
        settings: SessionSettings,
        *,
        session_id: str,
        topic: str | None,
        meta: Mapping[str, Any],
        started: datetime,
        sink: EventSink | None,
        log: EventLog | None,
        writer: TranscriptWriter | None,
    ) -> None:
        self.bot = bot
        self.settings = settings
        self.id = session_id
        self.topic = topic
        self.meta = dict(meta)
        self.started = started
        """Wall time of session clock 0."""
        self.usage = Usage()
        """Tokens of every successful call."""
        self._sink = sink
        self._log = log
        self._writer = writer
        self._preset = make_preset(settings.delays, settings.timing)
        self._origin = trio.current_time()
        self._seq = 0
        self._messages: list[Message] = []
        self._input_send, self._input_recv = trio.open_memory_channel[str](0)
        self._unread_send, self._unread_recv = trio.open_memory_channel[tuple[float, str]](
            UNREAD_BUFFER
        )
        self._reply_send, self._reply_recv = trio.open_memory_channel[_Draft](1)
        self._pending: list[PlannedMessage] = []
        self._typing: PlannedMessage | None = None
        self._calling: int | None = None
        self._calls = 0
        self._errors = 0
        self._incoming = 0
        self._unread = 0
        self._undelivered = 0
        self._opening_due = settings.opening
        self._last_user_at: float | None = None
        self._last_sent_at: float | None = None
        self._awaiting_reply = False
        self._changed = trio.Event()
        self._closed = False

    # ----------------------------------------------------------------- public API

    @property
    def transcript(self) -> Transcript:
        """The conversation so far: partner messages and sent replies, in order."""
        return Transcript(
            id=self.id, topic=self.topic, messages=list(self._messages), meta=dict(self.meta)
        )

    @property
    def messages(self) -> list[Message]:
        """A copy of the messages so far."""
        return list(self._messages)

    @property
    def calls(self) -> int:
        """Model calls started so far."""
        return self._calls

    @property
    def errors(self) -> int:
        """Error events so far."""
        return self._errors

    @property
    def clock(self) -> float:
        """Seconds since the session opened."""
        return trio.current_time() - self._origin

    @property
    def is_idle(self) -> bool:
        """Nothing is unread, being asked, planned or typed, and no message is waiting."""
        return not (
            self._pending
            or self._opening_due
            or self._calling is not None
            or self._incoming
            or self._unread
            or self._undelivered
        )

    async def send_user_message(self, text: str) -> None:
        """Deliver a message from the partner (side A).

        Returns once the listener took it. In ping-pong mode that waits while the
        partner's previous message is still unanswered. Raises
        :class:`SessionClosedError` when the session has closed.
        """
        if not text.strip():
            raise InputError("a chat message must not be empty.", field="text")
        if self._closed:
            raise SessionClosedError("The chat session has closed; start a new one.")
        # Counted until the listener has recorded it (it decrements), so is_idle never
        # misses a message handed over but not yet processed.
        self._incoming += 1
        try:
            await self._input_send.send(text)
        except BaseException as error:
            self._incoming -= 1
            if isinstance(error, trio.BrokenResourceError | trio.ClosedResourceError):
                raise SessionClosedError(
                    "The chat session closed before the message was taken."
                ) from None
            raise

    async def wait_idle(self) -> None:
        """Wait until :attr:`is_idle`: every message answered and every reply sent."""
        while not self.is_idle:
            await self._changed.wait()

    async def wait_changed(self) -> None:
        """Wait for the next event of this session."""
        await self._changed.wait()

    # ----------------------------------------------------------------- plumbing

    def _wall(self, clock: float) -> datetime:
        return self.started + timedelta(seconds=clock - self._origin)

    def _stamp(self) -> dict[str, Any]:
        now = trio.current_time()
        self._seq += 1
        return {"seq": self._seq, "clock": now - self._origin, "wall": self._wall(now)}

    def _emit(self, event: Event) -> None:
        if self._log is not None:
            self._log.emit(event)
        if self._sink is not None:
            self._sink.emit(event)
        changed, self._changed = self._changed, trio.Event()
        changed.set()

    def _record(self, message: Message) -> None:
        self._messages.append(message)
        if self._writer is not None:
            self._writer.add(message)

    # ----------------------------------------------------------------- Input Listener

    async def _listen(self) -> None:
        while True:
            if self.settings.mode == "pingpong":
                while self._awaiting_reply:
                    await self._changed.wait()
            text = await self._input_recv.receive()
            now = trio.current_time()
            message = Message(side="user", text=text, time=self._wall(now))
            self._record(message)
            self._last_user_at = now
            self._awaiting_reply = True
            self._unread += 1
            self._incoming -= 1
            self._emit(UserMessage(**self._stamp(), text=text, time=message.time))
            await self._unread_send.send((now, text))

    # ----------------------------------------------------------------- Model Caller

    async def _call_loop(self) -> None:
        if self.settings.opening:
            await self._call("opening", [])
        again = False
        while True:
            unread: list[tuple[float, str]] = []
            if again:
                reason: Literal["unread", "wrote_during_call"] = "wrote_during_call"
            else:
                reason = "unread"
                first = await self._unread_recv.receive()
                unread.append(first)
                if self.settings.mode == "burst":
                    await trio.sleep_until(first[0] + self.settings.t1)
            if self.settings.mode == "burst":
                while True:
                    try:
                        unread.append(self._unread_recv.receive_nowait())
                    except trio.WouldBlock:
                        break
            await self._call(reason, unread)
            again = self._unread_recv.statistics().current_buffer_used > 0

    async def _call(
        self,
        reason: Literal["unread", "wrote_during_call", "opening"],
        unread: list[tuple[float, str]],
    ) -> None:
        self._calls += 1
        call = self._calls
        started = trio.current_time()
        call_wall = self._wall(started).replace(microsecond=0)
        history = list(self._messages)
        answered_at = self._last_user_at
        self._calling = call
        self._opening_due = False
        self._unread -= len(unread)
        self._emit(
            ModelCallStarted(
                **self._stamp(), call=call, reason=reason, history=len(history), unread=len(unread)
            )
        )
        try:
            reply = await self.bot.reply(
                history, call_wall, call_seed(self.settings.seed, call, "reply")
            )
        except ModelError as error:
            self._calling = None
            self._errors += 1
            if self.settings.mode == "pingpong":
                self._awaiting_reply = False
            self._emit(
                ModelCallFinished(
                    **self._stamp(),
                    call=call,
                    ok=False,
                    latency=trio.current_time() - started,
                    error=type(error).__name__,
                )
            )
            self._emit(
                ErrorEvent(
                    **self._stamp(),
                    call=call,
                    kind=type(error).__name__,
                    message=redact_text(str(error)),
                )
            )
            return
        usage = sum((output.usage for output in reply.outputs), Usage())
        self.usage = self.usage + usage
        self._undelivered += 1
        self._calling = None
        self._emit(
            ModelCallFinished(
                **self._stamp(),
                call=call,
                ok=True,
                latency=trio.current_time() - started,
                attempts=sum(output.attempts for output in reply.outputs),
                input_tokens=usage.input_tokens,
                cached_input_tokens=usage.cached_input_tokens,
                output_tokens=usage.output_tokens,
                messages=len(reply.messages),
            )
        )
        await self._reply_send.send(
            _Draft(
                call=call,
                call_started=started,
                call_wall=call_wall,
                messages=reply.messages,
                read_text="\n".join(text for _, text in unread),
                last_user_at=answered_at,
            )
        )

    # ----------------------------------------------------------------- Output Sender

    async def _send_loop(self) -> None:
        while True:
            with trio.move_on_at(self._next_due()):
                draft = await self._reply_recv.receive()
                self._accept(draft)
                continue
            self._act(trio.current_time())

    def _next_due(self) -> float:
        if not self._pending:
            return float("inf")
        head = self._pending[0]
        return head.send_at if self._typing is head else head.typing_at

    def _accept(self, draft: _Draft) -> None:
        now = trio.current_time()
        self._undelivered -= 1
        kept, dropped = drop_stale(self._pending, new_call=draft.call)
        self._pending = kept
        self._drop(dropped)
        context = ReplyContext(
            call=draft.call,
            call_started=draft.call_started,
            reply_ready=now,
            last_user_at=draft.last_user_at,
            last_sent_at=self._last_sent_at,
            read_text=draft.read_text,
        )
        intended = intended_times(
            [message.time for message in draft.messages],
            call_wall=draft.call_wall,
            context=context,
            max_gap=self.settings.max_model_gap,
        )
        planned = plan_reply(
            [message.text for message in draft.messages],
            context,
            self._preset,
            call_seed(self.settings.seed, draft.call, "plan"),
            intended=intended,
            max_messages=self.settings.reply_limit,
        )
        self._pending.extend(planned)
        self._emit(
            ReplyPlanned(
                **self._stamp(),
                call=draft.call,
                messages=[
                    PlannedRecord(
                        index=p.index,
                        text=p.text,
                        typing_at=p.typing_at - self._origin,
                        send_at=p.send_at - self._origin,
                    )
                    for p in planned
                ],
            )
        )

    def _act(self, now: float) -> None:
        while self._pending:
            head = self._pending[0]
            if self._typing is not head:
                if head.typing_at > now:
                    return
                self._typing = head
                self._emit(TypingStarted(**self._stamp(), call=head.call, index=head.index))
            if head.send_at > now:
                return
            self._send(head, now)

    def _send(self, planned: PlannedMessage, now: float) -> None:
        self._pending.pop(0)
        self._typing = None
        message = Message(side="response", text=planned.text, time=self._wall(now))
        self._record(message)
        self._last_sent_at = now
        if self.settings.mode == "pingpong":
            self._awaiting_reply = False
        self._emit(
            TypingStopped(**self._stamp(), call=planned.call, index=planned.index, reason="sent")
        )
        self._emit(
            MessageSent(
                **self._stamp(),
                call=planned.call,
                index=planned.index,
                text=planned.text,
                time=message.time,
                scheduled=planned.send_at - self._origin,
                lateness=now - planned.send_at,
            )
        )

    def _drop(self, drops: Sequence[Drop]) -> None:
        for drop in drops:
            message = drop.message
            if self._typing is message:
                self._typing = None
                self._emit(
                    TypingStopped(
                        **self._stamp(), call=message.call, index=message.index, reason="dropped"
                    )
                )
            self._emit(
                MessageDropped(
                    **self._stamp(),
                    call=message.call,
                    index=message.index,
                    text=message.text,
                    reason=drop.reason,
                )
            )

    # ----------------------------------------------------------------- lifecycle

    def _start(self, nursery: trio.Nursery) -> None:
        nursery.start_soon(self._listen)
        nursery.start_soon(self._call_loop)
        nursery.start_soon(self._send_loop)

    def _finish(self) -> None:
        """Account for everything left undone, then close the files (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._input_recv.close()
        pending, self._pending = self._pending, []
        self._drop(drop_all(pending, CLOSED))
        if self._calling is not None:
            call, self._calling = self._calling, None
            self._emit(
                ModelCallFinished(
                    **self._stamp(), call=call, ok=False, latency=0.0, error="Cancelled"
                )
            )
        self._emit(
            SessionClosed(
                **self._stamp(),
                messages=len(self._messages),
                calls=self._calls,
                errors=self._errors,
            )
        )
        if self._log is not None:
            self._log.close()
        if self._writer is not None:
            self._writer.close()


def new_session_id(started: datetime) -> str:
    """A fresh, opaque session id that sorts by start time."""
    return f"chat-{started:%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:8]}"


@asynccontextmanager
async def open_session(
    bot: Replier,
    settings: SessionSettings | None = None,
    *,
    sink: EventSink | None = None,
    log_path: str | Path | None = None,
    transcript_path: str | Path | None = None,
    session_id: str | None = None,
    topic: str | None = None,
    meta: Mapping[str, Any] | None = None,
    started: datetime | None = None,
) -> AsyncIterator[Session]:
    """Run a chat session for the duration of the ``async with`` block.

    ``sink`` receives every event; ``log_path`` gets the JSONL event log and
    ``transcript_path`` the transcript, both written as things happen. ``started`` is
    the wall time of the session's clock 0 (now, by default); pass a fixed one for
    reproducible timestamps.
    """
    settings = settings or SessionSettings()
    # The wall clock is read once, only to label the session; all timing uses trio's clock.
    if started is None:
        started = datetime.now(UTC)
    if started.tzinfo is None:
        raise InputError("the session start time needs a timezone.", field="started")
    session_id = session_id or new_session_id(started)
    meta = dict(meta or {})
    if transcript_path is not None and Path(transcript_path).exists():
        raise InputError(
            "a transcript already exists here.",
            path=transcript_path,
            hint="Choose another session id or output folder; transcripts are never overwritten.",
        )
    log = None
    if log_path is not None:
        header = SessionHeader(
            id=session_id,
            topic=topic,
            started=started,
            settings=settings.model_dump(mode="json"),
            meta=meta,
        )
        log = EventLog(log_path, header)
    writer = None
    if transcript_path is not None:
        transcript = Transcript(
            id=session_id, topic=topic, meta={**meta, "settings": settings.model_dump(mode="json")}
        )
        try:
            writer = TranscriptWriter(transcript_path, transcript)
        except BaseException:
            if log is not None:
                log.close()
            raise
    session = Session(
        bot,
        settings,
        session_id=session_id,
        topic=topic,
        meta=meta,
        started=started,
        sink=sink,
        log=log,
        writer=writer,
    )
    try:
        async with trio.open_nursery() as nursery:
            session._start(nursery)
            try:
                yield session
            finally:
                nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        # One error (from the block or a task) is raised as itself, not wrapped in a group.
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise
    finally:
        session._finish()
