"""Rendering messages into the prompt's line format.

One message per line: ``User: [YYYY-MM-DD HH:MM:SS] text`` or ``Response: [...] text``.
Every kind of line break inside a message is folded into a visible separator, so chat
text can never start a line of its own and forge a ``Response:`` line or a timestamp.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime

from sdtt.dialogue.message import Message, Side

TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
LABELS: dict[Side, str] = {"user": "User", "response": "Response"}
LINE_BREAK_FOLD = " / "

# Everything str.splitlines() treats as a boundary, plus other control characters that
# terminals or models may read as a break.
_LINE_BREAKS = re.compile(r"\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_OTHER_CONTROLS = re.compile(r"[\x00-\x08\x0e-\x1b\x1f\x7f]")


def format_time(time: datetime) -> str:
    """The timestamp as shown in prompts (seconds resolution, the message's own zone)."""
    if time.year < 1000:
        # Zero-padded by some platforms' strftime and not by others: left to it.
        return time.strftime(TIME_FORMAT)
    # TIME_FORMAT spelled out: strftime takes several times as long, and every line of
    # every prompt has a timestamp.
    return (
        f"{time.year}-{time.month:02}-{time.day:02} "
        f"{time.hour:02}:{time.minute:02}:{time.second:02}"
    )


def fold_text(text: str) -> str:
    """Make ``text`` safe for one prompt line: fold line breaks, drop control characters."""
    if text.isprintable():
        # No line break or control character (str.isprintable refuses every character
        # the patterns below match): nothing to fold.
        return text.strip()
    folded = _LINE_BREAKS.sub(LINE_BREAK_FOLD, text)
    return _OTHER_CONTROLS.sub("", folded).strip()


def render_message(message: Message) -> str:
    """One message as a prompt line."""
    return f"{LABELS[message.side]}: [{format_time(message.time)}] {fold_text(message.text)}"


def render_messages(messages: Iterable[Message]) -> str:
    """Messages as prompt lines, one per line, without a trailing newline."""
    return "\n".join(render_message(message) for message in messages)


def response_prefix(time: datetime | None = None) -> str:
    """The start of a response line a completion model continues from."""
    if time is None:
        return f"{LABELS['response']}: ["
    return f"{LABELS['response']}: [{format_time(time)}]"
