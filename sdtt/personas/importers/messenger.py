"""Facebook Messenger JSON exports ("Download your information", format JSON).

A conversation folder holds ``message_1.json``, ``message_2.json``...: give one file or
the folder. Each file has ``participants`` (``[{"name": ...}]``) and ``messages``,
newest first, with ``sender_name``, ``timestamp_ms`` (converted to ``--timezone``) and
``content``. Facebook writes the text's UTF-8 bytes as if they were Latin-1 characters
("cafÃ©" for "café"); every string is decoded back. Calls, joins and reactions are
dropped, unsent messages too, and photos, videos, stickers and files without text become
media messages.

Instagram's export ("Download your information", JSON) has the same shape, under
``your_instagram_activity/messages/inbox/<chat>/``: ``sdtt persona import instagram``
reads it the same way; its "Liked a message" lines are dropped like reactions and a
shared post or reel (``share``) with the automatic "sent an attachment." is a media
message.

The newer end-to-end encrypted chat export (``senderName``, ``timestamp``, ``text``,
``isUnsent``, ``media``; proper UTF-8) is read as well.
"""

from __future__ import annotations

import hashlib
import re
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import tzinfo
from pathlib import Path
from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from sdtt.errors import InputError
from sdtt.personas.conversations import ChatMessage
from sdtt.personas.importers.build import (
    MEDIA_TEXT,
    ChatOutline,
    ImportResult,
    ParsedChat,
    PreparedImport,
)
from sdtt.personas.importers.file_importer import FileImporter
from sdtt.personas.importers.options import ImportOptions
from sdtt.personas.importers.reading import load_json, read_bytes
from sdtt.personas.importers.shapes import ExportModel, json_type, shape_error, validate
from sdtt.personas.importers.times import time_from_epoch

_MEDIA_KEYS = ("photos", "videos", "audio_files", "gifs", "sticker", "files", "media", "share")
_SYSTEM_TYPES = {"Call", "Subscribe", "Unsubscribe"}
_AUTO_MEDIA = re.compile(
    r"(?:.{1,100} )?[Ss]ent (?:an attachment|a photo|a video|a GIF|a sticker|a voice message"
    r"|a link|\d+ photos|\d+ videos)\."
)
_SYSTEM_TEXT = re.compile(
    r".{0,100}[Rr]eacted .{1,20} to (?:your|a) message ?"
    r"|Liked a message"
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


_TIME_PROBLEM = "should be milliseconds since 1970 (a number)."


def _milliseconds(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise shape_error(_TIME_PROBLEM)
    return float(value)


def _participant_name(value: Any) -> str | None:
    """A participant is a name, or an object ``{"name": ...}``."""
    if isinstance(value, str):
        return value
    if not isinstance(value, dict):
        raise shape_error(f"should be an object, not {json_type(value)}.")
    name = value.get("name")
    if name is not None and not isinstance(name, str):
        raise shape_error(f"should be text, not {json_type(name)}.", subpath=".name")
    return name


Milliseconds = Annotated[float, BeforeValidator(_milliseconds)]


class MessengerMessage(ExportModel):
    """An entry of ``messages``: the classic export's keys, or the encrypted export's."""

    sender_name: str | None = None
    timestamp_ms: Milliseconds | None = None
    content: str | None = None
    is_unsent: Any = None
    type: Any = None
    """``"Call"``, ``"Subscribe"``... mark system lines (classic export)."""
    senderName: str | None = None
    timestamp: Milliseconds | None = None
    text: str | None = None
    isUnsent: Any = None
    photos: Any = None
    videos: Any = None
    audio_files: Any = None
    gifs: Any = None
    sticker: Any = None
    files: Any = None
    media: Any = None
    share: Any = None
    """A shared link or post (Instagram: a reel, a profile...)."""

    @property
    def encrypted_format(self) -> bool:
        """Whether the message uses the end-to-end encrypted export's keys."""
        return "senderName" in self.model_fields_set

    @property
    def has_media(self) -> bool:
        """Whether photos, videos, a sticker, files... come with the message."""
        return any(getattr(self, key) for key in _MEDIA_KEYS)


class MessengerDocument(ExportModel):
    """One ``message_N.json`` file."""

    participants: list[Annotated[str | None, BeforeValidator(_participant_name)]] = Field(
        default_factory=list
    )
    messages: list[MessengerMessage]
    title: Any = None
    threadName: Any = None

    @property
    def chat_title(self) -> Any:
        """The group's name, if it has one."""
        return self.title if "title" in self.model_fields_set else self.threadName


def _read_document(
    document: MessengerDocument, path: Path, zone: tzinfo, dropped: Counter[str], fixed: list[int]
) -> list[ChatMessage]:
    messages: list[ChatMessage] = []
    for index, record in enumerate(document.messages):
        where = f"messages[{index}]"
        new_format = record.encrypted_format
        sender = fix_mojibake((record.senderName if new_format else record.sender_name) or "")
        if not sender:
            raise InputError("has no sender name.", path=path, field=where)
        millis = record.timestamp if new_format else record.timestamp_ms
        key = "timestamp" if new_format else "timestamp_ms"
        if millis is None:
            raise InputError(_TIME_PROBLEM, path=path, field=f"{where}.{key}")
        time = time_from_epoch(millis / 1000, zone, path=path, field=f"{where}.{key}")
        if (record.isUnsent if new_format else record.is_unsent) is True:
            dropped["deleted"] += 1
            continue
        kind = record.type
        if not new_format and isinstance(kind, str) and kind in _SYSTEM_TYPES:
            dropped["system"] += 1
            continue
        raw = (record.text if new_format else record.content) or ""
        text = fix_mojibake(raw).strip()
        if text != raw.strip():
            fixed[0] += 1
        has_media = record.has_media
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


def _document(path: Path, data: bytes) -> MessengerDocument:
    root = load_json(data, path)
    if isinstance(root, dict) and "messages" not in root:
        raise InputError("has no 'messages'.", path=path, hint=_FOLDER_HINT)
    return validate(MessengerDocument, root, path)


def _people(document: MessengerDocument) -> list[list[str]]:
    """The names a file gives: its participants, and the group's name."""
    people = [[fix_mojibake(name)] for name in document.participants if name]
    title = document.chat_title
    if isinstance(title, str) and title.strip():
        people.append([fix_mojibake(title)])
    return people


def _detected(fixed: int) -> dict[str, str]:
    if not fixed:
        return {}
    return {
        "text encoding": f"{fixed} messages' text was UTF-8 written as Latin-1 escapes "
        "(Facebook's export) and was decoded back ('cafÃ©' -> 'café')"
    }


def parse_messenger(documents: Iterable[tuple[Path, bytes]], *, zone: tzinfo) -> ParsedChat:
    """Read the ``message_N.json`` files of one Messenger conversation, one at a time."""
    messages: list[ChatMessage] = []
    dropped: Counter[str] = Counter()
    people: list[list[str]] = []
    fixed = [0]
    for path, data in documents:
        document = _document(path, data)
        people += _people(document)
        messages += _read_document(document, path, zone, dropped, fixed)
    return ParsedChat(
        messages=messages, dropped=dropped, people=people, detected=_detected(fixed[0])
    )


def _newest_first_order(times: list[array[float]]) -> array[int] | None:
    """The time order of the messages kept read file by file from the last file to the
    first (``times``: each file's, in the files' order), as positions in that reading;
    ``None`` when that reading is in order. Equal times keep the order of the files
    read first to last, as the conversation read whole sorts them."""
    import numpy as np  # only here: `sdtt persona import FORMAT --help` stays light

    read = [np.frombuffer(part, dtype=np.float64) for part in reversed(times)]
    stamps = np.concatenate(read) if read else np.zeros(0)
    files = np.concatenate([np.full(len(part), -index) for index, part in enumerate(read)])
    order = np.lexsort((np.arange(len(stamps)), files, stamps))
    if np.array_equal(order, np.arange(len(stamps))):
        return None
    return array("q", order.astype(np.int64).tobytes())


def _part_number(path: Path) -> int:
    digits = re.findall(r"\d+", path.stem)
    return int(digits[-1]) if digits else 0


class MessengerImporter(FileImporter):
    """``sdtt persona import messenger message_1.json --me NAME`` (or the folder)."""

    name = "messenger"
    help = "a Facebook Messenger conversation (message_N.json, or its folder)"
    file_help = "A message_N.json file, or the conversation folder holding them."

    def files(self, path: Path) -> list[Path]:
        """The files to read: ``path`` itself, or the ``message_*.json`` in the folder."""
        if path.is_dir():
            files = sorted(path.glob("message_*.json"), key=_part_number)
            if not files:
                raise InputError("holds no message_N.json file.", path=path, hint=_FOLDER_HINT)
            return files
        return [path]

    def parse(self, data: bytes, path: Path, options: ImportOptions) -> ParsedChat:
        """Read one file."""
        return parse_messenger([(path, data)], zone=options.timezone)

    def load(self, path: Path, options: ImportOptions) -> tuple[ParsedChat, str]:
        """Read the file or folder a file at a time (memory holds one file's bytes and
        the messages); the digest covers every file read, in order."""
        digest = hashlib.sha256()

        def documents() -> Iterator[tuple[Path, bytes]]:
            for file in self.files(path):
                data = read_bytes(file)
                digest.update(data)
                yield file, data

        chat = parse_messenger(documents(), zone=options.timezone)
        return chat, digest.hexdigest()

    def prepare(self, path: Path, options: ImportOptions) -> PreparedImport:
        """Read the files once for their senders and times; the persona is built as
        they are read again, newest file first: Facebook writes the newest messages to
        ``message_1.json``, so that reading is in time order, and memory holds one
        file's messages, not the conversation's (see
        :class:`~sdtt.personas.importers.build.StreamedImport`)."""
        files = self.files(path)
        if not all(file.is_file() for file in files):
            return super().prepare(path, options)  # reading it whole says what is wrong
        zone, keep_media = options.timezone, options.keep_media
        digest = hashlib.sha256()
        senders: Counter[str] = Counter()
        dropped: Counter[str] = Counter()
        people: list[list[str]] = []
        fixed = [0]
        times: list[array[float]] = []
        for file in files:
            data = read_bytes(file)
            digest.update(data)
            document = _document(file, data)
            people += _people(document)
            stamps = array("d")
            for message in _read_document(document, file, zone, dropped, fixed):
                if message.kind == "media" and not keep_media:
                    dropped["media"] += 1
                    continue
                senders[message.sender] += 1
                stamps.append(message.time.timestamp())
            times.append(stamps)
        outline = ChatOutline(
            senders=senders,
            dropped=dropped,
            people=people,
            detected=_detected(fixed[0]),
            time_order=_newest_first_order(times),
        )

        def messages() -> Iterator[ChatMessage]:
            for file in reversed(files):
                document = _document(file, read_bytes(file))
                yield from _read_document(document, file, zone, Counter(), [0])

        return self.streamed(outline, messages, path, options, digest.hexdigest())


IMPORTER = MessengerImporter()


def import_messenger(path: str | Path, options: ImportOptions) -> ImportResult:
    """A persona from a Facebook Messenger conversation: a ``message_N.json``, or its folder.

    Facebook's Latin-1 mojibake is decoded; the end-to-end encrypted export is read too.
    """
    return IMPORTER.run(path, options)
