"""Telegram Desktop JSON exports (``result.json``).

A single-chat export is ``{"name", "type", "messages": [...]}``; a full account export
holds the chats under ``chats.list`` and needs ``--chat`` when there are several. Each
message has ``type`` (``"message"`` or ``"service"``; service lines are dropped),
``date`` (local time without zone, labelled with ``--timezone``; ``date_unixtime`` is
used when ``date`` is absent), ``from`` and ``text``, a string or a list of strings and
entity objects ``{"type": ..., "text": ...}``. Forwarded messages (``forwarded_from``)
were written by someone else and are dropped; media without a caption become media
messages.
"""

from __future__ import annotations

import argparse
from collections import Counter
from datetime import tzinfo
from pathlib import Path
from typing import Any

from sdtt.errors import InputError
from sdtt.personas.conversations import ChatMessage, normalize_name
from sdtt.personas.importers.common import (
    FileImporter,
    ParsedChat,
    add_message,
    expect_dict,
    expect_list,
    json_type,
    load_json,
    optional_str,
    parse_iso_time,
    time_from_epoch,
)

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


def message_text(value: Any, path: Path, where: str) -> str:
    """The plain text of a Telegram ``text`` field (string or list of entities)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise InputError(
            f"should be text or a list of text pieces, not {json_type(value)}.",
            path=path,
            field=f"{where}.text",
        )
    pieces: list[str] = []
    for index, piece in enumerate(value):
        if isinstance(piece, str):
            pieces.append(piece)
        elif isinstance(piece, dict) and isinstance(piece.get("text", ""), str):
            pieces.append(piece.get("text", ""))
        else:
            raise InputError(
                f"should be text or an entity with a 'text', not {json_type(piece)}.",
                path=path,
                field=f"{where}.text[{index}]",
            )
    return "".join(pieces)


def _select_chat(
    root: dict[str, Any], path: Path, wanted: str | None
) -> tuple[dict[str, Any], str]:
    if "messages" in root:
        return root, ""
    chats = root.get("chats")
    if chats is None:
        raise InputError(
            "has neither 'messages' nor 'chats'.",
            path=path,
            hint="Give the result.json of a Telegram Desktop export in JSON format "
            "(Settings > Advanced > Export Telegram data, format: JSON).",
        )
    chat_list = expect_list(expect_dict(chats, path, "chats").get("list"), path, "chats.list")
    candidates = [
        (expect_dict(chat, path, f"chats.list[{index}]"), f"chats.list[{index}]")
        for index, chat in enumerate(chat_list)
    ]
    if wanted is None and len(candidates) == 1:
        return candidates[0]
    names = [str(chat.get("name") or chat.get("id") or "?") for chat, _ in candidates]
    if wanted is not None:
        key = normalize_name(wanted)
        for (chat, where), name in zip(candidates, names, strict=True):
            if normalize_name(name) == key or str(chat.get("id")) == wanted:
                return chat, where
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
    root = expect_dict(load_json(data, path), path, "(top level)")
    chat_obj, prefix = _select_chat(root, path, chat)
    base = f"{prefix}.messages" if prefix else "messages"
    items = expect_list(chat_obj.get("messages"), path, base)
    messages: list[ChatMessage] = []
    dropped: Counter[str] = Counter()
    for index, item in enumerate(items):
        where = f"{base}[{index}]"
        record = expect_dict(item, path, where)
        if record.get("type", "message") != "message":
            dropped["system"] += 1
            continue
        if record.get("forwarded_from") is not None:
            dropped["forwarded"] += 1
            continue
        stamp = optional_str(record, "date", path, where)
        if stamp is not None:
            time = parse_iso_time(stamp, zone, path=path, field=f"{where}.date")
        else:
            unix = optional_str(record, "date_unixtime", path, where)
            if unix is None or not unix.strip().isdigit():
                raise InputError("has no 'date'.", path=path, field=where)
            time = time_from_epoch(float(unix), zone, path=path, field=f"{where}.date_unixtime")
        sender = optional_str(record, "from", path, where) or optional_str(
            record, "from_id", path, where
        )
        if not sender or not sender.strip():
            sender = "Deleted Account"
        text = message_text(record.get("text"), path, where).strip()
        add_message(
            messages,
            dropped,
            sender=sender,
            text=text,
            time=time,
            has_media=any(key in record for key in _MEDIA_KEYS),
        )
    title = chat_obj.get("name")
    people = [[title]] if isinstance(title, str) and title.strip() else []
    return ParsedChat(messages=messages, dropped=dropped, people=people)


class TelegramImporter(FileImporter):
    """``sdtt persona import telegram result.json --me NAME``."""

    name = "telegram"
    help = "a Telegram Desktop chat export (result.json)"
    file_help = "The result.json of a Telegram Desktop export in JSON format."

    def add_format_arguments(self, parser: argparse.ArgumentParser) -> None:
        """``--chat``."""
        parser.add_argument(
            "--chat",
            metavar="NAME",
            help="In a full account export, the chat to import (its name or id).",
        )

    def parse(self, data: bytes, path: Path, args: argparse.Namespace, zone: tzinfo) -> ParsedChat:
        """Read the export."""
        return parse_telegram(data, path, zone=zone, chat=args.chat)


IMPORTER = TelegramImporter()
