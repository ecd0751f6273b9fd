"""A live chat session on trio: the burst rules driven by the clock, a model and a partner.

::

    async with open_session(bot, SessionSettings(mode="burst"), sink=ui) as session:
        await session.send_user_message("hey")
        ...

The burst rules (method.md, "Burst engine") are a state machine with no I/O,
:class:`~sdtt.engine.burst.BurstState`: when to ask the model (``t1`` after the first
unread partner message, at once when the partner wrote during a call), how each reply is
scheduled by the pure planner (:mod:`sdtt.engine.schedule`), which unsent messages a new
reply makes stale, when typing shows and each message goes out. The session is its trio
driver: it hands it the partner's messages and the model's replies with the time they
came, runs each model call as a task, logs and shows the events the state returns, writes
the transcript, and sleeps until the state's next deadline. A model failure (after the
model's own retries) becomes an ``error`` event and the session carries on. A sent
message's timestamp is its real send time on the session clock, mapped onto ``started``;
the times the model wrote only decide the schedule. Build a
:class:`~sdtt.personas.bot.PersonaBot` for a session with
``resample=schedule.preset_decides``, so a timestamp the model left out is timed by the
delay preset alone.

Only trio's clock is read, so under ``trio.testing.MockClock`` (pytest-trio's
``autojump_clock``) a session runs hours of chat in milliseconds, exactly.

**Ping-pong mode**: one message per side per turn, no ``t1`` wait (a turn has only one
partner message to wait for), and every reply is cut to one message. While the partner's
message awaits its answer, :meth:`Session.send_user_message` waits for the bot's turn to
end before delivering the next one, so the bot never sends two messages in a row. If the
call fails, the turn passes back to the partner (whose next message is then the second of
the run: the only way a side can write twice in a row in ping-pong).

**Closing**: leaving the ``async with`` block cancels the model call and the timer. A
message being typed or waiting to be sent is not sent: it is logged as
``message_dropped`` (reason "session closed"), so the transcript, the log and its replay
agree. A call in flight ends as a ``model_call_finished`` event with ``ok=False``.
"""

from __future__ import annotations

import hashlib
import random
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import trio

from sdtt.dialogue.condition import CONDITION_SETTINGS, Condition
from sdtt.dialogue.message import Message, Transcript
from sdtt.dialogue.store import TranscriptWriter
from sdtt.engine.burst import Action, BurstState, CallModel, ChatMode, SessionClosedError
from sdtt.engine.events import (
    EventLog,
    EventSink,
    MessageSent,
    SessionHeader,
    UserMessage,
    message_of,
)
from sdtt.engine.settings import SessionSettings
from sdtt.errors import InputError, ModelError, ProviderError
from sdtt.models.base import Usage
from sdtt.personas.bot import BotReply
from sdtt.redact import redact_text

__all__ = [
    "ChatMode",
    "Replier",
    "Session",
    "SessionClosedError",
    "SessionSettings",
    "new_session_id",
    "open_session",
]


class Replier(Protocol):
    """What a session asks for replies (a :class:`sdtt.personas.bot.PersonaBot`)."""

    async def reply(
        self, dialogue: Sequence[Message], now: datetime, rng: random.Random
    ) -> BotReply:
        """The next messages after ``dialogue``; ``now`` is the wall time of the request."""
        ...


class Session:
    """A running chat session; get one from :func:`open_session`.

    The burst rules live in :class:`~sdtt.engine.burst.BurstState`; the session only
    feeds it the partner's messages, the model's replies and the time, carries out the
    actions it returns (log and show events, write the transcript, start model calls),
    and sleeps until its next deadline.
    """

    def __init__(
        self,
        bot: Replier,
        settings: SessionSettings,
        *,
        session_id: str,
        topic: str | None,
        meta: Mapping[str, Any],
        condition: Condition,
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
        self.condition = condition
        """What the chat is run as (its mode, delays and seed are the settings')."""
        self.started = started
        """Wall time of session clock 0."""
        self.usage = Usage()
        """Tokens of every successful call."""
        self._sink = sink
        self._log = log
        self._writer = writer
        self._origin = trio.current_time()
        self._state = BurstState(settings, started=started, origin=self._origin)
        self._nursery: trio.Nursery | None = None
        self._changed = trio.Event()
        self._rearm = trio.Event()
        self._finished = False

    # ----------------------------------------------------------------- public API

    @property
    def transcript(self) -> Transcript:
        """The conversation so far: partner messages and sent replies, in order."""
        return Transcript(
            id=self.id,
            topic=self.topic,
            messages=list(self._state.messages),
            condition=self.condition,
            meta=dict(self.meta),
        )

    @property
    def messages(self) -> list[Message]:
        """A copy of the messages so far."""
        return list(self._state.messages)

    @property
    def calls(self) -> int:
        """Model calls started so far."""
        return self._state.calls

    @property
    def errors(self) -> int:
        """Error events so far."""
        return self._state.errors

    @property
    def out_of_character(self) -> int:
        """Messages the replies held that broke character, so far (none was sent)."""
        return self._state.out_of_character

    @property
    def clock(self) -> float:
        """Seconds since the session opened."""
        return trio.current_time() - self._origin

    @property
    def is_idle(self) -> bool:
        """Nothing is unread, being asked, planned or typed, and no message is waiting."""
        return self._state.is_idle

    async def send_user_message(self, text: str) -> None:
        """Deliver a message from the partner (side A).

        Returns once the session took it. In ping-pong mode that waits while the
        partner's previous message is still unanswered. Raises
        :class:`SessionClosedError` when the session has closed.
        """
        if not text.strip():
            raise InputError("a chat message must not be empty.", field="text")
        if self._state.closed:
            raise SessionClosedError("The chat session has closed; start a new one.")
        await trio.lowlevel.checkpoint_if_cancelled()
        self._perform(self._state.user_message(trio.current_time(), text))
        ticket = self._state.inputs
        try:
            while self._state.holds(ticket):
                await self._changed.wait()
        except BaseException:
            self._state.withdraw(ticket)
            raise
        if ticket in self._state.discarded:
            raise SessionClosedError("The chat session closed before the message was taken.")
        await trio.lowlevel.cancel_shielded_checkpoint()

    def catch_up(self) -> None:
        """Do now whatever is due by now, as the session's timer would.

        Two sessions whose timers come due at the same instant run in an order trio
        chooses at random; a caller acting on this session's state at that instant (the
        simulator deciding whether a partner message still belongs to the chat) calls
        this first, so it sees the same state whichever timer ran first.
        """
        if not self._state.closed:
            self._perform(self._state.tick(trio.current_time()))

    async def wait_idle(self) -> None:
        """Wait until :attr:`is_idle`: every message answered and every reply sent."""
        while not self.is_idle:
            await self._changed.wait()

    async def wait_changed(self) -> None:
        """Wait for the next event of this session."""
        await self._changed.wait()

    # ----------------------------------------------------------------- plumbing

    def _perform(self, actions: Sequence[Action]) -> None:
        """Carry out what the state asked for, in order."""
        for action in actions:
            if isinstance(action, CallModel):
                assert self._nursery is not None, "calls start only once the session runs"
                self._nursery.start_soon(self._call, action)
                continue
            if self._writer is not None and isinstance(action, UserMessage | MessageSent):
                self._writer.add(message_of(action))
            if self._log is not None:
                self._log.emit(action)
            if self._sink is not None:
                self._sink.emit(action)
            changed, self._changed = self._changed, trio.Event()
            changed.set()
        rearm, self._rearm = self._rearm, trio.Event()
        rearm.set()

    async def _call(self, action: CallModel) -> None:
        """One model call; its outcome goes back to the state."""
        try:
            reply = await self.bot.reply(list(action.history), action.wall, action.rng())
        except ModelError as error:
            now = trio.current_time()
            kind, message = type(error).__name__, redact_text(str(error))
            attempts = error.attempts if isinstance(error, ProviderError) else 0
            self._perform(
                self._state.call_failed(
                    now,
                    action.call,
                    kind,
                    message,
                    attempts=attempts,
                    out_of_character=error.out_of_character,
                )
            )
            return
        usage = sum((output.usage for output in reply.outputs), Usage())
        self.usage = self.usage + usage
        self._perform(
            self._state.reply_ready(
                trio.current_time(),
                action.call,
                reply.messages,
                attempts=sum(output.attempts for output in reply.outputs),
                input_tokens=usage.input_tokens,
                cached_input_tokens=usage.cached_input_tokens,
                output_tokens=usage.output_tokens,
                out_of_character=reply.out_of_character,
            )
        )

    async def _timer(self) -> None:
        """Sleep until the state's next deadline (or a change moves it), then tick."""
        while True:
            rearm = self._rearm
            with trio.move_on_at(self._state.next_deadline):
                await rearm.wait()
            now = trio.current_time()
            if now >= self._state.next_deadline:
                self._perform(self._state.tick(now))

    # ----------------------------------------------------------------- lifecycle

    def _start(self, nursery: trio.Nursery) -> None:
        self._nursery = nursery
        nursery.start_soon(self._timer)
        self._perform(self._state.start(trio.current_time()))

    def _finish(self) -> None:
        """Account for everything left undone, then close the files (idempotent)."""
        if self._finished:
            return
        self._finished = True
        self._perform(self._state.close(trio.current_time()))
        if self._log is not None:
            self._log.close()
        if self._writer is not None:
            self._writer.close()


def new_session_id(started: datetime, key: str | None = None) -> str:
    """An opaque session id that sorts by start time: fresh each call, or with ``key``
    (whatever makes the run what it is) the same every time, so a repeated run is
    byte-identical."""
    tail = uuid.uuid4().hex if key is None else hashlib.sha256(key.encode()).hexdigest()
    return f"chat-{started:%Y%m%d-%H%M%S}-{tail[:8]}"


def with_settings(condition: Condition, settings: SessionSettings) -> Condition:
    """``condition`` with the mode, delay preset and seed of ``settings``."""
    return condition.model_copy(
        update={"mode": settings.mode, "delays": settings.delays, "seed": settings.seed}
    )


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
    condition: Condition | None = None,
    started: datetime | None = None,
) -> AsyncIterator[Session]:
    """Run a chat session for the duration of the ``async with`` block.

    ``sink`` receives every event; ``log_path`` gets the JSONL event log and
    ``transcript_path`` the transcript, both written as things happen. ``started`` is
    the wall time of the session's clock 0 (now, by default); pass a fixed one for
    reproducible timestamps. ``condition`` is what the chat is run as; its mode, delays
    and seed are taken from ``settings``, so each is recorded once. ``meta`` is free-form
    provenance.
    """
    settings = settings or SessionSettings()
    condition = with_settings(condition or Condition(), settings)
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
            condition=condition,
            meta=meta,
        )
        log = EventLog(log_path, header)
    writer = None
    if transcript_path is not None:
        rest = settings.model_dump(mode="json", exclude=set(CONDITION_SETTINGS))
        transcript = Transcript(
            id=session_id, topic=topic, condition=condition, meta={**meta, "settings": rest}
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
        condition=condition,
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
