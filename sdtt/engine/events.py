"""What a chat session reports: event models, the sink protocol, the JSONL log and replay.

Every event carries its sequence number, the session clock (seconds since the session
opened, on trio's clock) and the wall time that clock maps to. A session hands each
event to an :class:`EventSink` (the UI, the CLI) and appends it to its event log. The
log's first record is a :class:`SessionHeader` (settings, never keys); the rest are
events, one per line, flushed as written. :func:`read_event_log` rebuilds the transcript
and its timing exactly, and :func:`play` re-emits a log to a sink at its original pace.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol

import trio
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

from sdtt.dialogue.condition import CONDITION_SETTINGS, Condition, migrate_record
from sdtt.dialogue.message import Message, Side, Transcript
from sdtt.dialogue.store import check_version, validate_record
from sdtt.errors import InputError
from sdtt.jsonl import JsonlWriter, read_jsonl

LOG_VERSION = 1
"""Version of the event-log format."""


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    seq: int = Field(description="Position in the session's event stream, from 1.")
    clock: float = Field(description="Seconds since the session opened (trio clock).")
    wall: datetime = Field(description="The wall time the clock maps to.")


class UserMessage(_Event):
    """A message from the partner (side A) arrived and joined the history."""

    type: Literal["user_message"] = "user_message"
    text: str
    time: datetime = Field(description="The message's timestamp in the transcript.")


class ModelCallStarted(_Event):
    """The model was asked for a reply."""

    type: Literal["model_call_started"] = "model_call_started"
    call: int = Field(description="Call number, from 1.")
    reason: Literal["unread", "wrote_during_call", "opening"] = Field(
        description="'unread': t1 passed after the first unread message; 'wrote_during_call': "
        "the partner wrote while the previous call ran; 'opening': this side writes first."
    )
    history: int = Field(description="Messages in the dialogue sent to the model.")
    unread: int = Field(description="Partner messages this call answers for the first time.")


class ModelCallFinished(_Event):
    """A model call ended, with or without a usable reply."""

    type: Literal["model_call_finished"] = "model_call_finished"
    call: int
    ok: bool
    latency: float = Field(description="Seconds on the session clock, retries included.")
    attempts: int | None = Field(
        default=0,
        description="Provider calls made, retries and re-asks included (0 or null: unknown; "
        "null for a call the session's end cut off in flight).",
    )
    input_tokens: int = 0
    cached_input_tokens: int | None = Field(
        default=0, description="Input tokens served from a prefix cache; null: not reported."
    )
    output_tokens: int = 0
    messages: int = Field(default=0, description="Messages in the parsed reply.")
    error: str | None = Field(default=None, description="Error class name when not ok.")
    out_of_character: int = Field(
        default=0,
        description="Messages of this call's replies that broke character (repeated the "
        "instructions or said it is an AI): never sent, the reply asked again.",
    )


class PlannedRecord(BaseModel):
    """One message of a planned reply."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    index: int
    text: str
    typing_at: float = Field(description="Session clock when typing shows.")
    send_at: float = Field(description="Session clock when it is due.")


class ReplyPlanned(_Event):
    """A reply was scheduled (after dropping what it makes stale)."""

    type: Literal["reply_planned"] = "reply_planned"
    call: int
    messages: list[PlannedRecord]


class TypingStarted(_Event):
    """The typing indicator turned on for a planned message."""

    type: Literal["typing_started"] = "typing_started"
    call: int
    index: int


class TypingStopped(_Event):
    """The typing indicator turned off: the message was sent or dropped."""

    type: Literal["typing_stopped"] = "typing_stopped"
    call: int
    index: int
    reason: Literal["sent", "dropped"]


class MessageSent(_Event):
    """A reply message went out and joined the transcript."""

    type: Literal["message_sent"] = "message_sent"
    call: int
    index: int
    text: str
    time: datetime = Field(description="The message's timestamp in the transcript.")
    scheduled: float = Field(description="Session clock it was due at.")
    lateness: float = Field(description="Seconds it went out after it was due.")


class MessageDropped(_Event):
    """A planned message will never be sent."""

    type: Literal["message_dropped"] = "message_dropped"
    call: int
    index: int
    text: str
    reason: str


class ErrorEvent(_Event):
    """Something failed; the session carries on."""

    type: Literal["error"] = "error"
    call: int | None = None
    kind: str = Field(description="Error class name, e.g. 'ServerError'.")
    message: str


class SessionClosed(_Event):
    """The session ended; nothing follows."""

    type: Literal["session_closed"] = "session_closed"
    messages: int
    calls: int
    errors: int


Event = Annotated[
    UserMessage
    | ModelCallStarted
    | ModelCallFinished
    | ReplyPlanned
    | TypingStarted
    | TypingStopped
    | MessageSent
    | MessageDropped
    | ErrorEvent
    | SessionClosed,
    Field(discriminator="type"),
]
_EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)


class SessionHeader(BaseModel):
    """The first record of an event log."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["session"] = "session"
    version: int = LOG_VERSION
    id: str = Field(description="The conversation id (also the transcript's).")
    topic: str | None = None
    started: datetime = Field(description="Wall time of session clock 0.")
    settings: dict[str, Any] = Field(description="The session settings (no keys).")
    condition: Condition | None = Field(
        default=None, description="What the chat is run as (None: a log that records none)."
    )
    meta: dict[str, Any] = Field(default_factory=dict, description="Free-form provenance.")

    @model_validator(mode="before")
    @classmethod
    def _old_meta(cls, data: Any) -> Any:
        # Logs written before `condition` existed kept it as loose keys of `meta`.
        return migrate_record(data)

    @property
    def full_condition(self) -> Condition:
        """The condition with the mode, delay preset and seed of the settings."""
        known: dict[str, Any] = {
            k: self.settings[k] for k in CONDITION_SETTINGS if k in self.settings
        }
        return (self.condition or Condition()).model_copy(update=known)


class EventSink(Protocol):
    """Receives every event of a session as it happens (the UI and the CLI implement it).

    ``emit`` is called from the session's trio tasks and must not block.
    """

    def emit(self, event: Event) -> None:
        """Handle one event."""
        ...


class ListSink:
    """Keeps every event in a list (for tests and summaries)."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        """Append the event."""
        self.events.append(event)

    def of(self, kind: str) -> list[Event]:
        """The events of one ``type``."""
        return [event for event in self.events if event.type == kind]


class TeeSink:
    """Hands each event to several sinks in order."""

    def __init__(self, *sinks: EventSink | None) -> None:
        self.sinks = [sink for sink in sinks if sink is not None]

    def emit(self, event: Event) -> None:
        """Pass the event on to every sink."""
        for sink in self.sinks:
            sink.emit(event)


class EventLog:
    """The append-only JSONL event log of one session (an :class:`EventSink`)."""

    def __init__(self, path: str | Path, header: SessionHeader, *, fsync: bool = False) -> None:
        self.path = Path(path)
        if self.path.exists() and self.path.stat().st_size > 0:
            raise InputError(
                "an event log already exists here.",
                path=self.path,
                hint="Choose another session id or output folder; logs are never overwritten.",
            )
        self._writer = JsonlWriter(self.path, fsync=fsync)
        self._writer.write(header)

    def emit(self, event: Event) -> None:
        """Append the event (flushed)."""
        self._writer.write(event)

    def close(self) -> None:
        """Close the file."""
        self._writer.close()


def message_of(event: UserMessage | MessageSent) -> Message:
    """The transcript message an event stands for."""
    side: Side = "user" if isinstance(event, UserMessage) else "response"
    return Message(side=side, text=event.text, time=event.time)


@dataclass(frozen=True)
class Replay:
    """A session rebuilt from its event log."""

    header: SessionHeader
    events: list[Event]
    complete: bool
    """False when the log ends without ``session_closed`` (the process died)."""

    @property
    def transcript(self) -> Transcript:
        """The conversation as it happened: partner messages and sent replies, in order."""
        return Transcript(
            id=self.header.id,
            topic=self.header.topic,
            messages=[message for _, message in self.timeline],
            condition=self.header.full_condition,
            meta=dict(self.header.meta),
        )

    @property
    def timeline(self) -> list[tuple[float, Message]]:
        """Each transcript message with its exact session-clock time."""
        return [
            (event.clock, message_of(event))
            for event in self.events
            if isinstance(event, UserMessage | MessageSent)
        ]


def read_event_log(path: str | Path) -> Replay:
    """Read an event log; errors name the file, line and field."""
    header: SessionHeader | None = None
    events: list[Event] = []
    for line, record in read_jsonl(path):
        if header is None:
            if record.get("type") != "session":
                raise InputError(
                    "is not an sdtt event log (the first record must have type 'session').",
                    path=path,
                    line=line,
                    field="type",
                )
            version = record.get("version")
            if not isinstance(version, int) or isinstance(version, bool):
                raise InputError(
                    f"the 'session' record needs an integer version, not {version!r}.",
                    path=path,
                    line=line,
                    field="version",
                )
            check_version(record, LOG_VERSION, path, line, what="event-log version")
            header = validate_record(SessionHeader, record, path, line)
            continue
        events.append(validate_record(_EVENT_ADAPTER, record, path, line))
    if header is None:
        raise InputError("is empty: an event log starts with a 'session' record.", path=path)
    complete = bool(events) and isinstance(events[-1], SessionClosed)
    return Replay(header=header, events=events, complete=complete)


async def play(events: Sequence[Event], sink: EventSink, *, speed: float = 1.0) -> None:
    """Re-emit ``events`` to ``sink`` at their original pace (``speed`` times faster)."""
    if speed <= 0:
        raise InputError("speed must be positive.", field="speed")
    origin = trio.current_time()
    for event in events:
        await trio.sleep_until(origin + event.clock / speed)
        sink.emit(event)


__all__ = [
    "LOG_VERSION",
    "ErrorEvent",
    "Event",
    "EventLog",
    "EventSink",
    "ListSink",
    "MessageDropped",
    "MessageSent",
    "ModelCallFinished",
    "ModelCallStarted",
    "PlannedRecord",
    "Replay",
    "ReplyPlanned",
    "SessionClosed",
    "SessionHeader",
    "TeeSink",
    "TypingStarted",
    "TypingStopped",
    "UserMessage",
    "play",
    "read_event_log",
]
