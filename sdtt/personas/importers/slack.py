"""Slack workspace exports (the ``.zip`` an admin downloads).

The zip holds ``users.json`` (``id``, ``name``, ``real_name``, ``profile``),
``channels.json`` (and ``groups.json``, ``dms.json``, ``mpims.json`` for private
channels and direct messages) and one folder per conversation with a file per day,
``<channel>/<YYYY-MM-DD>.json``: a list of messages with ``user``, ``text``, ``ts``
(epoch seconds as a string, converted to ``--timezone``) and an optional ``subtype``.
``--channel`` picks the folder. Joins, topic changes and other subtypes are dropped, as
are bots' messages. Slack markup is turned into plain text: ``<@U123>`` becomes
``@name``, ``<#C1|general>`` becomes ``#general``, ``<https://x|label>`` the bare link.
``--me`` accepts the user name, real name or display name.
"""

from __future__ import annotations

import argparse
import html
import io
import re
import zipfile
import zlib
from collections import Counter
from datetime import datetime, tzinfo
from pathlib import Path, PurePosixPath
from typing import Any

from sdtt.errors import InputError
from sdtt.personas.conversations import ChatMessage, normalize_name
from sdtt.personas.importers.common import (
    FileImporter,
    ParsedChat,
    add_message,
    expect_dict,
    expect_list,
    load_json,
    optional_str,
    time_from_epoch,
)

_KEPT_SUBTYPES = {None, "thread_broadcast", "me_message", "file_share"}
_DAY_FILE = re.compile(r"^\d{4}-\d{2}-\d{2}\.json$")
_USER_REF = re.compile(r"<@([A-Z0-9]+)(?:\|([^>]*))?>")
_CHANNEL_REF = re.compile(r"<#[A-Z0-9]+\|([^>]*)>|<#([A-Z0-9]+)>")
_SPECIAL_REF = re.compile(r"<!(here|channel|everyone)(?:\|[^>]*)?>|<!subteam\^[A-Z0-9]+\|([^>]*)>")
_LINK_REF = re.compile(r"<(?:mailto:|tel:)?([^|>]+)(?:\|[^>]*)?>")
_MAX_MEMBER = 512 * 1024 * 1024
_ZIP_HINT = "Give the .zip exactly as Slack produced it (Workspace settings > Import/Export data)."


class _Zip:
    """Read JSON members of the export, with errors that name the member."""

    def __init__(self, data: bytes, path: Path) -> None:
        self.path = path
        try:
            self.archive = zipfile.ZipFile(io.BytesIO(data))
            self.infos = {
                info.filename: info for info in self.archive.infolist() if not info.is_dir()
            }
        except (zipfile.BadZipFile, zlib.error, ValueError, EOFError, OSError, NotImplementedError):
            raise InputError("is not a readable zip file.", path=path, hint=_ZIP_HINT) from None

    def json(self, name: str) -> Any:
        info = self.infos[name]
        where = f"{self.path} > {name}"
        if info.file_size > _MAX_MEMBER:
            raise InputError("is too large to be a Slack export file.", path=where)
        try:
            data = self.archive.read(info)
        except (
            zipfile.BadZipFile,
            zlib.error,
            ValueError,
            EOFError,
            OSError,
            NotImplementedError,
            RuntimeError,  # encrypted members
            KeyError,
        ):
            raise InputError("cannot be unpacked.", path=where, hint=_ZIP_HINT) from None
        return load_json(data, where)


def _users(archive: _Zip, root: PurePosixPath) -> tuple[dict[str, str], dict[str, set[str]]]:
    """User id -> user name, and user name -> other names (real name, display name)."""
    name = str(root / "users.json")
    member = f"{archive.path} > {name}"
    if name not in archive.infos:
        raise InputError(
            "has no users.json; is it a Slack export?", path=archive.path, hint=_ZIP_HINT
        )
    users = expect_list(archive.json(name), member, "(top level)")
    names: dict[str, str] = {}
    aliases: dict[str, set[str]] = {}
    for index, item in enumerate(users):
        where = f"[{index}]"
        record = expect_dict(item, member, where)
        user_id = optional_str(record, "id", member, where)
        user_name = optional_str(record, "name", member, where)
        if not user_id or not user_name:
            continue
        names[user_id] = user_name
        candidates = [record.get("real_name")]
        profile = record.get("profile")
        if isinstance(profile, dict):
            candidates += [profile.get("real_name"), profile.get("display_name")]
        aliases[user_name] = {
            other for other in candidates if isinstance(other, str) and other and other != user_name
        }
    return names, aliases


def _plain_text(text: str, users: dict[str, str]) -> str:
    text = _USER_REF.sub(lambda m: "@" + (users.get(m.group(1)) or m.group(2) or m.group(1)), text)
    text = _CHANNEL_REF.sub(lambda m: "#" + (m.group(1) or m.group(2)), text)
    text = _SPECIAL_REF.sub(lambda m: "@" + (m.group(1) or m.group(2)), text)
    text = _LINK_REF.sub(lambda m: m.group(1), text)
    return html.unescape(text)


def _ts(value: Any, path: str, where: str, zone: tzinfo) -> datetime:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise InputError(
            "should be epoch seconds, e.g. '1712135112.000200'.", path=path, field=where
        )
    try:
        seconds = float(value)
    except ValueError:
        raise InputError(
            f"{str(value)[:30]!r} is not epoch seconds.", path=path, field=where
        ) from None
    return time_from_epoch(seconds, zone, path=path, field=where)


def parse_slack(data: bytes, path: Path, *, zone: tzinfo, channel: str | None = None) -> ParsedChat:
    """Read one channel of a Slack export zip into a :class:`ParsedChat`."""
    archive = _Zip(data, path)
    anchors = [
        PurePosixPath(name).parent
        for name in archive.infos
        if PurePosixPath(name).name == "users.json"
    ]
    root = min(anchors, key=lambda anchor: len(anchor.parts)) if anchors else PurePosixPath(".")
    users, aliases = _users(archive, root)
    days: dict[str, list[str]] = {}
    for name in sorted(archive.infos):
        member = PurePosixPath(name)
        if _DAY_FILE.match(member.name) and member.parent.parent == root:
            days.setdefault(member.parent.name, []).append(name)
    if not days:
        raise InputError(
            "has no conversation folders (<channel>/<YYYY-MM-DD>.json).",
            path=path,
            hint=_ZIP_HINT,
        )
    if channel is None:
        if len(days) > 1:
            raise InputError(
                f"holds {len(days)} conversations: {', '.join(sorted(days)[:40])}.",
                path=path,
                field="--channel",
                hint="Pass --channel NAME to choose one.",
            )
        chosen = next(iter(days))
    else:
        key = normalize_name(channel.lstrip("#"))
        matches = [folder for folder in days if normalize_name(folder) == key]
        if not matches:
            raise InputError(
                f"has no channel {channel!r}; channels: {', '.join(sorted(days)[:40])}.",
                path=path,
                field="--channel",
            )
        chosen = matches[0]

    messages: list[ChatMessage] = []
    dropped: Counter[str] = Counter()
    for name in days[chosen]:
        where_file = f"{path} > {name}"
        items = expect_list(archive.json(name), where_file, "(top level)")
        for index, item in enumerate(items):
            where = f"[{index}]"
            record = expect_dict(item, where_file, where)
            subtype = optional_str(record, "subtype", where_file, where)
            if subtype == "bot_message" or record.get("bot_id") is not None:
                dropped["bot"] += 1
                continue
            if subtype not in _KEPT_SUBTYPES:
                dropped["system"] += 1
                continue
            user_id = optional_str(record, "user", where_file, where)
            if not user_id:
                dropped["system"] += 1
                continue
            time = _ts(record.get("ts"), where_file, f"{where}.ts", zone)
            sender = users.get(user_id, user_id)
            text = _plain_text(optional_str(record, "text", where_file, where) or "", users).strip()
            add_message(
                messages,
                dropped,
                sender=sender,
                text=text,
                time=time,
                has_media=bool(record.get("files")),
            )
    people = [[user, *sorted(aliases.get(user, ()))] for user in users.values()]
    return ParsedChat(messages=messages, dropped=dropped, aliases=aliases, people=people)


class SlackImporter(FileImporter):
    """``sdtt persona import slack EXPORT.zip --channel NAME --me NAME``."""

    name = "slack"
    help = "a Slack workspace export (.zip), one channel or DM"
    file_help = "The Slack export .zip."

    def add_format_arguments(self, parser: argparse.ArgumentParser) -> None:
        """``--channel``."""
        parser.add_argument(
            "--channel",
            metavar="NAME",
            help="The channel (or DM folder) to import; needed when the export holds several.",
        )

    def parse(self, data: bytes, path: Path, args: argparse.Namespace, zone: tzinfo) -> ParsedChat:
        """Read the export."""
        return parse_slack(data, path, zone=zone, channel=args.channel)


IMPORTER = SlackImporter()
