"""Replies that break character: a message repeating the writer's own instructions, or
saying the writer is an AI.

Small base models through a chat template echoed their prompt ("- You are a person
texting with someone you have not met before...", "You are not a friend, you're an AI
chat bot."). A chat in which either side does so tells judges nothing, so such a reply is
read as unusable: the bot asks again, and a side that keeps doing it sends nothing that
turn (the event log records an ``OutOfCharacterError``). Each message caught is counted:
per call in the event log, per side in a simulated chat's transcript
(``meta["out_of_character"]``), per condition in the report.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

OUT_OF_CHARACTER = "out_of_character"
"""The transcript meta key of a simulated chat's counts of messages caught out of
character, by side: ``{"bot": 1, "interrogator": 0}``."""

ECHO_WORDS = 6
"""Consecutive words shared with the instructions that make a message an echo of them
(shorter runs, "you are not going to", are ordinary chat)."""

_WORD = re.compile(r"[a-z0-9']+")
_MACHINE = (
    r"(?:an?\s+)?(?:ai|a\.i\.|artificial intelligence|(?:large\s+)?language model|llm"
    r"|ai chat\s?bot|chat\s?bot|virtual assistant|ai assistant)\b"
)
_SAYS_AI = re.compile(
    # The writer about itself: "as an AI", "i'm just a language model".
    rf"\b(?:i\s*am|i\s*'m|as|i\s*was)\s+(?:just\s+|only\s+|really\s+)?{_MACHINE}"
    # Instruction-speak about who "you" are ("You are not a friend, you're an AI chat
    # bot"); an interrogator asking "are you a bot?" or saying "you're a bot lol" is not.
    rf"|\byou\s+are\s+not\s+an?\b[^.?!]{{0,60}}?\byou(?:\s*'re|\s+are)\s+{_MACHINE}",
    re.IGNORECASE,
)


_PLACEHOLDER = re.compile(r"\[YYYY-MM-DD HH:MM:SS\]\s*([^\"\n]+?)\s*\"")
"""The stand-in for the message in a format line of the instructions
(``"Response: [YYYY-MM-DD HH:MM:SS] message"``). A small model given no chat to continue
copied that line, and its stand-in went out as the message ("message.")."""


def _fills_the_format(text: str, placeholder: str) -> bool:
    """Whether ``text`` is the stand-in itself ("message.") or the format line carried on
    from it ('message (in response to the preceding conversation): "..."'): the stand-in,
    then nothing or a note of the form, never words of a sentence ("message me later")."""
    start = text.strip().lower()
    stand_in = placeholder.strip().lower()
    if not start.startswith(stand_in):
        return False
    rest = start[len(stand_in) :].lstrip()
    return rest == "" or rest[0] in ".:([\"'"


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("\u2019", "'"))


def _runs(words: Sequence[str], size: int) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + size]) for i in range(len(words) - size + 1)}


def out_of_character(text: str, instructions: str) -> str | None:
    """Why ``text`` is no chat message of a person (None when it may be one)."""
    if _SAYS_AI.search(text):
        return "it says it is an AI"
    words = _words(text)
    for placeholder in _PLACEHOLDER.findall(instructions):
        if _fills_the_format(text, placeholder):
            return f"it sends its instructions' stand-in for a message ({placeholder!r})"
    shared = _runs(words, ECHO_WORDS) & _runs(_words(instructions), ECHO_WORDS)
    if shared:
        return f"it repeats its instructions ({' '.join(next(iter(sorted(shared))))}...)"
    return None
