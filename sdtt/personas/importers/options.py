"""What the caller of an importer chooses: :class:`ImportOptions`, and parsers for its values.

The ``sdtt persona import`` flags map one to one onto these fields (a format's own flags
are its importer's :class:`Flag` records); a notebook builds the
object directly (``ImportOptions(me="Ann", timezone=parse_timezone("Europe/Berlin"))``).
The value parsers raise :class:`~sdtt.errors.InputError` naming the flag they read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sdtt.errors import InputError
from sdtt.personas.conversations import DEFAULT_GAP

DEFAULT_TIMEZONE = "UTC"
TIME_FORMATS = ("iso", "epoch", "epoch_ms")
"""The named ``time_format`` values; anything else must be a ``strptime`` pattern."""
TABLE_FIELDS = ("sender", "text", "time", "conversation")
DEFAULT_COLUMNS = "sender=sender,text=text,time=time"


@dataclass(frozen=True)
class Flag:
    """An option of one format's own on ``sdtt persona import FORMAT``: a flag that sets
    one :class:`ImportOptions` field. An importer lists its flags in ``flags``; the command
    line adds them to the format's parser and passes their values on (``parse`` turns the
    text into the field's value)."""

    name: str
    """The flag, e.g. ``--date-format``."""
    field: str
    """The :class:`ImportOptions` field it sets."""
    help: str
    metavar: str
    default: str | None = None
    parse: Callable[[str], object] | None = None


@dataclass(frozen=True)
class Columns:
    """Which column (or dotted JSONL key) of a chat table holds each field."""

    sender: str = "sender"
    text: str = "text"
    time: str = "time"
    conversation: str | None = None
    """Optional: keeps messages of different conversations apart."""


@dataclass(frozen=True)
class ImportOptions:
    """How to turn a chat export into a persona; every format reads the shared fields.

    Only ``me`` is required. Fields that only one format reads say which.
    """

    me: str
    """The participant who becomes the persona, as the export spells the name."""
    partners: tuple[str, ...] = ()
    """In a group chat, keep only the persona's messages and those of these people."""
    merge_others: bool = False
    """In a group chat, treat everybody except the persona as one User side."""
    gap: timedelta = DEFAULT_GAP
    """Silence that starts a new conversation."""
    timezone: tzinfo = UTC
    """Zone of the chat: times without a zone get it, absolute times are converted to it."""
    scrub: bool = True
    """Replace personal data (contacts, numbers, addresses, names) with placeholders."""
    scrub_names: tuple[str, ...] = ()
    """More names to replace, besides the participants'."""
    keep_media: bool = False
    """Keep photos, stickers and files without caption as ``[media]`` messages."""
    name: str | None = None
    """Persona name; by default the format and a hash of the export when scrubbing."""
    date_format: str | None = None
    """WhatsApp: the date order, e.g. ``DD/MM/YY`` (default: detected, with a warning)."""
    chat: str | None = None
    """Telegram: in a full account export, the chat to import (name or id)."""
    channel: str | None = None
    """Slack: the channel or DM folder to import."""
    columns: Columns = Columns()
    """CSV and JSONL: which columns hold sender, text, time (and conversation)."""
    time_format: str = "iso"
    """CSV and JSONL: ``iso``, ``epoch``, ``epoch_ms`` or a ``strptime`` pattern."""
    delimiter: str | None = None
    """CSV: the field separator (default: guessed from the header)."""


_GAP = re.compile(
    r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|secs|seconds?|m|min|mins|minutes?|h|hours?|d|days?)?\s*$"
)
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_gap(text: str) -> timedelta:
    """A duration such as ``90m``, ``2h``, ``45s`` or ``30`` (minutes)."""
    match = _GAP.match(text.lower())
    if match is None or float(match.group(1)) <= 0:
        raise InputError(
            f"{text!r} is not a duration.",
            field="--gap",
            hint="Write a positive number with a unit, e.g. 45s, 30m, 2h or 1d "
            "(a bare number means minutes).",
        )
    unit = (match.group(2) or "m")[0]
    return timedelta(seconds=float(match.group(1)) * _UNITS[unit])


def parse_timezone(name: str) -> tzinfo:
    """The IANA zone ``name`` (``UTC`` and ``Europe/Berlin`` style)."""
    if name.upper() in {"UTC", "Z"}:
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InputError(
            f"{name!r} is not a time zone this machine knows.",
            field="--timezone",
            hint="Use an IANA name such as Europe/Berlin or America/New_York "
            "(on Windows, 'pip install tzdata' provides them).",
        ) from None


def split_names(values: Sequence[str] | None) -> tuple[str, ...]:
    """Names given as repeated and/or comma-separated options."""
    names = [part.strip() for value in values or () for part in value.split(",")]
    return tuple(name for name in names if name)


def parse_columns(text: str) -> Columns:
    """A mapping such as ``sender=author,text=body,time=ts``; unnamed fields keep defaults."""
    mapping: dict[str, str] = {}
    for part in text.split(","):
        if not part.strip():
            continue
        key, separator, column = part.partition("=")
        key, column = key.strip().lower(), column.strip()
        if not separator or key not in TABLE_FIELDS or not column:
            raise InputError(
                f"{part.strip()!r} is not FIELD=COLUMN with FIELD one of "
                f"{', '.join(TABLE_FIELDS)}.",
                field="--columns",
                hint="Example: --columns sender=author,text=body,time=ts",
            )
        mapping[key] = column
    return Columns(**mapping)


def check_time_format(text: str) -> str:
    """``iso``, ``epoch``, ``epoch_ms`` or a strptime pattern (with ``%``)."""
    if text.lower() in TIME_FORMATS:
        return text.lower()
    if "%" not in text:
        raise InputError(
            f"{text!r} is not a time format.",
            field="--time-format",
            hint="Use iso, epoch, epoch_ms or a strptime pattern such as '%d/%m/%Y %H:%M'.",
        )
    return text


def check_delimiter(text: str | None) -> str | None:
    """One character (``tab`` or ``\\t`` for a tab), or None to guess it."""
    if text is None:
        return None
    delimiter = "\t" if text in ("tab", "\\t") else text
    if len(delimiter) != 1:
        raise InputError(f"{text!r} is not one character.", field="--delimiter")
    return delimiter
