"""One live room of a study: the interrogator and one chat per witness.

A two-party room has one chat, with the bot or a person; a three-party room has two,
side by side, one of each. A bot witness is the persona bot run by the engine's
:func:`open_session`, exactly as in ``sdtt chat``; its chat is the session's event sink.
A person's messages are relayed. Either way every message is written to the store first
and delivered after, and witness messages reach the interrogator in the same frames.

One rule ends a chat whoever the witness is, so its end never tells the bot apart: a
chat is done once its witness answered burst turn X and then sent nothing and composed
nothing (the bot's session idle, a person not typing) for :data:`END_GRACE` seconds
from when its last message left for the interrogator's page. The room's chat phase ends
when every chat is done, or when the study's time limit is up.
The interrogator sees the same frames in the same order from either witness: the typing
indicator follows one policy (:mod:`sdtt.serve.indicator`), an answer is held until the
indicator has shown for a while (stored at once, shown to its witness at once, to the
interrogator when the policy lets it; the chat is not over meanwhile), and a message
comes before the indicator goes off. With a moderation endpoint, the bot's messages wait
for it as a person's do (:mod:`sdtt.serve.moderation`), so the check takes the same time
for either witness; a chat is not over while one of its witness's messages is being
checked.
"""

from __future__ import annotations

import contextlib
import math
from collections import Counter, deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any, Protocol

import trio

from sdtt.dialogue.message import Message
from sdtt.engine.events import Event, MessageSent, ModelCallFinished, TypingStarted, TypingStopped
from sdtt.engine.opening import BotSetup
from sdtt.engine.session import Session, SessionClosedError, open_session
from sdtt.engine.simulate import answered_turns
from sdtt.seeds import seeded_rng
from sdtt.serve.event_log import Records
from sdtt.serve.indicator import Indicator
from sdtt.serve.moderation import Screener
from sdtt.serve.protocol import Tracked, message_frame, typing_frame
from sdtt.serve.spec import Study
from sdtt.serve.store import Room, Sender, StoredMessage, StudyStore

END_GRACE = 8.0
"""Seconds a witness (bot or person) may add to their answer of the last turn."""
TYPING_IDLE = 3.0
"""Seconds after a person's last keystroke when they count as no longer typing."""


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

    @property
    def records(self) -> Records:
        """The server's clock and event log."""
        ...

    def deliver(self, pid: str, frame: dict[str, Any]) -> None:
        """Queue a frame for ``pid``'s browser."""
        ...

    @property
    def screener(self) -> Screener | None:
        """The study's moderation endpoint, if it has one."""
        ...


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
    """Until when a person witness counts as typing (their last keystroke + idle)."""
    quiet_since: float = 0.0
    """When the witness last sent a message."""
    indicator: Indicator = field(init=False)
    answered_cache: int | None = None
    screening: int = 0
    """Messages of the witness being checked by the moderation endpoint right now."""
    bot_outbox: trio.MemorySendChannel[str] | None = None
    """The bot's messages waiting for the moderation endpoint (with one configured)."""
    unshown: deque[tuple[float, StoredMessage]] = field(default_factory=deque)
    """The witness's messages stored but not yet shown to the interrogator, each with
    when it may be (the indicator policy's :meth:`~Indicator.release`), in order."""
    in_flight: Counter[int] = field(default_factory=Counter)
    """The witness's messages shown but still on their way to an interrogator's page
    (sequence number: how many pages), which the end of the chat counts from."""

    def __post_init__(self) -> None:
        room = self.room
        seed = room.server.study.spec.chat.seed
        rng = seeded_rng(seed, room.record.interrogator, self.number)
        self.indicator = Indicator(rng, self._show_typing)

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """While the witness's message is being checked: the chat is not over."""
        self.screening += 1
        try:
            yield
        finally:
            self.screening -= 1
            self.room.wake()

    def _show_typing(self, on: bool) -> None:
        self.room.server.records.record(
            "indicator", {"chat": self.number, "on": on}, room=self.room.id
        )
        self.room.to_interrogators(typing_frame(on, self.number))

    def composing(self, now: float) -> bool:
        """Whether the witness is still at work on a message (the bot's session busy, a
        person typing)."""
        if self.screening or self.unshown or self.in_flight:
            return True
        if self.witness is None:
            return self.session is not None and not self.session.is_idle
        return self.typing_until is not None and now < self.typing_until

    def emit(self, event: Event) -> None:
        """The bot's session sink: store the event, then show what the interrogator sees
        (its typing only through the chat's indicator policy)."""
        room = self.room
        room.server.records.record(
            "engine", {"chat": self.number, **event.model_dump(mode="json")}, room=room.id
        )
        if isinstance(event, TypingStarted | TypingStopped):
            pass  # recorded above; the interrogator sees the indicator policy instead
        elif isinstance(event, MessageSent) and self.bot_outbox is not None:
            self.screening += 1  # until delivered (see _screen_bot)
            self.bot_outbox.send_nowait(event.text)
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
    closes_at: float = math.inf
    """When the study's time limit ends the chat (trio's clock)."""
    shown: list[StoredMessage] = field(default_factory=list)
    """The room's messages so far (this process runs the room, so it stores and shows
    them all): the end rule counts turns on every change without reading them back."""

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

    def interrogators(self) -> tuple[str, ...]:
        """Whoever questions the witnesses (a market's bettors: all)."""
        return (self.record.interrogator,)

    def to_interrogators(self, frame: dict[str, Any]) -> None:
        """Show a frame to whoever questions the witnesses."""
        for pid in self.interrogators():
            self.server.deliver(pid, frame)

    def frame_for(self, message: StoredMessage, pid: str) -> dict[str, Any]:
        """A message as ``pid`` sees it."""
        viewer = "interrogator" if pid in self.interrogators() else "witness"
        return message_frame(message, viewer)

    def wake(self) -> None:
        """Let the room's loop look again."""
        changed, self.changed = self.changed, trio.Event()
        changed.set()

    def deliver(self, message: StoredMessage) -> None:
        """Show a stored message to the people of its chat: an interrogator's at once, a
        witness's to the witness at once and to the interrogator when the indicator
        policy lets it (held meanwhile; see :meth:`_release`)."""
        chat = self.chats[message.chat]
        if message.sender != "witness":
            witness = () if chat.witness is None else (chat.witness,)
            self.show(message, (*self.interrogators(), *witness))
            return
        if chat.witness is not None:
            self.server.deliver(chat.witness, self.frame_for(message, chat.witness))
        now = trio.current_time()
        # An indicator already due goes on first, even if the room's loop (held up by a
        # busy process) has not turned it on yet: else an answer coming after the due
        # time was shown at once, with no indicator at all (a bot's, mostly).
        chat.indicator.tick(now)
        release = chat.indicator.release(now, message.text)
        if chat.unshown:
            release = max(release, chat.unshown[-1][0])  # in the order they came
        if release > now:
            held = {"chat": chat.number, "seq": message.seq, "for": round(release - now, 3)}
            self.server.records.record("answer_held", held, room=self.id)
        chat.unshown.append((release, message))
        chat.answered_cache = None
        self._release(chat, now)
        self.wake()  # the room's loop shows it when due

    def _release(self, chat: Chat, now: float, *, all_of_them: bool = False) -> float:
        """Show the interrogator the witness's held messages that are due (or all);
        when the next one is."""
        while chat.unshown and (all_of_them or chat.unshown[0][0] <= now):
            _, message = chat.unshown.popleft()
            self.show(message, self.interrogators())
        return chat.unshown[0][0] if chat.unshown else math.inf

    def indicator_frames(self) -> list[dict[str, Any]]:
        """The typing indicators on now, for a page that (re)connects: an answer the
        indicator holds is not to come with none showing."""
        return [typing_frame(True, c.number) for c in self.chats.values() if c.indicator.on]

    def unshown(self) -> list[StoredMessage]:
        """The witnesses' messages stored but not yet shown to the interrogator."""
        return [m for chat in self.chats.values() for _, m in chat.unshown]

    def unshown_seqs(self) -> set[int]:
        """The sequence numbers of :meth:`unshown`."""
        return {m.seq for m in self.unshown()}

    def show(self, message: StoredMessage, pids: Iterable[str]) -> None:
        """Show a message to ``pids`` now (the room's last shown message moves on). A
        witness's message to an interrogator is tracked until it left for the page: the
        chat's end counts from then (under load a frame can wait seconds in its outbox,
        and a chat counted from the store ended that much sooner after the page showed
        its last answer)."""
        self.last_seq = max(self.last_seq, message.seq)
        chat = self.chats.get(message.chat)
        for pid in pids:
            frame = self.frame_for(message, pid)
            if chat is not None and message.sender == "witness" and pid in self.interrogators():
                chat.in_flight[message.seq] += 1
                frame = Tracked(frame, partial(self._reached, chat, message.seq))
            self.server.deliver(pid, frame)
        self.delivered(message)

    def _reached(self, chat: Chat, seq: int, sent: bool) -> None:
        """A witness's message left for an interrogator's page (``sent``) or never will."""
        if sent:
            chat.quiet_since = max(chat.quiet_since, trio.current_time())
        chat.in_flight[seq] -= 1
        if chat.in_flight[seq] <= 0:
            del chat.in_flight[seq]
        self.wake()

    def delivered(self, message: StoredMessage) -> None:
        """After a message was shown: the same for either kind of witness (a question
        schedules the typing indicator; an answer turns it off, after the message)."""
        self.shown.append(message)
        chat = self.chats.get(message.chat)
        if chat is not None:
            chat.answered_cache = None
            if message.sender == "witness":
                chat.quiet_since = max(chat.quiet_since, trio.current_time())
                chat.indicator.answered()
            else:
                chat.indicator.asked(trio.current_time())
        self.wake()

    async def receive(self, pid: str, chat: Chat, sender: Sender, text: str) -> None:
        """A message ``pid`` sent in ``chat`` (received here or passed on by another
        process): :meth:`post` it."""
        await self.post(chat, sender, text)

    async def post(self, chat: Chat, sender: Sender, text: str) -> None:
        """A participant's message: stored, shown to its chat, then given to the bot."""
        message = self.server.store.add_message(
            self.id, sender, text, self.server.records.wall_iso(), chat.number
        )
        self.deliver(message)
        if sender == "witness":
            self._typing_off(chat)
        elif chat.witness is None:
            # The browser may write before the bot's session is open: wait for it.
            await chat.opened.wait()
            if chat.session is not None and not self.ended.is_set():
                with contextlib.suppress(SessionClosedError):
                    await chat.session.send_user_message(text)

    def keystroke(self, chat: Chat, sender: Sender) -> None:
        """A person witness typed: recorded, and it holds the chat's end off; the
        interrogator sees only the indicator policy (and the witness never the reverse)."""
        if sender != "witness":
            return
        if chat.typing_until is None:
            self.server.records.record(
                "typing_started", {"chat": chat.number}, room=self.id, participant=chat.witness
            )
        chat.typing_until = trio.current_time() + TYPING_IDLE
        self.wake()

    def _typing_off(self, chat: Chat) -> None:
        if chat.typing_until is not None:
            self.server.records.record("typing_stopped", {"chat": chat.number}, room=self.id)
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
        """Burst turns the witness of ``chat`` has answered (counted again only after a
        new message: the room's loop asks on every change)."""
        if chat.answered_cache is None:
            chat.answered_cache = answered_turns(self.dialogue(chat.number))
        return chat.answered_cache

    def dialogue(self, chat: int) -> list[Message]:
        """Chat ``chat`` as the interrogator has seen it so far, as a dialogue
        (interrogator: side A, witness: side B; held messages are not in it yet)."""
        return [
            Message(
                side="user" if m.sender == "interrogator" else "response",
                text=m.text,
                time=datetime.fromisoformat(m.time),
            )
            for m in self.shown
            if m.chat == chat
        ]

    async def run(self, setup: BotSetup | None) -> None:
        """Run every chat until all are done (then 'finished'), the time limit is up
        (also 'finished': the interrogator gives the verdict) or the room ends."""
        limit = self.server.study.spec.time_limit
        self.closes_at = closes_at = trio.current_time() + limit if limit else math.inf
        async with trio.open_nursery() as nursery:
            for chat in self.chats.values():
                if chat.witness is None:
                    assert setup is not None
                    screener = self.server.screener
                    if screener is not None:
                        send, receive = trio.open_memory_channel[str](math.inf)
                        chat.bot_outbox = send
                        nursery.start_soon(self._screen_bot, chat, screener, receive)
                    nursery.start_soon(self._run_bot, chat, setup)
            while not self.ended.is_set():
                wake_at = min(self._check_chats(), closes_at)
                if trio.current_time() >= closes_at:
                    self.server.records.record("time_limit", {"seconds": limit}, room=self.id)
                    for chat in self.chats.values():
                        self._chat_done(chat)
                if all(chat.done for chat in self.chats.values()):
                    self.end("finished")
                    break
                with trio.move_on_at(wake_at):
                    await self.changed.wait()
            for chat in self.chats.values():  # (what is stored is shown, however it ended)
                self._release(chat, trio.current_time(), all_of_them=True)
            nursery.cancel_scope.cancel()

    def _chat_done(self, chat: Chat) -> None:
        self._release(chat, trio.current_time(), all_of_them=True)
        if not chat.done:
            chat.done = True
            chat.indicator.answered()

    def _check_chats(self) -> float:
        """Show due typing indicators, let stale typing lapse and mark chats done by the
        one end rule (see the module docstring); when to look again."""
        now = trio.current_time()
        wake_at = math.inf
        for chat in self.chats.values():
            if chat.done:
                self._release(chat, now, all_of_them=True)
                continue
            wake_at = min(wake_at, chat.indicator.tick(now), self._release(chat, now))
            if chat.typing_until is not None:
                if now >= chat.typing_until:
                    self._typing_off(chat)
                else:
                    wake_at = min(wake_at, chat.typing_until)
            if chat.composing(now) or self.answered(chat) < self.turns:
                continue
            done_at = chat.quiet_since + END_GRACE
            if now >= done_at:
                self._chat_done(chat)
            else:
                wake_at = min(wake_at, done_at)
        return wake_at

    async def _screen_bot(
        self, chat: Chat, screener: Screener, receive: trio.MemoryReceiveChannel[str]
    ) -> None:
        """The bot's messages, in order, each checked by the moderation endpoint as a
        person's is and then stored and delivered. A flagged one is still delivered (the
        session has sent it; withheld, the chat would no longer be the session's) and
        recorded as ``bot_message_flagged``."""
        async for text in receive:
            try:
                result = await screener.screen(text, sender="bot", room=self.id)
                if result.flagged:
                    self.server.records.record(
                        "bot_message_flagged",
                        {"chat": chat.number, "categories": list(result.categories)},
                        room=self.id,
                    )
                stored = self.server.store.add_message(
                    self.id, "witness", text, self.server.records.wall_iso(), chat.number
                )
                self.deliver(stored)
            finally:
                chat.screening -= 1
                self.wake()

    async def _run_bot(self, chat: Chat, setup: BotSetup) -> None:
        started = self.server.records.wall()
        self.server.records.record(
            "session_header",
            {
                "chat": chat.number,
                "started": started.isoformat(),
                "settings": setup.settings.model_dump(mode="json"),
                "condition": setup.condition.model_dump(mode="json"),
                "meta": {"study": self.server.study.name},
            },
            room=self.id,
        )
        async with open_session(
            setup.bot,
            setup.settings,
            sink=chat,
            session_id=self.id if len(self.chats) == 1 else f"{self.id}-{chat.number}",
            condition=setup.condition,
            meta={"study": self.server.study.name},
            started=started,
        ) as session:
            chat.session = session
            chat.opened.set()
            while True:  # the room's loop applies the end rule; it looks on every change
                await session.wait_changed()
                self.wake()
