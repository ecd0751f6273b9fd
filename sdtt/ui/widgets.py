"""Chat widgets: message bubbles on two sides, the typing indicator and the status line."""

from __future__ import annotations

from datetime import datetime, tzinfo

from rich.text import Text
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Static

from sdtt.dialogue.message import Side
from sdtt.redact import printable


def clock_label(time: datetime, tz: tzinfo | None = None) -> str:
    """``HH:MM`` of ``time`` in ``tz`` (the terminal's local zone when ``None``)."""
    return time.astimezone(tz).strftime("%H:%M")


class Bubble(Static):
    """One chat message: its text and, once the engine has taken it, its time."""

    def __init__(self, side: Side, text: str, time: str | None) -> None:
        super().__init__(classes=f"bubble {side}")
        self.side = side
        self.text = text
        self.time = time
        self.update(self._render_text())

    def _render_text(self) -> Text:
        # A Text, never markup: chat text is shown as typed, minus terminal control codes.
        content = Text(printable(self.text))
        content.append("\n")
        content.append(self.time or "sending...", style="dim italic" if self.time is None else "")
        return content

    def stamp(self, time: str) -> None:
        """Show the time the engine gave the message."""
        self.time = time
        self.remove_class("pending")
        self.update(self._render_text())


class MessageRow(Horizontal):
    """A full-width row holding one bubble, aligned to its side."""

    def __init__(self, bubble: Bubble) -> None:
        super().__init__(bubble, classes=f"row {bubble.side}")
        self.bubble = bubble


class Notice(Static):
    """A centred line in the message list (errors, the end-of-chat summary)."""


class MessageList(VerticalScroll):
    """The scrolling list of messages, newest at the bottom."""

    can_focus = False

    def add_message(self, side: Side, text: str, time: str | None) -> Bubble:
        """Append a bubble and scroll to it."""
        bubble = Bubble(side, text, time)
        if time is None:
            bubble.add_class("pending")
        self.mount(MessageRow(bubble))
        self.scroll_end(animate=False)
        return bubble

    def add_notice(self, text: str, *, kind: str = "info") -> Notice:
        """Append a centred notice line."""
        notice = Notice(Text(text), classes=f"notice {kind}")
        self.mount(notice)
        self.scroll_end(animate=False)
        return notice

    def bubbles(self) -> list[Bubble]:
        """Every bubble, oldest first."""
        return list(self.query(Bubble))


class TypingIndicator(Static):
    """ "typing..." under the messages while the bot types."""

    def __init__(self, label: str) -> None:
        super().__init__(Text(f"{label} is typing..."), id="typing")
        self.display = False

    @property
    def showing(self) -> bool:
        """Whether the indicator is visible."""
        return bool(self.display)


class StatusLine(Static):
    """Turn count against the goal; model and mode unless a participant is chatting."""
