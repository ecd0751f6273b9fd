"""What every chat-export importer shares: options, file reading, and the build path.

An export format only has to turn its file into a :class:`ParsedChat` (see
:meth:`FileImporter.parse`). :func:`build_persona` then does the rest the same way for
every format: pick the persona (``--me``) and its partners, split conversations at
silences, scrub personal data (on unless ``--no-scrub``), and fit the timing profile.

Decisions that hold for all formats:

- Times without a zone (WhatsApp, Telegram, CSV) keep their wall-clock value and are
  labelled with ``--timezone``; absolute times (Discord, Slack, Messenger, epoch columns)
  are converted to it. The default is UTC, so the same export gives the same persona file
  on any machine; pass the participant's zone (``--timezone Europe/Berlin``) for correct
  active hours from absolute times.
- System lines, deleted messages, bots' messages and forwarded messages are dropped.
  Media without a caption (photos, stickers...) are dropped too unless ``--keep-media``,
  which keeps them as a ``[media]`` message; a caption is kept as the message text.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from rich.console import Console
from rich.markup import escape

from sdtt.dialogue.message import RESPONSE, Transcript
from sdtt.errors import InputError
from sdtt.files import loads_json, write_text_atomic
from sdtt.personas.conversations import (
    DEFAULT_GAP,
    ChatMessage,
    assign_sides,
    count_senders,
    find_participant,
    split_conversations,
)
from sdtt.personas.persona import Persona, PersonaInfo
from sdtt.personas.scrub import Scrubber, ScrubReport
from sdtt.personas.timing import fit_timing_profile

MEDIA_TEXT = "[media]"
"""The text of a media message kept with ``--keep-media``."""
DEFAULT_TIMEZONE = "UTC"
LICENSE = "private: use only with the consent of the chat's participants"
MAX_FILE_BYTES = 1 << 30


@dataclass
class ParsedChat:
    """A chat export read into messages, before the persona is chosen."""

    messages: list[ChatMessage]
    warnings: list[str] = field(default_factory=list)
    """Things the user must know, e.g. a guessed date order."""
    dropped: Counter[str] = field(default_factory=Counter)
    """Messages left out, by reason ("system", "deleted", "bot"...)."""
    aliases: dict[str, set[str]] = field(default_factory=dict)
    """Sender -> other names the same person goes by (nickname, real name)."""
    people: list[list[str]] = field(default_factory=list)
    """Further people named in the file (chat title, workspace members): scrubbed too."""


@dataclass(frozen=True)
class ImportOptions:
    """The options every format shares."""

    me: str
    partners: tuple[str, ...] = ()
    merge_others: bool = False
    gap: timedelta = DEFAULT_GAP
    timezone: tzinfo = UTC
    scrub: bool = True
    scrub_names: tuple[str, ...] = ()
    keep_media: bool = False
    name: str | None = None


@dataclass
class ImportResult:
    """A built persona and what happened on the way."""

    persona: Persona
    warnings: list[str]
    dropped: Counter[str]
    persona_messages: int
    partner_messages: int
    scrub_report: ScrubReport | None
    scrub_mapping: dict[str, str]
    """Placeholder -> original value. Personal data: only written on explicit request."""


# ---------------------------------------------------------------------------- options


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


def add_common_arguments(parser: argparse.ArgumentParser, *, file_help: str) -> None:
    """The options shared by every chat-export format."""
    parser.add_argument("file", metavar="FILE", type=Path, help=file_help)
    parser.add_argument(
        "--me",
        required=True,
        metavar="NAME",
        help="The participant who becomes the persona (as the export spells the name).",
    )
    parser.add_argument(
        "--with",
        dest="partners",
        action="append",
        metavar="NAME",
        help="In a group chat, keep only the persona's messages and those of NAME "
        "(repeatable or comma-separated). Everybody else is left out.",
    )
    parser.add_argument(
        "--merge-others",
        action="store_true",
        help="In a group chat, treat everybody except the persona as one User side.",
    )
    parser.add_argument(
        "--gap",
        default="1h",
        metavar="DURATION",
        help="Silence that starts a new conversation, e.g. 30m, 2h (default: 1h).",
    )
    parser.add_argument(
        "--timezone",
        default=DEFAULT_TIMEZONE,
        metavar="ZONE",
        help="IANA time zone of the chat (default: UTC). Times without a zone keep their "
        "clock value and get this zone; absolute times are converted to it.",
    )
    parser.add_argument(
        "--no-scrub",
        dest="scrub",
        action="store_false",
        help="Keep personal data (contact details, bank, card and id numbers, addresses, "
        "GPS positions, names) as it is. The persona "
        "file records that it was not scrubbed; do not send it to a remote provider.",
    )
    parser.add_argument(
        "--scrub-names",
        action="append",
        metavar="NAMES",
        help="More names to replace, comma-separated (e.g. 'Ann,Bob Smith'); "
        "participants' names are always replaced, other names when found in name lists.",
    )
    parser.add_argument(
        "--scrub-report",
        type=Path,
        metavar="PATH",
        help="Also write which values were replaced by which placeholder to PATH (JSON). "
        "That file holds the personal data: keep it private.",
    )
    parser.add_argument(
        "--name",
        metavar="NAME",
        help="Name of the persona file (default: the format and a hash of the export when "
        "scrubbing, so the person's name is not in it; else the --me name).",
    )
    parser.add_argument(
        "--keep-media",
        action="store_true",
        help=f"Keep photos, stickers and files without caption as '{MEDIA_TEXT}' messages "
        "(default: drop them).",
    )


def options_from_args(args: argparse.Namespace) -> ImportOptions:
    """The shared options from parsed command-line arguments."""
    name = getattr(args, "name", None)
    return ImportOptions(
        me=args.me,
        partners=split_names(args.partners),
        merge_others=args.merge_others,
        gap=parse_gap(args.gap),
        timezone=parse_timezone(args.timezone),
        scrub=args.scrub,
        scrub_names=split_names(args.scrub_names),
        keep_media=args.keep_media,
        name=name if isinstance(name, str) and name else None,
    )


# ---------------------------------------------------------------------------- reading


def read_bytes(path: Path) -> bytes:
    """The file's bytes; a missing or unreadable file is an :class:`InputError`."""
    try:
        if path.is_dir():
            raise InputError("is a folder, not a file.", path=path, hint="Give the export file.")
        if path.stat().st_size > MAX_FILE_BYTES:
            raise InputError("is larger than 1 GB; split the export first.", path=path)
        return path.read_bytes()
    except FileNotFoundError:
        raise InputError("file not found.", path=path) from None
    except OSError as error:
        raise InputError(f"cannot read the file ({error.strerror}).", path=path) from None


def decode_text(data: bytes, path: str | Path) -> str:
    """UTF-8 text (a byte-order mark is dropped); a bad byte names its line."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise InputError(
            "is not UTF-8 text.",
            path=path,
            line=line,
            hint="Export the chat again, or re-save the file as UTF-8.",
        ) from None


def load_json(data: bytes, path: str | Path, *, what: str = "JSON") -> Any:
    """Parse a JSON document; errors name the line and column."""
    text = decode_text(data, path)
    try:
        return loads_json(text)
    except json.JSONDecodeError as error:
        raise InputError(
            f"is not valid {what} ({error.msg} at column {error.colno}).",
            path=path,
            line=error.lineno,
            hint="Give the file exactly as the export produced it.",
        ) from None
    except RecursionError:
        raise InputError(f"is nested too deeply to be {what}.", path=path) from None


def expect_dict(value: Any, path: str | Path, where: str) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an error naming ``where``."""
    if not isinstance(value, dict):
        raise InputError(
            f"should be an object, not {json_type(value)}.",
            path=path,
            field=where,
            hint="Is this the right export format?",
        )
    return value


def expect_list(value: Any, path: str | Path, where: str) -> list[Any]:
    """``value`` if it is a JSON array, else an error naming ``where``."""
    if not isinstance(value, list):
        raise InputError(
            f"should be a list, not {json_type(value)}.",
            path=path,
            field=where,
            hint="Is this the right export format?",
        )
    return value


def optional_str(obj: dict[str, Any], key: str, path: str | Path, where: str) -> str | None:
    """``obj[key]`` as a string, None when absent or null; another type is an error."""
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(
            f"should be text, not {json_type(value)}.", path=path, field=f"{where}.{key}"
        )
    return value


def required_str(obj: dict[str, Any], key: str, path: str | Path, where: str) -> str:
    """``obj[key]`` as a string; missing or another type is an error."""
    value = optional_str(obj, key, path, where)
    if value is None:
        raise InputError("is missing.", path=path, field=f"{where}.{key}")
    return value


def json_type(value: Any) -> str:
    """The JSON name of ``value``'s type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


# ---------------------------------------------------------------------------- time


def localize(value: datetime, zone: tzinfo) -> datetime:
    """A naive time labelled with ``zone``; an aware one converted to it."""
    if value.tzinfo is None or value.utcoffset() is None:
        return value.replace(tzinfo=zone)
    return value.astimezone(zone)


def parse_iso_time(
    text: str, zone: tzinfo, *, path: str | Path, field: str | None = None, line: int | None = None
) -> datetime:
    """An ISO 8601 time (``Z`` allowed), localized with :func:`localize`."""
    try:
        return localize(datetime.fromisoformat(text.strip()), zone)
    except (ValueError, OverflowError):
        raise InputError(
            f"{text[:40]!r} is not an ISO 8601 time.", path=path, field=field, line=line
        ) from None


def time_from_epoch(
    seconds: float,
    zone: tzinfo,
    *,
    path: str | Path,
    field: str | None = None,
    line: int | None = None,
) -> datetime:
    """The time ``seconds`` after 1970-01-01 UTC, in ``zone``."""
    try:
        if seconds != seconds or not 0 <= seconds < 32503680000:  # NaN, or not 1970-2999
            raise ValueError
        return datetime.fromtimestamp(seconds, UTC).astimezone(zone)
    except (ValueError, OverflowError, OSError):
        raise InputError(
            f"{seconds!r} is not a plausible time (seconds since 1970).",
            path=path,
            field=field,
            line=line,
        ) from None


def add_message(
    messages: list[ChatMessage],
    dropped: Counter[str],
    *,
    sender: str,
    text: str,
    time: datetime,
    has_media: bool,
) -> None:
    """Keep a message with ``text``; without text, a media message or an ``empty`` drop."""
    if text:
        messages.append(ChatMessage(sender=sender, text=text, time=time))
    elif has_media:
        messages.append(ChatMessage(sender=sender, text=MEDIA_TEXT, time=time, kind="media"))
    else:
        dropped["empty"] += 1


# ---------------------------------------------------------------------------- building


def _slug(text: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")[:40]


def default_persona_name(options: ImportOptions, fmt: str, digest: str, me: str) -> str:
    """The persona name when ``--name`` is not given.

    A scrubbed persona must not carry the person's name, so it is named after the format
    and a hash of the export; an unscrubbed one is named after the participant ``me``.
    """
    if options.name:
        return options.name
    slug = "" if options.scrub else _slug(me)
    return slug or f"{fmt}-{digest[:8]}"


def build_persona(
    chat: ParsedChat,
    options: ImportOptions,
    *,
    fmt: str,
    path: str | Path,
    digest: str = "",
) -> ImportResult:
    """Turn a parsed chat into a persona: sides, conversations, scrubbing, timing."""
    dropped = Counter(chat.dropped)
    messages = chat.messages
    if not options.keep_media:
        text_only = [message for message in messages if message.kind != "media"]
        if len(text_only) < len(messages):
            dropped["media"] += len(messages) - len(text_only)
        messages = text_only
    if not messages:
        raise InputError(
            "holds no chat messages"
            + (f" (left out: {_counts_text(dropped)})" if dropped else "")
            + ".",
            path=path,
            hint=f"Is this a {fmt} export with messages in it?",
        )
    counts = count_senders(messages)
    me = find_participant(options.me, counts, chat.aliases, option="--me", path=path)
    partners = [
        find_participant(name, counts, chat.aliases, option="--with", path=path)
        for name in options.partners
    ]
    if me in partners:
        raise InputError(
            "names the persona itself.", path=path, field="--with", hint="Name the partners only."
        )
    sided = assign_sides(messages, me, partners, merge_others=options.merge_others, path=path)
    if sided.dropped_others:
        dropped["other participants"] += sided.dropped_others

    scrubber: Scrubber | None = None
    sided_messages = sided.messages
    file_label = Path(path).name
    if options.scrub:
        people = [[sender, *sorted(chat.aliases.get(sender, ()))] for sender in counts]
        people += chat.people + [[name] for name in options.scrub_names]
        scrubber = Scrubber(people)
        sided_messages = [
            message.model_copy(update={"text": scrubber.scrub(message.text)})
            for message in sided_messages
        ]
        file_label = scrubber.scrub(file_label)

    conversations = split_conversations(sided_messages, options.gap, sided.threads)
    kept = [c for c in conversations if any(message.side == RESPONSE for message in c)]
    if len(kept) < len(conversations):
        dropped["conversations without the persona"] += len(conversations) - len(kept)
    if not kept:
        raise InputError(
            "has no conversation in which the persona wrote.",
            path=path,
            field="--me",
            hint="Check the --me and --with names.",
        )
    transcripts = [
        Transcript(id=f"conv-{index:04d}", messages=conversation, meta={"source": fmt})
        for index, conversation in enumerate(kept, start=1)
    ]
    profile = fit_timing_profile(transcripts)
    all_kept = [message for conversation in kept for message in conversation]
    persona_messages = sum(1 for message in all_kept if message.side == RESPONSE)
    warnings = list(chat.warnings)
    extra: dict[str, Any] = {
        "format": fmt,
        "file": file_label,
        "timezone": str(options.timezone),
        "gap_seconds": options.gap.total_seconds(),
        "participants": len(counts),
        "group": len(counts) > 2,
        "media_kept": options.keep_media,
        "dropped": {reason: count for reason, count in sorted(dropped.items()) if count},
        "warnings": warnings,
    }
    if scrubber is not None:
        extra["scrub"] = scrubber.report.as_dict()
    info = PersonaInfo(
        name=default_persona_name(options, fmt, digest, me),
        source=f"{fmt} chat export",
        license=LICENSE,
        private=True,
        attribution="Chat export provided by the researcher with the participants' consent.",
        description=f"Imported from a {fmt} export: {len(transcripts)} conversations, "
        f"{persona_messages} messages by the persona.",
        scrubbed=options.scrub,
        created=datetime.now(UTC).replace(microsecond=0),
        timing=profile.model_dump(mode="json"),
        extra=extra,
    )
    return ImportResult(
        persona=Persona(info=info, conversations=transcripts),
        warnings=warnings,
        dropped=dropped,
        persona_messages=persona_messages,
        partner_messages=len(all_kept) - persona_messages,
        scrub_report=scrubber.report if scrubber is not None else None,
        scrub_mapping=scrubber.mapping() if scrubber is not None else {},
    )


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _counts_text(counts: Counter[str]) -> str:
    return ", ".join(f"{count} {reason}" for reason, count in sorted(counts.items()) if count)


def print_import_report(result: ImportResult, console: Console) -> None:
    """Tell the user what the import did: warnings, counts, scrubbing, timing.

    Only counts are printed, never a message text or a replaced value.
    """
    for warning in result.warnings:
        console.print(f"[bold yellow]warning:[/] {escape(warning)}")
    info = result.persona.info
    conversations = _plural(len(result.persona.conversations), "conversation")
    console.print(
        f"persona {escape(info.name)}: {conversations}, "
        f"{_plural(result.persona_messages, 'message')} by the persona, "
        f"{result.partner_messages} by the other side."
    )
    left_out = _counts_text(result.dropped)
    if left_out:
        console.print(f"left out: {escape(left_out)}.")
    if result.scrub_report is not None:
        console.print(f"scrubbed: {escape(result.scrub_report.summary())}.")
    else:
        console.print(
            "[bold yellow]not scrubbed[/] (--no-scrub): the persona holds personal data; "
            "do not send it to a remote model provider."
        )
    timing = info.timing or {}
    fallback = timing.get("fallback") or []
    if fallback:
        console.print(
            "timing profile: defaults kept for "
            + escape("; ".join(str(reason) for reason in fallback))
            + "."
        )
    else:
        console.print(f"timing profile: fitted from {timing.get('samples', 0)} messages.")


def write_scrub_report(result: ImportResult, path: Path) -> None:
    """Write the placeholder -> original table (personal data, on explicit request)."""
    report = {
        "warning": "This file holds the personal data that was scrubbed. Keep it private.",
        "persona": result.persona.info.name,
        "counts": result.scrub_report.as_dict() if result.scrub_report else {},
        "placeholders": result.scrub_mapping,
    }
    try:
        write_text_atomic(path, json.dumps(report, ensure_ascii=False, indent=2) + "\n")
    except OSError as error:
        raise InputError(
            f"cannot write ({error.strerror}).", path=path, field="--scrub-report"
        ) from None


# ---------------------------------------------------------------------------- importer base


class FileImporter:
    """Base of the chat-export importers: shared options and the build path.

    Subclasses set ``name``, ``help`` and ``file_help``, may add options in
    :meth:`add_format_arguments`, and implement :meth:`parse`.
    """

    name: str = ""
    help: str = ""
    file_help: str = "The exported chat file."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add the shared options and this format's own."""
        add_common_arguments(parser, file_help=self.file_help)
        self.add_format_arguments(parser)

    def add_format_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add this format's own options (none by default)."""

    def parse(self, data: bytes, path: Path, args: argparse.Namespace, zone: tzinfo) -> ParsedChat:
        """Read the export's bytes into a :class:`ParsedChat`."""
        raise NotImplementedError

    def load(self, path: Path, args: argparse.Namespace, zone: tzinfo) -> tuple[ParsedChat, str]:
        """Read and parse the input; also return a hash of it (for the default name)."""
        data = read_bytes(path)
        return self.parse(data, path, args, zone), hashlib.sha256(data).hexdigest()

    def run(self, args: argparse.Namespace) -> ImportResult:
        """Read, parse and build, without printing."""
        options = options_from_args(args)
        path = Path(args.file)
        chat, digest = self.load(path, args, options.timezone)
        return build_persona(chat, options, fmt=self.name, path=path, digest=digest)

    def build(self, args: argparse.Namespace) -> list[Persona]:
        """Build the persona, report on stderr, and write the scrub report if asked."""
        result = self.run(args)
        print_import_report(result, Console(stderr=True, highlight=False))
        report_path = getattr(args, "scrub_report", None)
        if report_path is not None:
            if result.scrub_report is None:
                raise InputError("needs scrubbing; drop --no-scrub.", field="--scrub-report")
            write_scrub_report(result, Path(report_path))
        return [result.persona]
