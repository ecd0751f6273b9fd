"""Slack workspace exports (the ``.zip`` an admin downloads).

The zip holds ``users.json`` (``id``, ``name``, ``real_name``, ``profile``),
``channels.json`` (and ``groups.json``, ``dms.json``, ``mpims.json`` for private
channels and direct messages) and one folder per conversation with a file per day,
``<channel>/<YYYY-MM-DD>.json``: a list of messages with ``user``, ``text``, ``ts``
(epoch seconds as a string, converted to ``--timezone``) and an optional ``subtype``.
``--channel`` picks the folder. A thread (its first message and the replies that carry
its ``thread_ts``) is a conversation of its own, apart from the channel's flow; an
edited message (``edited``) holds its last text; a file shared without a comment
(``files``) is a media message. Joins, topic changes and other subtypes are dropped, as
are bots' messages (``bot_id``, ``subtype: bot_message``). Slack markup is turned into
plain text: ``<@U123>`` becomes ``@name``, ``<#C1|general>`` becomes ``#general``,
``<https://x|label>`` the bare link.
``--me`` accepts the user name, real name or display name.
"""

from __future__ import annotations

import html
import io
import re
import zipfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import tzinfo
from pathlib import Path, PurePosixPath
from typing import Annotated, Any

from pydantic import BeforeValidator

from sdtt.errors import InputError
from sdtt.personas.conversations import ChatMessage, normalize_name
from sdtt.personas.importers.build import (
    ChatOutline,
    ImportResult,
    ParsedChat,
    PreparedImport,
    add_message,
)
from sdtt.personas.importers.file_importer import FileImporter
from sdtt.personas.importers.options import Flag, ImportOptions
from sdtt.personas.importers.reading import MAX_FILE_BYTES, ZIP_ERRORS, load_json
from sdtt.personas.importers.shapes import ExportModel, shape_error, validate
from sdtt.personas.importers.times import time_from_epoch

_KEPT_SUBTYPES = {None, "thread_broadcast", "me_message", "file_share"}
_DAY_FILE = re.compile(r"^\d{4}-\d{2}-\d{2}\.json$")
_USER_REF = re.compile(r"<@([A-Z0-9]+)(?:\|([^>]*))?>")
_CHANNEL_REF = re.compile(r"<#[A-Z0-9]+\|([^>]*)>|<#([A-Z0-9]+)>")
_SPECIAL_REF = re.compile(r"<!(here|channel|everyone)(?:\|[^>]*)?>|<!subteam\^[A-Z0-9]+\|([^>]*)>")
_LINK_REF = re.compile(r"<(?:mailto:|tel:)?([^|>]+)(?:\|[^>]*)?>")
_MAX_MEMBER = 512 * 1024 * 1024
_ZIP_HINT = "Give the .zip exactly as Slack produced it (Workspace settings > Import/Export data)."
_TS_PROBLEM = "should be epoch seconds, e.g. '1712135112.000200'."


def _epoch_seconds(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise shape_error(_TS_PROBLEM)
    try:
        return float(value)
    except ValueError:
        raise shape_error(f"{str(value)[:30]!r} is not epoch seconds.") from None


class SlackUser(ExportModel):
    """An entry of ``users.json``."""

    id: str | None = None
    name: str | None = None
    real_name: Any = None
    profile: Any = None
    """An object with ``real_name`` and ``display_name``."""

    def other_names(self) -> set[str]:
        """The real and display names that differ from the user name."""
        candidates = [self.real_name]
        if isinstance(self.profile, dict):
            candidates += [self.profile.get("real_name"), self.profile.get("display_name")]
        return {
            other for other in candidates if isinstance(other, str) and other and other != self.name
        }


class SlackMessage(ExportModel):
    """An entry of a day file ``<channel>/<YYYY-MM-DD>.json``."""

    subtype: str | None = None
    """None for a plain message; joins, topic changes, bots... have one."""
    bot_id: Any = None
    user: str | None = None
    """The user id."""
    ts: Annotated[float, BeforeValidator(_epoch_seconds)] | None = None
    """Epoch seconds, written as text."""
    text: str | None = None
    files: Any = None
    thread_ts: str | None = None
    """The ``ts`` of the thread's first message, on the first message and its replies."""


class _Zip:
    """Read JSON members of the export (its bytes, or the file where it lies, a member at
    a time), with errors that name the member."""

    def __init__(self, source: bytes | Path, path: Path) -> None:
        self.path = path
        try:
            self.archive = zipfile.ZipFile(
                io.BytesIO(source) if isinstance(source, bytes) else source
            )
            self.infos = {
                info.filename: info for info in self.archive.infolist() if not info.is_dir()
            }
        except ZIP_ERRORS:
            raise InputError("is not a readable zip file.", path=path, hint=_ZIP_HINT) from None

    def json(self, name: str) -> Any:
        info = self.infos[name]
        where = f"{self.path} > {name}"
        if info.file_size > _MAX_MEMBER:
            raise InputError("is too large to be a Slack export file.", path=where)
        try:
            data = self.archive.read(info)
        except (*ZIP_ERRORS, KeyError):
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
    users = validate(list[SlackUser], archive.json(name), member)
    names: dict[str, str] = {}
    aliases: dict[str, set[str]] = {}
    for user in users:
        if not user.id or not user.name:
            continue
        names[user.id] = user.name
        aliases[user.name] = user.other_names()
    return names, aliases


def _plain_text(text: str, users: dict[str, str]) -> str:
    text = _USER_REF.sub(lambda m: "@" + (users.get(m.group(1)) or m.group(2) or m.group(1)), text)
    text = _CHANNEL_REF.sub(lambda m: "#" + (m.group(1) or m.group(2)), text)
    text = _SPECIAL_REF.sub(lambda m: "@" + (m.group(1) or m.group(2)), text)
    text = _LINK_REF.sub(lambda m: m.group(1), text)
    return html.unescape(text)


@dataclass
class _Channel:
    """The conversation ``--channel`` chose in an export, and who is in the export."""

    archive: _Zip
    days: list[str]
    users: dict[str, str]
    aliases: dict[str, set[str]]
    people: list[list[str]]
    detected: dict[str, str]


def _open_channel(data: bytes | Path, path: Path, channel: str | None) -> _Channel:
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
    return _Channel(
        archive=archive,
        days=days[chosen],
        users=users,
        aliases=aliases,
        people=[[user, *sorted(aliases.get(user, ()))] for user in users.values()],
        detected={} if channel else {"channel": chosen},
    )


def _messages(
    chosen: _Channel, path: Path, zone: tzinfo, dropped: Counter[str]
) -> Iterator[ChatMessage]:
    """The channel's messages kept, a day file at a time; the others counted in ``dropped``."""
    users = chosen.users
    kept: list[ChatMessage] = []
    for name in chosen.days:
        where_file = f"{path} > {name}"
        items = validate(list[SlackMessage], chosen.archive.json(name), where_file)
        for index, record in enumerate(items):
            if record.subtype == "bot_message" or record.bot_id is not None:
                dropped["bot"] += 1
                continue
            if record.subtype not in _KEPT_SUBTYPES or not record.user:
                dropped["system"] += 1
                continue
            if record.ts is None:
                raise InputError(_TS_PROBLEM, path=where_file, field=f"[{index}].ts")
            time = time_from_epoch(record.ts, zone, path=where_file, field=f"[{index}].ts")
            text = _plain_text(record.text or "", users).strip()
            add_message(
                kept,
                dropped,
                sender=users.get(record.user, record.user),
                text=text,
                time=time,
                has_media=bool(record.files),
                thread=f"thread:{record.thread_ts}" if record.thread_ts else None,
            )
            yield from kept
            kept.clear()


def parse_slack(
    data: bytes | Path, path: Path, *, zone: tzinfo, channel: str | None = None
) -> ParsedChat:
    """Read one channel of a Slack export zip (its bytes, or the file) into a
    :class:`ParsedChat`."""
    chosen = _open_channel(data, path, channel)
    dropped: Counter[str] = Counter()
    messages = list(_messages(chosen, path, zone, dropped))
    return ParsedChat(
        messages=messages,
        dropped=dropped,
        aliases=chosen.aliases,
        people=chosen.people,
        detected=chosen.detected,
    )


class SlackImporter(FileImporter):
    """``sdtt persona import slack EXPORT.zip --channel NAME --me NAME``."""

    name = "slack"
    help = "a Slack workspace export (.zip), one channel or DM"
    file_help = "The Slack export .zip."
    flags = (
        Flag(
            "--channel",
            "channel",
            "The channel (or DM folder) to import; needed when the export holds several.",
            metavar="NAME",
        ),
    )

    def parse(self, data: bytes, path: Path, options: ImportOptions) -> ParsedChat:
        """Read the export."""
        return parse_slack(data, path, zone=options.timezone, channel=options.channel)

    def load(self, path: Path, options: ImportOptions) -> tuple[ParsedChat, str]:
        """Read the zip where it lies, a member at a time, not whole into memory (a pipe,
        or a file too large to be an export, is read whole, which says what is wrong)."""
        digest = self._zip_digest(path)
        if digest is None:
            return super().load(path, options)
        chat = parse_slack(path, path, zone=options.timezone, channel=options.channel)
        return chat, digest

    def _zip_digest(self, path: Path) -> str | None:
        """The export's hash when it is a zip file to read where it lies; ``None`` for
        what is read whole (a pipe, or a file too large to be an export: reading it so
        says what is wrong)."""
        digest = self.export_digest(path)
        try:
            too_large = digest is not None and path.stat().st_size > MAX_FILE_BYTES
        except OSError:
            too_large = True
        return None if too_large else digest

    def prepare(self, path: Path, options: ImportOptions) -> PreparedImport:
        """Read the channel once for its senders and times; the persona is built as it
        is read again, a day file at a time (see
        :class:`~sdtt.personas.importers.build.StreamedImport`), each thread a
        conversation of its own."""
        digest = self._zip_digest(path)
        if digest is None:
            return super().prepare(path, options)
        zone, channel = options.timezone, options.channel
        chosen = _open_channel(path, path, channel)
        dropped: Counter[str] = Counter()
        outline = ChatOutline.read(
            _messages(chosen, path, zone, dropped),
            dropped,
            keep_media=options.keep_media,
            people=chosen.people,
            detected=chosen.detected,
            aliases=chosen.aliases,
        )

        def messages() -> Iterator[ChatMessage]:
            return _messages(_open_channel(path, path, channel), path, zone, Counter())

        return self.streamed(outline, messages, path, options, digest)


IMPORTER = SlackImporter()


def import_slack(path: str | Path, options: ImportOptions) -> ImportResult:
    """A persona from one channel or DM of a Slack workspace export (the ``.zip``).

    ``options.channel`` names the channel when the export holds several; ``options.me``
    may be the user name, real name or display name.
    """
    return IMPORTER.run(path, options)
