"""The pseudo-dialogue generator's prompts (method.md, "Self-directed pseudo-dialogue").

They follow the paper's instruction list item by item, in our own words: learn the
person's style from the real chats; write new chats between the person and another
human in the same line format; short, possibly unfinished messages on both sides;
punctuation only as the person uses it and emoji not in every message; a natural
exchange in which the partner does not only ask and the person does not only agree,
staying on the topic; in burst mode several timestamped messages per side and round,
spaced like the person's own.

The instructions depend only on the mode and the number of rounds per topic, never on the
topic, so they and the persona history form a prefix that stays the same for a whole
chain. Topics appear in the growing dialogue as one header line per chat, and the
per-call task names what to write now.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from sdtt.dialogue.condition import ChatMode
from sdtt.dialogue.render import LABELS, fold_text, format_time

PROMPT_VERSION = 1
"""Bumped whenever the wording below changes, and stored with every chain."""

_COMMON = """\
You write realistic text-message chats for a research study on how people really text.
Below are real chats of one person. Their own messages are the lines marked "Response"; \
the lines marked "User" were written by the people they talked to. Study how this person \
writes: tone, choice of words, spelling, capitalisation, punctuation, emoji, and the \
things they like to talk about.
Then write new chats between this person (the "Response" side) and another ordinary \
human (the "User" side), in exactly the line format of the records: one message per \
line, "User: [YYYY-MM-DD HH:MM:SS] text" or "Response: [YYYY-MM-DD HH:MM:SS] text".
- Both sides write short messages, one sentence or less, often unfinished, as people do \
when texting.
- Use punctuation only the way the person does; use emoji now and then, not in every \
message.
- Make it a natural exchange: the User does not just fire off questions, and the Response \
side does not just agree; it sometimes asks back or brings up something related, but \
both stay on the chat's topic.
- A round is the User's message(s) followed by the Response side's message(s)."""

_PINGPONG = """\
- In every round each side sends exactly one message: one User line, then one Response \
line."""

_BURST = """\
- In every round each side sends several messages in a row (more than three when it \
feels natural), each on its own line with its own timestamp. Timestamps only go \
forward, with gaps like those between the person's messages in the records."""

_OUTPUT = "- Write only chat lines: no title, no comments, no blank lines."


def generator_instructions(mode: ChatMode) -> str:
    """The standing instructions of a pseudo-dialogue chain in ``mode``."""
    return "\n".join((_COMMON, _BURST if mode == "burst" else _PINGPONG, _OUTPUT))


def topic_header(topic: str) -> str:
    """The line that opens a generated chat in the dialogue: which topic it is about."""
    return f"(New chat. Topic: {fold_text(topic)})"


def start_task(topic: str, rounds: int, start: datetime) -> str:
    """Ask for a new chat of ``rounds`` rounds on ``topic`` that begins at ``start``."""
    return (
        f"Write a new chat of {rounds} rounds about this topic: {fold_text(topic)}. "
        f"It begins at {format_time(start)} with a User line. Write only the chat lines."
    )


def continue_task(topic: str, rounds: int) -> str:
    """Ask for ``rounds`` more rounds of the chat that the dialogue ends with."""
    plural = "round" if rounds == 1 else "rounds"
    return (
        f"The chat about {fold_text(topic)} above is not finished. Continue it from its last "
        f"line with {rounds} more {plural}. Write only the new lines, not the ones above."
    )


def line_prefix(side: Literal["user", "response"], time: datetime | None = None) -> str:
    """The start of a chat line a completion model continues: label and ``[``.

    With ``time`` the timestamp is given too, and the model writes only the text.
    """
    if time is None:
        return f"{LABELS[side]}: ["
    return f"{LABELS[side]}: [{format_time(time)}]"
