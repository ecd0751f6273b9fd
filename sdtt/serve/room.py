"""One live room of a study: the interrogator and one chat per witness.

A two-party room has one chat, with the bot or a person; a three-party room has two,
side by side, one of each. A bot witness is the persona bot run by the engine's
:func:`open_session`, exactly as in ``sdtt chat``; its chat is the session's event sink.
A person's messages are relayed. Either way every message is written to the store first
and delivered after, and witness messages reach the interrogator in the same frames.

A chat is done after X answered burst turns: with the bot once its reply to turn X is
fully sent, with a person once they answered turn X and were quiet for
:data:`HUMAN_GRACE` seconds. The room's chat phase ends when every chat is done.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

import trio

from sdtt.dialogue.message import Message
from sdtt.engine.events import Event, MessageSent, ModelCallFinished, TypingStarted, TypingStopped
from sdtt.engine.session import (
    Replier,
    Session,
    SessionClosedError,
    SessionSettings,
    open_session,
)
from sdtt.engine.simulate import answered_turns
from sdtt.serve.protocol import message_frame, typing_frame
from sdtt.serve.spec import Study
from sdtt.serve.store import Room, Sender, StoredMessage, StudyStore

HUMAN_GRACE = 8.0
"""Seconds a human witness may add to their answer of the last turn."""
TYPING_IDLE = 3.0
"""Seconds after a person's last keystroke when their typing indicator goes off."""


class RoomHost(Protocol):
    """What a room uses of the server that runs it: the study, its store, the server's
    clock and event log, and delivery to browsers (the server's other parts that need
    these take the same)."""

    @property
    def study(self) -> Study:
        """The study the room belongs to."""
        ...

    @property
    def store(self) -> StudyStore:
        """Where the room's messages and events are kept."""
        ...

    def wall(self) -> datetime:
        """Now, as wall time."""
        ...

    def wall_iso(self) -> str:
        """Now, as ISO 8601 text."""
        ...

    def record(
        self,
        kind: str,
        data: dict[str, Any],
        *,
        room: str | None = None,
        participant: str | None = None,
    ) -> None:
        """Write an event to the store."""
        ...

    def deliver(self, pid: str, frame: dict[str, Any]) -> None:
        """Queue a frame for ``pid``'s browser."""
        ...


@dataclass(frozen=True)
class BotSetup:
    """What a bot chat runs: the persona bot, the session settings and the log's meta."""

    bot: Replier
    settings: SessionSettings
    meta: dict[str, Any]


@dataclass(eq=False)
class Chat:
    """One of the interrogator's chats: with the bot (``witness`` None) or a person."""

    room: LiveRoom
    number: int
    witness: str | None
    session: Session | None = None
    opened: trio.Event = field(default_factory=trio.Event)
    """Set once the bot's session is open (or the room ended first)."""
    done: bool = False
    failures: int = 0
    typing_until: float | None = None
    quiet_since: float = 0.0

    def emit(self, event: Event) -> None:
        """The bot's session sink: store the event, then show what the interrogator sees."""
        room = self.room
        room.server.record(
            "engine", {"chat": self.number, **event.model_dump(mode="json")}, room=room.id
        )
        if isinstance(event, TypingStarted | TypingStopped):
            room.to_interrogators(typing_frame(isinstance(event, TypingStarted), self.number))
        elif isinstance(event, MessageSent):
            stored = room.server.store.add_message(
                room.id, "witness", event.text, event.time.isoformat(), self.number
            )
            room.deliver(stored)
        elif isinstance(event, ModelCallFinished):
            self.failures = 0 if event.ok else self.failures + 1
            if self.failures >= room.server.study.spec.chat.model_errors:
                room.end("model_error")
        room.wake()


@dataclass(eq=False)
class LiveRoom:
    """A room while its chats run (the stored :class:`Room` is its record)."""

    record: Room
    server: RoomHost
    turns: int
    ended: trio.Event = field(default_factory=trio.Event)
    end_reason: str | None = None
    changed: trio.Event = field(default_factory=trio.Event)
    last_seq: int = 0
    chats: dict[int, Chat] = field(default_factory=dict)

    def __post_init__(self) -> None:
        r = self.record
        if r.witness == "both":
            bot = r.bot_position or 1
            self.chats = {bot: Chat(self, bot, None), 3 - bot: Chat(self, 3 - bot, r.witness_pid)}
        else:
            self.chats = {1: Chat(self, 1, r.witness_pid if r.witness == "human" else None)}

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

    def chat_of(self, pid: str, chat: int) -> Chat | None:
        """The chat a participant writes in (a witness has only theirs)."""
        if pid == self.record.interrogator:
            return self.chats.get(chat)
        return next((c for c in self.chats.values() if c.witness == pid), None)

    def to_interrogators(self, frame: dict[str, Any]) -> None:
        """Show a frame to whoever questions the witnesses (a market's bettors: all)."""
        self.server.deliver(self.record.interrogator, frame)

    def wake(self) -> None:
        """Let the room's loop look again."""
        changed, self.changed = self.changed, trio.Event()
        changed.set()

    def deliver(self, message: StoredMessage) -> None:
        """Show a stored message to the people of its chat."""
        self.last_seq = message.seq
        self.server.deliver(self.record.interrogator, message_frame(message, "interrogator"))
        witness = self.chats[message.chat].witness
        if witness is not None:
            self.server.deliver(witness, message_frame(message, "witness"))
        self.wake()

    async def post(self, chat: Chat, sender: Sender, text: str) -> None:
        """A participant's message: stored, shown to its chat, then given to the bot."""
        message = self.server.store.add_message(
            self.id, sender, text, self.server.wall_iso(), chat.number
        )
        self.deliver(message)
        if sender == "witness":
            chat.quiet_since = trio.current_time()
            self._typing_off(chat)
        elif chat.witness is None:
            # The browser may write before the bot's session is open: wait for it.
            await chat.opened.wait()
            if chat.session is not None and not self.ended.is_set():
                with contextlib.suppress(SessionClosedError):
                    await chat.session.send_user_message(text)

    def keystroke(self, chat: Chat, sender: Sender) -> None:
        """A person typed: the interrogator sees the witness typing (never the reverse)."""
        if sender != "witness":
            return
        chat.quiet_since = trio.current_time()
        if chat.typing_until is None:
            self.server.record(
                "typing_started", {"chat": chat.number}, room=self.id, participant=chat.witness
            )
            self.to_interrogators(typing_frame(True, chat.number))
        chat.typing_until = trio.current_time() + TYPING_IDLE
        self.wake()

    def _typing_off(self, chat: Chat) -> None:
        if chat.typing_until is not None:
            self.server.record("typing_stopped", {"chat": chat.number}, room=self.id)
            self.to_interrogators(typing_frame(False, chat.number))
        chat.typing_until = None

    def end(self, reason: str) -> None:
        """End the room now (the first reason given is kept)."""
        if self.end_reason is None:
            self.end_reason = reason
        self.ended.set()
        for chat in self.chats.values():
            chat.opened.set()
        self.wake()

    def answered(self, chat: Chat) -> int:
        """Burst turns the witness of ``chat`` has answered."""
        return answered_turns(self.dialogue(chat.number))

    def dialogue(self, chat: int) -> list[Message]:
        """Chat ``chat`` as a dialogue (interrogator: side A, witness: side B)."""
        return [
            Message(
                side="user" if m.sender == "interrogator" else "response",
                text=m.text,
                time=datetime.fromisoformat(m.time),
            )
            for m in self.server.store.messages(self.id)
            if m.chat == chat
        ]

    async def run(self, setup: BotSetup | None) -> None:
        """Run every chat until all are done (then 'finished') or the room ends."""
        async with trio.open_nursery() as nursery:
            for chat in self.chats.values():
                if chat.witness is None:
                    assert setup is not None
                    nursery.start_soon(self._run_bot, chat, setup)
            while not self.ended.is_set():
                wake_at = self._check_people()
                if all(chat.done for chat in self.chats.values()):
                    self.end("finished")
                    break
                with trio.move_on_at(wake_at):
                    await self.changed.wait()
            nursery.cancel_scope.cancel()

    def _check_people(self) -> float:
        """Turn off stale typing, mark people's chats done; when to look again."""
        now = trio.current_time()
        wake_at = math.inf
        for chat in self.chats.values():
            if chat.witness is None:
                continue
            if chat.typing_until is not None:
                if now >= chat.typing_until:
                    self._typing_off(chat)
                else:
                    wake_at = min(wake_at, chat.typing_until)
            if not chat.done and answered_turns(self.dialogue(chat.number)) >= self.turns:
                done_at = max(chat.quiet_since + HUMAN_GRACE, chat.typing_until or 0.0)
                if now >= done_at:
                    chat.done = True
                else:
                    wake_at = min(wake_at, done_at)
        return wake_at

    async def _run_bot(self, chat: Chat, setup: BotSetup) -> None:
        started = self.server.wall()
        self.server.record(
            "session_header",
            {
                "chat": chat.number,
                "started": started.isoformat(),
                "settings": setup.settings.model_dump(mode="json"),
                "meta": setup.meta,
            },
            room=self.id,
        )
        async with open_session(
            setup.bot,
            setup.settings,
            sink=chat,
            session_id=self.id if len(self.chats) == 1 else f"{self.id}-{chat.number}",
            meta=setup.meta,
            started=started,
        ) as session:
            chat.session = session
            chat.opened.set()
            while True:
                if answered_turns(session.messages) >= self.turns and session.is_idle:
                    chat.done = True
                    self.wake()
                    await trio.sleep_forever()
                await session.wait_changed()
