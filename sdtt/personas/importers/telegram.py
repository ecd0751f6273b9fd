"""Telegram Desktop JSON exports (``result.json``).

A single-chat export is ``{"name", "type", "messages": [...]}``; a full account export
holds the chats under ``chats.list`` and needs ``--chat`` when there are several. Each
message has ``type`` (``"message"`` or ``"service"``; service lines are dropped),
``date`` (local time without zone, labelled with ``--timezone``; ``date_unixtime`` is
used when ``date`` is absent), ``from`` and ``text``, a string or a list of strings and
entity objects ``{"type": ..., "text": ...}`` (``text_entities`` repeats them).
``from_id`` is ``"user123"``, or a number in exports before 2021. Forwarded messages
(``forwarded_from``, even when null for a hidden sender) were written by someone else
and are dropped; an edited message (``edited``) holds its last text; media without a
caption become media messages.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import tzinfo
from pathlib import Path
from typing import Annotated, Any

import ijson
from pydantic import BeforeValidator, Field

from sdtt.errors import InputError
from sdtt.personas.conversations import ChatMessage, normalize_name
from sdtt.personas.importers.build import ChatOutline, ImportResult, ParsedChat, add_message
from sdtt.personas.importers.file_importer import StreamedJsonImporter
from sdtt.personas.importers.options import Flag, ImportOptions
from sdtt.personas.importers.reading import (
    json_events,
    json_items,
    json_outline,
    load_json,
)
from sdtt.personas.importers.shapes import ExportModel, json_type, shape_error, validate
from sdtt.personas.importers.times import parse_iso_time, time_from_epoch

_MESSAGE_LISTS = ("messages.item", "chats.list.item.messages.item")
_MEDIA_KEYS = (
    "photo",
    "file",
    "media_type",
    "sticker_emoji",
    "poll",
    "location_information",
    "contact_information",
    "game_title",
)


def message_text(value: Any) -> str:
    """The plain text of a Telegram ``text`` field (string or list of entities)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise shape_error(f"should be text or a list of text pieces, not {json_type(value)}.")
    pieces: list[str] = []
    for index, piece in enumerate(value):
        if isinstance(piece, str):
            pieces.append(piece)
        elif isinstance(piece, dict) and isinstance(piece.get("text", ""), str):
            pieces.append(piece.get("text", ""))
        else:
            raise shape_error(
                f"should be text or an entity with a 'text', not {json_type(piece)}.",
                subpath=f"[{index}]",
            )
    return "".join(pieces)


def _user_id(value: Any) -> Any:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


class TelegramMessage(ExportModel):
    """One entry of a chat's ``messages``."""

    type: Any = "message"
    """``"message"``, or ``"service"`` for joins, pins, calls...: only messages are kept."""
    forwarded_from: Any = None
    date: str | None = None
    """Local time without zone, ISO 8601."""
    date_unixtime: str | None = None
    """Seconds since 1970 as text (newer exports)."""
    sender: str | None = Field(default=None, alias="from")
    from_id: Annotated[str | None, BeforeValidator(_user_id)] = None
    """``"user123"`` (an integer in exports before 2021)."""
    text: Annotated[str, BeforeValidator(message_text)] = ""
    """Text, or a list of text pieces and entities ``{"type", "text"}``, joined."""
    photo: Any = None
    file: Any = None
    media_type: Any = None
    sticker_emoji: Any = None
    poll: Any = None
    location_information: Any = None
    contact_information: Any = None
    game_title: Any = None

    @property
    def has_media(self) -> bool:
        """Whether a photo, file, sticker, poll... comes with the message."""
        return not self.model_fields_set.isdisjoint(_MEDIA_KEYS)


class TelegramChat(ExportModel):
    """One chat: the whole file of a single-chat export, an entry of ``chats.list`` else."""

    name: Any = None
    id: Any = None
    messages: list[Any]
    """Validated one at a time as :class:`TelegramMessage`, as they are read."""


class TelegramChats(ExportModel):
    """The ``chats`` of a full account export."""

    chats: list[dict[str, Any]] = Field(alias="list")


def _select_chat(root: dict[str, Any], path: Path, wanted: str | None) -> tuple[Any, int | None]:
    """The chat to read and its index in ``chats.list`` (None: the export is one chat)."""
    if "messages" in root:
        return root, None
    chats = root.get("chats")
    if chats is None:
        raise InputError(
            "has neither 'messages' nor 'chats'.",
            path=path,
            hint="Give the result.json of a Telegram Desktop export in JSON format "
            "(Settings > Advanced > Export Telegram data, format: JSON).",
        )
    chat_list = validate(TelegramChats, chats, path, where="chats").chats
    candidates = list(zip(chat_list, range(len(chat_list)), strict=True))
    if wanted is None and len(candidates) == 1:
        return candidates[0]
    names = [str(chat.get("name") or chat.get("id") or "?") for chat, _ in candidates]
    if wanted is not None:
        key = normalize_name(wanted)
        for (chat, index), name in zip(candidates, names, strict=True):
            if normalize_name(name) == key or str(chat.get("id")) == wanted:
                return chat, index
    listing = ", ".join(repr(name) for name in names[:30]) or "none"
    raise InputError(
        (f"has no chat called {wanted!r}" if wanted else "holds several chats")
        + f"; chats: {listing}.",
        path=path,
        field="--chat",
        hint="Pass --chat NAME to choose one.",
    )


def parse_telegram(data: bytes, path: Path, *, zone: tzinfo, chat: str | None = None) -> ParsedChat:
    """Read a Telegram Desktop JSON export into a :class:`ParsedChat`."""
    root = load_json(data, path)

    def entries(chat_obj: Any, index: int | None) -> Iterable[Any]:
        messages = chat_obj.get("messages") if isinstance(chat_obj, dict) else None
        return messages if isinstance(messages, list) else []

    return _read_chat(root, entries, path, zone=zone, chat=chat)


def stream_telegram(path: Path, *, zone: tzinfo, chat: str | None = None) -> ParsedChat:
    """:func:`parse_telegram` reading the file a part at a time (twice: its outline, then
    the chosen chat's messages), so memory holds the messages kept, not the export.

    Raises :class:`JsonStreamFailed` where the file must be read whole instead.
    """
    root = json_outline(path, *_MESSAGE_LISTS)
    return _read_chat(
        root, lambda _, index: _streamed_entries(path, index), path, zone=zone, chat=chat
    )


def _nth_chat_messages(path: Path, wanted: int) -> Iterator[Any]:
    """The messages of ``chats.list[wanted]``, from the file's events."""
    chat = -1
    builder: Any = None
    for prefix, event, value in json_events(path):
        if prefix == "chats.list.item" and event == "start_map":
            chat += 1
            if chat > wanted:
                return
        if chat != wanted:
            continue
        if prefix == "chats.list.item.messages.item" and event in ("start_map", "start_array"):
            if builder is None:
                builder = ijson.ObjectBuilder()
        elif builder is None:
            if prefix == "chats.list.item.messages.item":
                yield value  # a message that is no object: validation names it
            continue
        builder.event(event, value)
        if prefix == "chats.list.item.messages.item" and event in ("end_map", "end_array"):
            yield builder.value
            builder = None


@dataclass(frozen=True)
class _Chosen:
    """The chat chosen in an export: its object (whose message list may be left empty),
    its index in ``chats.list`` (None: the export is one chat), and what the persona
    takes from it besides the messages."""

    chat: Any
    index: int | None
    base: str
    """Where its messages are, for errors: ``messages`` or ``chats.list[N].messages``."""
    people: list[list[str]]
    detected: dict[str, str]


def _choose_chat(root: Any, path: Path, chat: str | None) -> _Chosen:
    root = validate(dict[str, Any], root, path)
    chat_obj, index_in_list = _select_chat(root, path, chat)
    prefix = "" if index_in_list is None else f"chats.list[{index_in_list}]"
    document = validate(TelegramChat, chat_obj, path, where=prefix)
    title = document.name
    return _Chosen(
        chat=chat_obj,
        index=index_in_list,
        base=f"{prefix}.messages" if prefix else "messages",
        people=[[title]] if isinstance(title, str) and title.strip() else [],
        detected={"chat": str(title or document.id or "?")} if prefix and not chat else {},
    )


def _chat_messages(
    entries: Iterable[Any], base: str, path: Path, zone: tzinfo, dropped: Counter[str]
) -> Iterator[ChatMessage]:
    """The messages of a chat's ``entries``; those left out are counted in ``dropped``."""
    kept: list[ChatMessage] = []
    for index, entry in enumerate(entries):
        where = f"{base}[{index}]"
        record = validate(TelegramMessage, entry, path, where=where)
        if record.type != "message":
            dropped["system"] += 1
            continue
        if "forwarded_from" in record.model_fields_set:  # null for a hidden sender
            dropped["forwarded"] += 1
            continue
        if record.date is not None:
            time = parse_iso_time(record.date, zone, path=path, field=f"{where}.date")
        else:
            unix = record.date_unixtime
            if unix is None or not (unix.strip().isascii() and unix.strip().isdigit()):
                raise InputError("has no 'date'.", path=path, field=where)
            time = time_from_epoch(float(unix), zone, path=path, field=f"{where}.date_unixtime")
        sender = record.sender or record.from_id
        if not sender or not sender.strip():
            sender = "Deleted Account"
        add_message(
            kept,
            dropped,
            sender=sender,
            text=record.text.strip(),
            time=time,
            has_media=record.has_media,
        )
        yield from kept
        kept.clear()


def _read_chat(
    root: Any,
    entries: Callable[[Any, int | None], Iterable[Any]],
    path: Path,
    *,
    zone: tzinfo,
    chat: str | None,
) -> ParsedChat:
    """The chat chosen in ``root`` (whose message lists may be left empty), its messages
    given by ``entries(chat, index in chats.list or None)``."""
    chosen = _choose_chat(root, path, chat)
    dropped: Counter[str] = Counter()
    read = _chat_messages(entries(chosen.chat, chosen.index), chosen.base, path, zone, dropped)
    messages = list(read)
    return ParsedChat(
        messages=messages, dropped=dropped, people=chosen.people, detected=chosen.detected
    )


def _streamed_entries(path: Path, index: int | None) -> Iterator[Any]:
    """The messages of the chat at ``index`` of ``chats.list`` (None: the export's own),
    read from the file a part at a time."""
    return json_items(path, "messages.item") if index is None else _nth_chat_messages(path, index)


class TelegramImporter(StreamedJsonImporter):
    """``sdtt persona import telegram result.json --me NAME``."""

    name = "telegram"
    help = "a Telegram Desktop chat export (result.json)"
    file_help = "The result.json of a Telegram Desktop export in JSON format."
    flags = (
        Flag(
            "--chat",
            "chat",
            "In a full account export, the chat to import (its name or id).",
            metavar="NAME",
        ),
    )

    def parse(self, data: bytes, path: Path, options: ImportOptions) -> ParsedChat:
        """Read the export."""
        return parse_telegram(data, path, zone=options.timezone, chat=options.chat)

    def stream(self, path: Path, options: ImportOptions) -> ParsedChat:
        """Read the export a part at a time."""
        return stream_telegram(path, zone=options.timezone, chat=options.chat)

    def first_reading(
        self, path: Path, options: ImportOptions
    ) -> tuple[ChatOutline, Callable[[], Iterable[ChatMessage]]]:
        """The chosen chat's senders and times, and a way to read its messages again."""
        zone = options.timezone
        chosen = _choose_chat(json_outline(path, *_MESSAGE_LISTS), path, options.chat)

        def messages(dropped: Counter[str]) -> Iterator[ChatMessage]:
            entries = _streamed_entries(path, chosen.index)
            return _chat_messages(entries, chosen.base, path, zone, dropped)

        dropped: Counter[str] = Counter()
        outline = ChatOutline.read(
            messages(dropped),
            dropped,
            keep_media=options.keep_media,
            people=chosen.people,
            detected=chosen.detected,
        )
        return outline, lambda: messages(Counter())


IMPORTER = TelegramImporter()


def import_telegram(path: str | Path, options: ImportOptions) -> ImportResult:
    """A persona from a Telegram Desktop export (``result.json``, format JSON).

    A full account export holds several chats: ``options.chat`` names the one to import.
    """
    return IMPORTER.run(path, options)
