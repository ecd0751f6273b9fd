"""One live chat of a study: the interrogator and a witness, the bot or a person.

A bot witness is the persona bot run by the engine's :func:`open_session`, exactly as
in ``sdtt chat``; this module is its event sink. A person's messages are relayed. Either
way every message is written to the store first and delivered after, and the witness's
messages reach the interrogator in the same frames.

The chat phase ends after X answered burst turns: for the bot once its reply to turn X
is fully sent, for a person once they have answered turn X and been quiet for
:data:`HUMAN_GRACE` seconds.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import trio

from sdtt.dialogue.message import Message
from sdtt.engine.events import (
    Event,
    MessageSent,
    ModelCallFinished,
    TypingStarted,
    TypingStopped,
)
from sdtt.engine.session import SessionSettings, open_session
from sdtt.engine.simulate import answered_turns
from sdtt.serve.protocol import message_frame, typing_frame
from sdtt.serve.store import Room, Sender, StoredMessage

if TYPE_CHECKING:
    from sdtt.serve.server import StudyServer

HUMAN_GRACE = 8.0
"""Seconds a human witness may add to their answer of the last turn."""
TYPING_IDLE = 3.0
"""Seconds after a person's last keystroke when their typing indicator goes off."""


@dataclass
class LiveRoom:
    """A room while its chat runs (the stored :class:`Room` is its record)."""

    record: Room
    server: StudyServer
    turns: int
    ended: trio.Event = field(default_factory=trio.Event)
    end_reason: str | None = None
    changed: trio.Event = field(default_factory=trio.Event)
    last_seq: int = 0
    _failures: int = 0
    _session: Any = None
    _typing_until: float | None = None
    _quiet_since: float = 0.0

    @property
    def id(self) -> str:
        """The room id (never sent to a browser)."""
        return self.record.id

    def members(self) -> dict[str, Sender]:
        """Participant id → role, for the people in the room."""
        people: dict[str, Sender] = {self.record.interrogator: "interrogator"}
        if self.record.witness_pid is not None:
            people[self.record.witness_pid] = "witness"
        return people

    def _wake(self) -> None:
        changed, self.changed = self.changed, trio.Event()
        changed.set()

    # ---------------------------------------------------------------- messages

    def _deliver(self, message: StoredMessage) -> None:
        self.last_seq = message.seq
        for pid, role in self.members().items():
            self.server.deliver(pid, message_frame(message, role))
        self._wake()

    async def post(self, sender: Sender, text: str) -> None:
        """A participant's message: stored, shown to both sides, then given to the bot."""
        message = self.server.store.add_message(self.id, sender, text, self.server.wall_iso())
        self._deliver(message)
        if sender == "witness":
            self._quiet_since = trio.current_time()
            self._set_typing(None)
        if self._session is not None:
            await self._session.send_user_message(text)

    def keystroke(self, sender: Sender) -> None:
        """A person typed: show the other side that they are typing."""
        if sender != "witness" or self.record.witness_pid is None:
            return
        until = trio.current_time() + TYPING_IDLE
        self._quiet_since = trio.current_time()
        if self._typing_until is None:
            self.server.record(
                "typing_started", {"by": sender}, room=self.id, participant=self.record.witness_pid
            )
            self.server.deliver(self.record.interrogator, typing_frame(True))
        self._typing_until = until
        self._wake()

    def _set_typing(self, until: float | None) -> None:
        if self._typing_until is not None and until is None:
            self.server.record("typing_stopped", {}, room=self.id)
            self.server.deliver(self.record.interrogator, typing_frame(False))
        self._typing_until = until

    # ---------------------------------------------------------------- the bot's sink

    def emit(self, event: Event) -> None:
        """Take an engine event: store it, then show what the interrogator should see."""
        self.server.record("engine", event.model_dump(mode="json"), room=self.id)
        if isinstance(event, TypingStarted):
            self.server.deliver(self.record.interrogator, typing_frame(True))
        elif isinstance(event, TypingStopped):
            self.server.deliver(self.record.interrogator, typing_frame(False))
        elif isinstance(event, MessageSent):
            stored = self.server.store.add_message(
                self.id, "witness", event.text, event.time.isoformat()
            )
            self._deliver(stored)
        elif isinstance(event, ModelCallFinished):
            self._failures = 0 if event.ok else self._failures + 1
            if self._failures >= self.server.study.spec.chat.model_errors:
                self.end("model_error")
        self._wake()

    # ---------------------------------------------------------------- running

    def end(self, reason: str) -> None:
        """End the chat now (the first reason given is kept)."""
        if self.end_reason is None:
            self.end_reason = reason
        self.ended.set()
        self._wake()

    def dialogue(self) -> list[Message]:
        """The room's messages as a dialogue (interrogator: side A, witness: side B)."""
        return [
            Message(
                side="user" if m.sender == "interrogator" else "response",
                text=m.text,
                time=datetime.fromisoformat(m.time),
            )
            for m in self.server.store.messages(self.id)
        ]

    async def run_bot(self, bot: Any, settings: SessionSettings, meta: dict[str, Any]) -> None:
        """Run the chat with the bot until X turns are answered or the room ends."""
        started = self.server.wall()
        self.server.record(
            "session_header",
            {
                "started": started.isoformat(),
                "settings": settings.model_dump(mode="json"),
                "meta": meta,
            },
            room=self.id,
        )
        async with open_session(
            bot, settings, sink=self, session_id=self.id, meta=meta, started=started
        ) as session:
            self._session = session
            while not self.ended.is_set():
                if answered_turns(session.messages) >= self.turns and session.is_idle:
                    self.end("finished")
                    break
                await self.changed.wait()
            self._session = None

    async def run_human(self) -> None:
        """Relay between two people until X turns are answered and the witness is quiet."""
        while not self.ended.is_set():
            now = trio.current_time()
            if self._typing_until is not None and now >= self._typing_until:
                self._set_typing(None)
            done_at = math.inf
            if answered_turns(self.dialogue()) >= self.turns:
                done_at = max(self._quiet_since + HUMAN_GRACE, self._typing_until or 0.0)
                if now >= done_at:
                    self.end("finished")
                    break
            wake_at = min(done_at, self._typing_until or math.inf)
            with trio.move_on_at(wake_at):
                await self.changed.wait()


RoomFactory = Callable[[Room], LiveRoom]
