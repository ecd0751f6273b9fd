"""The live chat screen: the burst engine runs inside it (trio guest mode) and the screen
is its event sink.

The Input keeps focus and takes messages while the bot thinks or types, so the user can
send bursts. Each submission goes to the engine at once through a memory channel and
shows in the list straight away (marked "sending..." until the engine has taken it, which
in ping-pong mode waits for the bot's turn to end).
"""

from __future__ import annotations

from collections import deque
from datetime import tzinfo
from typing import ClassVar

import trio
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer, Input

from sdtt.engine.events import (
    ErrorEvent,
    Event,
    MessageSent,
    TypingStarted,
    TypingStopped,
    UserMessage,
)
from sdtt.engine.live_chat import INBOX_BUFFER, ChatOutcome, LiveChat, drive_chat
from sdtt.errors import SdttError
from sdtt.ui.guest import TrioGuest
from sdtt.ui.widgets import Bubble, MessageList, StatusLine, TypingIndicator, clock_label

BOT_LABEL = "B"
"""What the bot is called on screen: never the persona's or the model's name."""


class ChatScreen(Screen[ChatOutcome | None]):
    """Chat with the persona bot of ``live``; dismissed with the outcome when closed."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "end_chat", "End chat", priority=True),
        Binding("ctrl+c", "end_chat", "End chat", show=False, priority=True),
        Binding("pageup", "scroll_up", "Scroll up", show=False),
        Binding("pagedown", "scroll_down", "Scroll down", show=False),
    ]

    def __init__(
        self,
        live: LiveChat,
        *,
        clock: trio.abc.Clock | None = None,
        tz: tzinfo | None = None,
    ) -> None:
        super().__init__()
        self.live = live
        self.clock = clock
        """The trio clock (tests pass a fast ``MockClock``); the real clock when ``None``."""
        self.tz = tz
        self.guest = TrioGuest()
        self.outcome: ChatOutcome | None = None
        self.error: BaseException | None = None
        self.ended = False
        self.turns = 0
        self._pending: deque[Bubble] = deque()
        self._last_side: str | None = None
        self._leaving = False
        self._inbox_send, self._inbox_recv = trio.open_memory_channel[str](INBOX_BUFFER)

    def compose(self) -> ComposeResult:
        """Status line, messages, typing indicator, input, footer."""
        yield StatusLine(id="status")
        yield MessageList(id="messages")
        yield TypingIndicator(BOT_LABEL)
        yield Input(placeholder="Type a message and press Enter", id="say")
        yield Footer()

    # ----------------------------------------------------------------- lifecycle

    def on_mount(self) -> None:
        """Start the engine and focus the input."""
        self._show_status()
        self.query_one("#say", Input).focus()
        self.guest.start(self._run, on_done=self._engine_done, clock=self.clock)

    async def on_unmount(self) -> None:
        """Never leave the trio run behind (the app may close without 'End chat')."""
        self._leaving = True
        await self.guest.stop()

    async def _run(self) -> None:
        self.outcome = await drive_chat(
            self.live,
            self._inbox_recv,
            sink=self,
            on_opened=self._opened,
            on_turns_done=self._turns_done,
        )

    def _opened(self, outcome: ChatOutcome) -> None:
        self.outcome = outcome

    def _turns_done(self) -> None:
        say = self.query_one("#say", Input)
        say.disabled = True
        say.placeholder = "That was the last turn."

    def _engine_done(self, error: BaseException | None) -> None:
        if error is not None and not isinstance(error, trio.Cancelled):
            self.error = error
        self.ended = True
        if self._leaving:
            return
        self.query_one(TypingIndicator).display = False
        say = self.query_one("#say", Input)
        say.disabled = True
        say.placeholder = "The chat has ended. Press Ctrl+Q to leave."
        messages = self.query_one(MessageList)
        if self.error is not None:
            problem = str(self.error) if isinstance(self.error, SdttError) else repr(self.error)
            messages.add_notice(f"The chat stopped: {problem}", kind="error")
        messages.add_notice(self.summary())
        self._show_status()

    def summary(self) -> str:
        """What the user sees when the chat ends (participant mode hides the setup)."""
        outcome = self.outcome
        if outcome is None:
            return "No chat was recorded."
        done = "Chat finished" if outcome.finished else "Chat ended"
        lines = [f"{done}: {outcome.turns} turn(s), {outcome.messages} message(s)."]
        if not self.live.participant:
            lines.append(
                f"Persona {self.live.persona.name}, model {self.live.model_name}, "
                f"{self.live.mode} mode."
            )
        lines.append(f"Transcript saved to {outcome.transcript_path}")
        return "\n".join(lines)

    async def action_end_chat(self) -> None:
        """Stop the engine (the files keep every message) and leave with the outcome."""
        self._leaving = True
        await self.guest.stop()
        self.dismiss(self.outcome)

    def action_scroll_up(self) -> None:
        """Scroll the message list up a page."""
        self.query_one(MessageList).scroll_page_up()

    def action_scroll_down(self) -> None:
        """Scroll the message list down a page."""
        self.query_one(MessageList).scroll_page_down()

    # ----------------------------------------------------------------- input

    @on(Input.Submitted, "#say")
    def send(self, event: Input.Submitted) -> None:
        """Hand the message to the engine at once and show it."""
        text = event.value.strip()
        if not text or self.ended or event.input.disabled:
            return
        event.input.clear()
        try:
            self._inbox_send.send_nowait(text)
        except trio.WouldBlock:
            self.notify("Too many messages waiting; slow down a little.", severity="warning")
            event.input.value = text
            return
        self._pending.append(self.query_one(MessageList).add_message("user", text, None))

    # ----------------------------------------------------------------- event sink

    def emit(self, event: Event) -> None:
        """Show one engine event (called from the session's trio tasks, same thread)."""
        if self._leaving:
            return
        messages = self.query_one(MessageList)
        typing = self.query_one(TypingIndicator)
        if isinstance(event, UserMessage):
            self._last_side = "user"
            label = clock_label(event.time, self.tz)
            if self._pending:
                self._pending.popleft().stamp(label)
            else:
                messages.add_message("user", event.text, label)
        elif isinstance(event, MessageSent):
            messages.add_message("response", event.text, clock_label(event.time, self.tz))
            self._count_turns()
            self._last_side = "response"
            self._show_status()
        elif isinstance(event, TypingStarted):
            typing.display = True
        elif isinstance(event, TypingStopped):
            typing.display = False
        elif isinstance(event, ErrorEvent):
            messages.add_notice(f"The bot could not answer ({event.kind}).", kind="error")

    def _count_turns(self) -> None:
        # A turn is answered when a bot message follows a user message (method.md).
        if self._last_side == "user":
            self.turns += 1

    def _show_status(self) -> None:
        parts = [f"turn {min(self.turns, self.live.turns)}/{self.live.turns}"]
        if not self.live.participant:
            parts += [self.live.model_name, self.live.mode]
        if self.ended:
            parts.append("ended")
        self.query_one(StatusLine).update(Text(" · ".join(parts)))
