"""Discord channel or DM exports made with DiscordChatExporter (JSON format).

The file is ``{"guild": {...}, "channel": {...}, "messages": [...]}``; each message has an
ISO ``timestamp`` with offset (converted to ``--timezone``), ``type`` (``"Default"`` and
``"Reply"`` are kept; joins, pins, calls and other system events are dropped),
``content`` and ``author`` ``{name, nickname, isBot}``. Bots' messages are dropped.
``--me`` and ``--with`` accept a user name or a nickname. Raw mentions ``<@id>`` are
written as ``@name`` from the message's ``mentions``.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from datetime import tzinfo
from pathlib import Path

from sdtt.errors import InputError
from sdtt.personas.conversations import ChatMessage
from sdtt.personas.importers.common import (
    FileImporter,
    ParsedChat,
    add_message,
    expect_dict,
    expect_list,
    load_json,
    optional_str,
    parse_iso_time,
    required_str,
)

_KEPT_TYPES = {"Default", "Reply"}
_MENTION = re.compile(r"<@!?(\d+)>")
_MEDIA_KEYS = ("attachments", "stickers", "embeds")


def resolve_mentions(content: str, names: dict[str, str]) -> str:
    """``<@id>`` written as ``@name`` when the id is known."""
    return _MENTION.sub(lambda match: "@" + names.get(match.group(1), match.group(1)), content)


def parse_discord(data: bytes, path: Path, *, zone: tzinfo) -> ParsedChat:
    """Read a DiscordChatExporter JSON export into a :class:`ParsedChat`."""
    root = expect_dict(load_json(data, path), path, "(top level)")
    if "messages" not in root:
        raise InputError(
            "has no 'messages'.",
            path=path,
            hint="Export the channel with DiscordChatExporter in JSON format.",
        )
    items = expect_list(root["messages"], path, "messages")
    messages: list[ChatMessage] = []
    dropped: Counter[str] = Counter()
    aliases: dict[str, set[str]] = {}
    people: list[list[str]] = []
    for index, item in enumerate(items):
        where = f"messages[{index}]"
        record = expect_dict(item, path, where)
        kind = optional_str(record, "type", path, where) or "Default"
        if kind not in _KEPT_TYPES:
            dropped["system"] += 1
            continue
        author = expect_dict(record.get("author"), path, f"{where}.author")
        if author.get("isBot") is True:
            dropped["bot"] += 1
            continue
        sender = required_str(author, "name", path, f"{where}.author")
        nickname = optional_str(author, "nickname", path, f"{where}.author")
        if nickname and nickname != sender:
            aliases.setdefault(sender, set()).add(nickname)
        time = parse_iso_time(
            required_str(record, "timestamp", path, where),
            zone,
            path=path,
            field=f"{where}.timestamp",
        )
        mentioned: dict[str, str] = {}
        for position, mention in enumerate(
            expect_list(record.get("mentions") or [], path, f"{where}.mentions")
        ):
            entry = expect_dict(mention, path, f"{where}.mentions[{position}]")
            name = optional_str(entry, "name", path, f"{where}.mentions[{position}]") or ""
            nick = optional_str(entry, "nickname", path, f"{where}.mentions[{position}]") or ""
            mention_id = entry.get("id")
            if name:
                people.append([name, *([nick] if nick else [])])
                if isinstance(mention_id, str | int):
                    mentioned[str(mention_id)] = nick or name
        content = optional_str(record, "content", path, where) or ""
        content = resolve_mentions(content, mentioned).strip()
        add_message(
            messages,
            dropped,
            sender=sender,
            text=content,
            time=time,
            has_media=any(record.get(key) for key in _MEDIA_KEYS),
        )
    return ParsedChat(messages=messages, dropped=dropped, aliases=aliases, people=people)


class DiscordImporter(FileImporter):
    """``sdtt persona import discord EXPORT.json --me NAME``."""

    name = "discord"
    help = "a Discord channel or DM exported with DiscordChatExporter (JSON)"
    file_help = "The JSON file written by DiscordChatExporter."

    def parse(self, data: bytes, path: Path, args: argparse.Namespace, zone: tzinfo) -> ParsedChat:
        """Read the export."""
        return parse_discord(data, path, zone=zone)


IMPORTER = DiscordImporter()
