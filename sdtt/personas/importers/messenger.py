"""Facebook Messenger JSON exports ("Download your information", format JSON).

A conversation folder holds ``message_1.json``, ``message_2.json``...: give one file or
the folder. Each file has ``participants`` (``[{"name": ...}]``) and ``messages``,
newest first, with ``sender_name``, ``timestamp_ms`` (converted to ``--timezone``) and
``content``. Facebook writes the text's UTF-8 bytes as if they were Latin-1 characters
("cafÃ©" for "café"); every string is decoded back. Calls, joins and reactions are
dropped, unsent messages too, and photos, videos, stickers and files without text become
media messages.

The newer end-to-end encrypted chat export (``senderName``, ``timestamp``, ``text``,
``isUnsent``, ``media``; proper UTF-8) is read as well.
"""

from __future__ import annotations

import argparse
import hashlib
import re
from collections import Counter
from datetime import tzinfo
from pathlib import Path
from typing import Any

from sdtt.errors import InputError
from sdtt.personas.conversations import ChatMessage
from sdtt.personas.importers.common import (
    MEDIA_TEXT,
    FileImporter,
    ParsedChat,
    expect_dict,
    expect_list,
    json_type,
    load_json,
    read_bytes,
    time_from_epoch,
)

_MEDIA_KEYS = ("photos", "videos", "audio_files", "gifs", "sticker", "files", "media")
_SYSTEM_TYPES = {"Call", "Subscribe", "Unsubscribe"}
_AUTO_MEDIA = re.compile(
    r".{1,100} sent (?:an attachment|a photo|a video|a GIF|a sticker|a voice message|a link"
    r"|\d+ photos|\d+ videos)\."
)
_SYSTEM_TEXT = re.compile(
    r".{1,100} reacted .{1,20} to your message ?"
    r"|You are now connected on Messenger\.?"
    r"|Say hi to your new Facebook friend.*"
    r"|.{1,100} (?:named the group|changed the group photo|set the nickname"
    r"|set (?:his|her|their|your) own nickname|started a (?:video )?call"
    r"|joined the (?:video )?call|left the group).*",
    re.DOTALL,
)
_UNSENT = re.compile(r".{1,100} unsent a message\.?")
_FOLDER_HINT = "Give a message_N.json file of a Messenger conversation, or its folder."


def fix_mojibake(text: str) -> str:
    """Undo Facebook's encoding: UTF-8 bytes stored as Latin-1 characters.

    Text that is not such a mix (already proper, or with characters beyond Latin-1) is
    returned unchanged.
    """
    try:
        return text.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return text


def _string(record: dict[str, Any], key: str, path: Path, where: str) -> str | None:
    value = record.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(
            f"should be text, not {json_type(value)}.", path=path, field=f"{where}.{key}"
        )
    return fix_mojibake(value)


def _time(record: dict[str, Any], key: str, path: Path, where: str, zone: tzinfo) -> Any:
    value = record.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(
            "should be milliseconds since 1970 (a number).", path=path, field=f"{where}.{key}"
        )
    return time_from_epoch(value / 1000, zone, path=path, field=f"{where}.{key}")


def _participants(root: dict[str, Any], path: Path) -> list[str]:
    names: list[str] = []
    for index, item in enumerate(expect_list(root.get("participants", []), path, "participants")):
        if isinstance(item, str):
            names.append(fix_mojibake(item))
        else:
            entry = expect_dict(item, path, f"participants[{index}]")
            name = _string(entry, "name", path, f"participants[{index}]")
            if name:
                names.append(name)
    return names


def _read_document(
    root: dict[str, Any], path: Path, zone: tzinfo, dropped: Counter[str]
) -> list[ChatMessage]:
    items = expect_list(root.get("messages"), path, "messages")
    messages: list[ChatMessage] = []
    for index, item in enumerate(items):
        where = f"messages[{index}]"
        record = expect_dict(item, path, where)
        new_format = "senderName" in record
        sender = _string(record, "senderName" if new_format else "sender_name", path, where)
        if not sender:
            raise InputError("has no sender name.", path=path, field=where)
        time = _time(record, "timestamp" if new_format else "timestamp_ms", path, where, zone)
        if record.get("isUnsent" if new_format else "is_unsent") is True:
            dropped["deleted"] += 1
            continue
        kind = record.get("type")
        if not new_format and isinstance(kind, str) and kind in _SYSTEM_TYPES:
            dropped["system"] += 1
            continue
        text = (_string(record, "text" if new_format else "content", path, where) or "").strip()
        has_media = any(record.get(key) for key in _MEDIA_KEYS)
        if _UNSENT.fullmatch(text):
            dropped["deleted"] += 1
        elif _SYSTEM_TEXT.fullmatch(text):
            dropped["system"] += 1
        elif not text or (has_media and _AUTO_MEDIA.fullmatch(text)):
            if has_media or text:
                messages.append(
                    ChatMessage(sender=sender, text=MEDIA_TEXT, time=time, kind="media")
                )
            else:
                dropped["empty"] += 1
        else:
            messages.append(ChatMessage(sender=sender, text=text, time=time))
    if len(messages) > 1 and messages[0].time > messages[-1].time:
        messages.reverse()  # newest first in the file; equal times then keep their order
    return messages


def parse_messenger(documents: list[tuple[Path, bytes]], *, zone: tzinfo) -> ParsedChat:
    """Read the ``message_N.json`` files of one Messenger conversation."""
    messages: list[ChatMessage] = []
    dropped: Counter[str] = Counter()
    people: list[list[str]] = []
    for path, data in documents:
        root = expect_dict(load_json(data, path), path, "(top level)")
        if "messages" not in root:
            raise InputError("has no 'messages'.", path=path, hint=_FOLDER_HINT)
        people += [[name] for name in _participants(root, path)]
        title = root.get("title", root.get("threadName"))
        if isinstance(title, str) and title.strip():
            people.append([fix_mojibake(title)])
        messages += _read_document(root, path, zone, dropped)
    return ParsedChat(messages=messages, dropped=dropped, people=people)


def _part_number(path: Path) -> int:
    digits = re.findall(r"\d+", path.stem)
    return int(digits[-1]) if digits else 0


class MessengerImporter(FileImporter):
    """``sdtt persona import messenger message_1.json --me NAME`` (or the folder)."""

    name = "messenger"
    help = "a Facebook Messenger conversation (message_N.json, or its folder)"
    file_help = "A message_N.json file, or the conversation folder holding them."

    def documents(self, path: Path) -> list[tuple[Path, bytes]]:
        """The files to read: ``path`` itself, or the ``message_*.json`` in the folder."""
        if path.is_dir():
            files = sorted(path.glob("message_*.json"), key=_part_number)
            if not files:
                raise InputError("holds no message_N.json file.", path=path, hint=_FOLDER_HINT)
            return [(file, read_bytes(file)) for file in files]
        return [(path, read_bytes(path))]

    def parse(self, data: bytes, path: Path, args: argparse.Namespace, zone: tzinfo) -> ParsedChat:
        """Read one file."""
        return parse_messenger([(path, data)], zone=zone)

    def load(self, path: Path, args: argparse.Namespace, zone: tzinfo) -> tuple[ParsedChat, str]:
        """Read the file or folder; the digest covers every file read."""
        documents = self.documents(path)
        digest = hashlib.sha256(b"".join(data for _, data in documents)).hexdigest()
        return parse_messenger(documents, zone=zone), digest


IMPORTER = MessengerImporter()
