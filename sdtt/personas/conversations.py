"""From a chat export's messages to a persona's conversations (pure, shared by all formats).

An importer turns its file into :class:`ChatMessage` objects (who wrote what, when). This
module then picks the persona among the participants, assigns sides (the persona is side
B, ``"response"``; the people it talks to are side A, ``"user"``), handles group chats and
splits the stream into conversations wherever nobody wrote for longer than a gap.
"""

from __future__ import annotations

import heapq
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Literal

from sdtt.dialogue.message import RESPONSE, USER, Message
from sdtt.errors import InputError

DEFAULT_GAP = timedelta(hours=1)
"""Silence after which a new conversation starts."""

MessageKind = Literal["text", "media"]


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One message of a chat export before sides are assigned."""

    sender: str
    """The sender's name as the export spells it."""
    text: str
    """The message text (a media message holds a short marker instead)."""
    time: datetime
    """When it was sent, timezone-aware."""
    kind: MessageKind = "text"
    """``"media"`` for a photo, file or sticker without a caption."""
    thread: str | None = None
    """A conversation id given by the source; messages of different threads never mix."""


@dataclass(frozen=True)
class SidedChat:
    """The persona's chat with sides assigned, in time order."""

    messages: list[Message]
    threads: list[str | None]
    """The source thread of each message (parallel to ``messages``)."""
    dropped_others: int
    """Messages of group members left out because ``--with`` named other partners."""


_INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")


def normalize_name(name: str) -> str:
    """A name reduced for comparison: no case, accents, invisible marks or extra spaces."""
    decomposed = unicodedata.normalize("NFKD", _INVISIBLE.sub("", name))
    cleaned = "".join(char for char in decomposed if not unicodedata.combining(char))
    cleaned = cleaned.strip().lstrip("~").strip()
    return " ".join(cleaned.split()).casefold()


def count_senders(messages: Iterable[ChatMessage]) -> Counter[str]:
    """How many messages each sender wrote."""
    return Counter(message.sender for message in messages)


def _listing(counts: Mapping[str, int], limit: int = 20) -> str:
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    shown = ", ".join(f"{name!r} ({count})" for name, count in ranked[:limit])
    more = len(ranked) - limit
    return shown + (f" and {more} more" if more > 0 else "")


def find_participant(
    wanted: str,
    counts: Mapping[str, int],
    aliases: Mapping[str, Collection[str]] | None = None,
    *,
    option: str = "--me",
    path: str | Path | None = None,
) -> str:
    """The sender that ``wanted`` names: exactly, else ignoring case, spacing and marks
    (``" ann  SMITH"`` for ``"Ann Smith"``), of the sender's name or of one of its aliases.

    ``aliases`` maps a sender to other names it goes by (a nickname, a real name). Part of
    a name ("Jordan" for "Jordan Lee") is never taken, even when one sender fits: the
    persona must be the person meant, so the error lists the senders it could be. An
    unknown name raises :class:`InputError` listing the participants.
    """
    if wanted in counts:
        return wanted
    key = normalize_name(wanted)

    def names(sender: str) -> list[str]:
        return [normalize_name(name) for name in (sender, *(aliases or {}).get(sender, ()))]

    matches = sorted(sender for sender in counts if key and key in names(sender))
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise InputError(
            f"{wanted!r} fits several participants: {', '.join(repr(m) for m in matches)}.",
            path=path,
            field=option,
            hint=f"Pass the exact name to {option}.",
        )
    partial = sorted(
        sender
        for sender in counts
        if key
        and any(
            name.startswith(key) or key in name.split() or f" {key}" in f" {name}"
            for name in names(sender)
        )
    )
    if partial:
        raise InputError(
            f"{wanted!r} is only part of a name; it could be: "
            f"{', '.join(repr(m) for m in partial)}.",
            path=path,
            field=option,
            hint=f"Pass the whole name, as the export spells it, to {option}.",
        )
    raise InputError(
        f"nobody called {wanted!r} wrote in this chat; participants (messages): "
        f"{_listing(counts)}.",
        path=path,
        field=option,
        hint=f"Pass one of these names to {option}.",
    )


def kept_senders(
    counts: Mapping[str, int],
    me: str,
    partners: Collection[str] = (),
    *,
    merge_others: bool = False,
    path: str | Path | None = None,
) -> set[str]:
    """The senders whose messages make the persona's chat, from how many messages each
    wrote (``counts``): ``me`` and ``partners``, or everybody.

    A group chat (more than one other participant) without ``partners`` needs
    ``merge_others``; the choice is the user's because merging changes what the persona's
    replies answer.
    """
    others = sorted(sender for sender in counts if sender != me)
    if not others:
        raise InputError(
            f"only {me!r} wrote in this chat; a persona needs the other side of the "
            "conversation too.",
            path=path,
            hint="Choose an export with at least two participants.",
        )
    if not partners and len(others) > 1 and not merge_others:
        raise InputError(
            f"this is a group chat: besides the persona, {len(others)} people wrote: "
            f"{_listing({name: counts[name] for name in others})}.",
            path=path,
            field="--with",
            hint="Pass --with NAME (repeatable) to keep only the persona's exchanges with "
            "those people, or --merge-others to treat everybody else as one User side.",
        )
    return {me, *partners} if partners else set(counts)


def assign_sides(
    messages: Sequence[ChatMessage],
    me: str,
    partners: Collection[str] = (),
    *,
    merge_others: bool = False,
    path: str | Path | None = None,
) -> SidedChat:
    """Make ``me`` side B and the others side A, sorted by time (stable).

    With ``partners`` only their messages and the persona's are kept; see
    :func:`kept_senders` for group chats.
    """
    kept = kept_senders(count_senders(messages), me, partners, merge_others=merge_others, path=path)
    ordered = sorted(
        (message for message in messages if message.sender in kept),
        key=lambda message: message.time,
    )
    sided = [
        Message(
            side=RESPONSE if message.sender == me else USER, text=message.text, time=message.time
        )
        for message in ordered
    ]
    return SidedChat(
        messages=sided,
        threads=[message.thread for message in ordered],
        dropped_others=len(messages) - len(ordered),
    )


def split_conversations(
    messages: Sequence[Message],
    gap: timedelta = DEFAULT_GAP,
    threads: Sequence[str | None] | None = None,
) -> list[list[Message]]:
    """Split time-ordered messages wherever the silence exceeds ``gap``.

    When ``threads`` is given (one entry per message), messages of different threads go
    to different conversations even without a silence; each thread keeps its own order.
    Conversations come in the order of their first messages (ties: the thread seen
    first), as :class:`ConversationSplitter` hands them on.
    """
    conversations: list[list[Message]] = []
    splitter = ConversationSplitter(gap, conversations.append)
    for message, thread in zip(messages, threads or [None] * len(messages), strict=True):
        splitter.add(message, thread)
    splitter.close()
    return conversations


@dataclass
class _Open:
    """A conversation a later message may still join: its place in the order
    :func:`split_conversations` gives (first message's time, its thread's first
    appearance, its number in the thread) and its messages."""

    key: tuple[datetime, int, int]
    messages: list[Message]


class ConversationSplitter:
    """:func:`split_conversations`, a message at a time: messages given in time order
    (``add``), each finished conversation handed to ``done`` in the order the whole
    chat's split lists them, as soon as no conversation still open or yet to start can
    come before it. A conversation is finished when its thread has been silent longer
    than ``gap``, so memory holds the conversations under way, not the chat."""

    def __init__(self, gap: timedelta, done: Callable[[list[Message]], None]) -> None:
        self.gap = gap
        self._done = done
        self._open: dict[str | None, _Open] = {}
        self._ranks: dict[str | None, int] = {}
        self._started: Counter[str | None] = Counter()
        self._finished: list[tuple[tuple[datetime, int, int], list[Message]]] = []

    def add(self, message: Message, thread: str | None = None) -> None:
        """The next message (none earlier than the one before) of ``thread``."""
        now = message.time
        ended = [
            name
            for name, conversation in self._open.items()
            if now - conversation.messages[-1].time > self.gap
        ]
        for name in ended:
            self._finish(name)
        conversation = self._open.get(thread)
        if conversation is None:
            rank = self._ranks.setdefault(thread, len(self._ranks))
            conversation = _Open((now, rank, self._started[thread]), [])
            self._started[thread] += 1
            self._open[thread] = conversation
        conversation.messages.append(message)
        if self._finished:
            self._hand_on()

    def close(self) -> None:
        """The chat has ended: every conversation is handed on."""
        for name in list(self._open):
            self._finish(name)
        self._hand_on()

    def _finish(self, thread: str | None) -> None:
        conversation = self._open.pop(thread)
        heapq.heappush(self._finished, (conversation.key, conversation.messages))

    def _hand_on(self) -> None:
        # A finished conversation began before the message that finished it, so before
        # any conversation yet to start: only those still open could come first.
        first_open = min((conversation.key for conversation in self._open.values()), default=None)
        while self._finished and (first_open is None or self._finished[0][0] < first_open):
            self._done(heapq.heappop(self._finished)[1])
