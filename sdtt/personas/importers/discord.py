"""Discord channel or DM exports made with DiscordChatExporter (JSON format).

The file is ``{"guild": {...}, "channel": {...}, "messages": [...]}``; each message has an
ISO ``timestamp`` with offset (converted to ``--timezone``), ``type`` (``"Default"`` and
``"Reply"`` are kept; joins, pins, calls and other system events are dropped),
``content`` and ``author`` ``{name, nickname, isBot}``. Bots' messages are dropped
(slash-command answers among them), as are forwarded messages (``forwardedMessage``,
or a ``reference`` of type ``Forward``): someone else wrote them.
``--me`` and ``--with`` accept a user name or a nickname. Raw mentions ``<@id>`` are
written as ``@name`` from the message's ``mentions``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from datetime import tzinfo
from pathlib import Path
from typing import Any

from sdtt.errors import InputError
from sdtt.personas.conversations import ChatMessage
from sdtt.personas.importers.build import ChatOutline, ImportResult, ParsedChat, add_message
from sdtt.personas.importers.file_importer import StreamedJsonImporter
from sdtt.personas.importers.options import ImportOptions
from sdtt.personas.importers.reading import json_items, json_outline, load_json
from sdtt.personas.importers.shapes import ExportModel, validate
from sdtt.personas.importers.times import parse_iso_time

_KEPT_TYPES = {"Default", "Reply"}
_MENTION = re.compile(r"<@!?(\d+)>")


class DiscordUser(ExportModel):
    """A message's ``author``."""

    name: str
    nickname: str | None = None
    isBot: Any = None


class DiscordMention(ExportModel):
    """An entry of a message's ``mentions``."""

    id: Any = None
    name: str | None = None
    nickname: str | None = None


class DiscordMessage(ExportModel):
    """An entry of ``messages``."""

    type: str | None = None
    """``"Default"`` and ``"Reply"`` are messages; joins, pins, calls... are dropped."""
    author: DiscordUser
    timestamp: str
    """ISO 8601 with offset."""
    content: str | None = None
    mentions: list[DiscordMention] | None = None
    attachments: Any = None
    stickers: Any = None
    embeds: Any = None
    forwardedMessage: Any = None
    """Someone else's message passed on (newer DiscordChatExporter versions)."""
    reference: Any = None

    @property
    def has_media(self) -> bool:
        """Whether attachments, stickers or embeds come with the message."""
        return bool(self.attachments or self.stickers or self.embeds)


class DiscordExport(ExportModel):
    """The file DiscordChatExporter writes (``guild`` and ``channel`` are not needed)."""

    messages: list[Any]
    """Validated one at a time as :class:`DiscordMessage`, as they are read."""


def resolve_mentions(content: str, names: dict[str, str]) -> str:
    """``<@id>`` written as ``@name`` when the id is known."""
    return _MENTION.sub(lambda match: "@" + names.get(match.group(1), match.group(1)), content)


def parse_discord(data: bytes, path: Path, *, zone: tzinfo) -> ParsedChat:
    """Read a DiscordChatExporter JSON export into a :class:`ParsedChat`."""
    root = load_json(data, path)
    return _read_export(root, lambda export: export.messages, path, zone=zone)


def stream_discord(path: Path, *, zone: tzinfo) -> ParsedChat:
    """:func:`parse_discord` reading the file a part at a time (twice: its outline, then
    its messages). Raises :class:`JsonStreamFailed` where it must be read whole."""
    root = json_outline(path, "messages.item")
    return _read_export(root, lambda export: json_items(path, "messages.item"), path, zone=zone)


def _check_export(root: Any, path: Path) -> DiscordExport:
    if isinstance(root, dict) and "messages" not in root:
        raise InputError(
            "has no 'messages'.",
            path=path,
            hint="Export the channel with DiscordChatExporter in JSON format.",
        )
    return validate(DiscordExport, root, path)


def _export_messages(
    entries: Iterable[Any],
    path: Path,
    zone: tzinfo,
    dropped: Counter[str],
    aliases: dict[str, set[str]],
    people: list[list[str]],
) -> Iterator[ChatMessage]:
    """The messages of an export's ``entries``; those left out are counted in
    ``dropped``, authors' nicknames go to ``aliases`` and mentioned people to ``people``."""
    kept: list[ChatMessage] = []
    for index, entry in enumerate(entries):
        record = validate(DiscordMessage, entry, path, where=f"messages[{index}]")
        if (record.type or "Default") not in _KEPT_TYPES:
            dropped["system"] += 1
            continue
        author = record.author
        forwarded = isinstance(record.reference, dict) and record.reference.get("type") == "Forward"
        if record.forwardedMessage is not None or forwarded:
            dropped["forwarded"] += 1
            continue
        if author.isBot is True:
            dropped["bot"] += 1
            continue
        sender = author.name
        if author.nickname and author.nickname != sender:
            aliases.setdefault(sender, set()).add(author.nickname)
        time = parse_iso_time(
            record.timestamp, zone, path=path, field=f"messages[{index}].timestamp"
        )
        mentioned: dict[str, str] = {}
        for mention in record.mentions or []:
            name, nick = mention.name or "", mention.nickname or ""
            if name:
                people.append([name, *([nick] if nick else [])])
                if isinstance(mention.id, str | int):
                    mentioned[str(mention.id)] = nick or name
        content = resolve_mentions(record.content or "", mentioned).strip()
        add_message(
            kept,
            dropped,
            sender=sender,
            text=content,
            time=time,
            has_media=record.has_media,
        )
        yield from kept
        kept.clear()


def _read_export(
    root: Any, entries: Callable[[DiscordExport], Iterable[Any]], path: Path, *, zone: tzinfo
) -> ParsedChat:
    """The export in ``root`` (whose ``messages`` may be left empty), its messages given by
    ``entries``."""
    export = _check_export(root, path)
    dropped: Counter[str] = Counter()
    aliases: dict[str, set[str]] = {}
    people: list[list[str]] = []
    messages = list(_export_messages(entries(export), path, zone, dropped, aliases, people))
    return ParsedChat(messages=messages, dropped=dropped, aliases=aliases, people=people)


class DiscordImporter(StreamedJsonImporter):
    """``sdtt persona import discord EXPORT.json --me NAME``."""

    name = "discord"
    help = "a Discord channel or DM exported with DiscordChatExporter (JSON)"
    file_help = "The JSON file written by DiscordChatExporter."

    def parse(self, data: bytes, path: Path, options: ImportOptions) -> ParsedChat:
        """Read the export."""
        return parse_discord(data, path, zone=options.timezone)

    def stream(self, path: Path, options: ImportOptions) -> ParsedChat:
        """Read the export a part at a time."""
        return stream_discord(path, zone=options.timezone)

    def first_reading(
        self, path: Path, options: ImportOptions
    ) -> tuple[ChatOutline, Callable[[], Iterable[ChatMessage]]]:
        """The export's senders and times, and a way to read its messages again."""
        zone = options.timezone
        _check_export(json_outline(path, "messages.item"), path)

        def messages(
            dropped: Counter[str], aliases: dict[str, set[str]], people: list[list[str]]
        ) -> Iterator[ChatMessage]:
            entries = json_items(path, "messages.item")
            return _export_messages(entries, path, zone, dropped, aliases, people)

        dropped: Counter[str] = Counter()
        aliases: dict[str, set[str]] = {}
        people: list[list[str]] = []
        outline = ChatOutline.read(
            messages(dropped, aliases, people),
            dropped,
            keep_media=options.keep_media,
            people=people,
            detected={},
            aliases=aliases,
        )
        return outline, lambda: messages(Counter(), {}, [])


IMPORTER = DiscordImporter()


def import_discord(path: str | Path, options: ImportOptions) -> ImportResult:
    """A persona from a Discord channel or DM exported with DiscordChatExporter (JSON).

    ``options.me`` may be the user name or the server nickname.
    """
    return IMPORTER.run(path, options)
