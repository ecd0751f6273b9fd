"""WhatsApp ``.txt`` chat exports (Android and iOS, any date order, 12- or 24-hour clock).

A message starts on a line with a timestamp header and continues on the following lines
until the next header:

- Android: ``03.04.24, 09:05 - Ann: text`` or ``4/3/24, 9:05 PM - Ann: text`` (newer
  exports put a narrow no-break space, U+202F, before AM/PM; Spanish writes
  ``1/12/23, 7:04 p. m. - Ann: text`` with no-break spaces in the marker);
- iOS: ``[03/04/2024, 09:05:12] Ann: text``, system and media lines marked by U+200E.

Header lines without ``Name: `` are system lines (the encryption notice, "Ann added
Bob"...) and are dropped, as are iOS lines whose text starts with U+200E. Media
placeholders (``<Media omitted>``, ``image omitted``, ``<attached: ...>``) become media
messages (dropped unless ``--keep-media``; a caption is kept as text) and deleted
messages ("This message was deleted") are dropped. The "<This message was edited>" note
is removed from the text.

Dates carry no order, and the whole file decides it: a day above 12 on any line settles
day against month. When no line does, the order that keeps the messages in time order
wins, then month first for a US English ``AM``/``PM`` clock and day first for every
other (Spanish ``p. m.``/``a. m.``, German ``nachm.``/``vorm.``, ``pm``, 24 hours), and a
warning names the ``--date-format`` (e.g. ``DD/MM/YY``, ``ImportOptions.date_format``)
that settles it. Times carry no zone: they get ``--timezone``.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import re
import zipfile
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timezone, tzinfo
from pathlib import Path
from typing import Any, cast

from sdtt.errors import InputError
from sdtt.personas.conversations import ChatMessage
from sdtt.personas.importers.build import (
    MEDIA_TEXT,
    ChatOutline,
    ImportResult,
    ParsedChat,
    PreparedImport,
    time_order,
)
from sdtt.personas.importers.file_importer import FileImporter
from sdtt.personas.importers.options import Flag, ImportOptions
from sdtt.personas.importers.reading import (
    MAX_FILE_BYTES,
    ZIP_ERRORS,
    decode_text,
    decoded_lines,
    text_lines,
)

_DATE = r"(?P<date>\d{1,4}[./-] ?\d{1,2}[./-] ?\d{1,4})\.?"
_TIME = (
    r"(?P<time>\d{1,2}[:.]\d{2}(?:[:.]\d{2})?)"
    r"(?:\s*(?P<ampm>[AaPp]\.?\s?[Mm]\.?|vorm\.|nachm\.))?"
)
_SPLIT_DATE = re.compile(r"[./-] ?")
_CLOCK_SPLIT = re.compile(r"[:.]")
_US_CLOCK = re.compile(r"[AP]M")
"""AM/PM written as US English exports write it; every other marker ("p. m.", "pm",
"nachm.") comes from a locale that writes the day first."""
_WORD = r"(?:(?:à|klo|um)\s+)?"  # French, Finnish and German put a word before the time
_IOS = re.compile(rf"^\[{_DATE},?\s+{_WORD}{_TIME}\]\s?(?P<rest>.*)$")
_ANDROID = re.compile(rf"^{_DATE},?\s+{_WORD}{_TIME}\s+[-–]\s(?P<rest>.*)$")
_MARKS = (
    "\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\ufeff"
)
_MARKS_SPACE = _MARKS + " "
_CLEAN_STRIP = _MARKS + " \t\n"
_SENDER_STRIP = _MARKS + " \u202f\u00a0"
_QUOTES = frozenset('"“”„«»')
_MAX_SENDER = 80
_NO_DAY: Any = object()

_MEDIA = re.compile(
    r"<(?:media omitted|medien ausgeschlossen|multimedia omitido|médias omis|media weggelaten"
    r"|mídia oculta|multimedia omessi|media omessi)>"
    r"|(?:.*\s)?(?:image|video|audio|sticker|gif|document|contact card|photo|voice message"
    r"|video note)s? omitted"
    r"|(?:bild|video|audio|sticker|gif|dokument)\s+weggelassen"
    r"|(?:imagen|video|audio|sticker|gif|documento)\s+omitid[oa]"
    r"|<attached: [^>]+>"
    r"|.+\.\w{1,5} \(file attached\)"
    r"|null",
    re.IGNORECASE,
)
_DELETED = re.compile(
    r"(?:this message was deleted|you deleted this message|diese nachricht wurde gelöscht"
    r"|du hast diese nachricht gelöscht|se eliminó este mensaje|eliminaste este mensaje"
    r"|ce message a été supprimé|vous avez supprimé ce message"
    r"|questo messaggio è stato eliminato|hai eliminato questo messaggio"
    r"|esta mensagem foi apagada|você apagou esta mensagem|dit bericht is verwijderd"
    r"|je hebt dit bericht verwijderd)\.?",
    re.IGNORECASE,
)
_EDITED = re.compile(r"\s*[\u200e\u200f]?<this message was edited>\s*$", re.IGNORECASE)

ORDERS = ("dmy", "mdy", "ymd")
_LABELS = {
    "dmy": "day/month/year",
    "mdy": "month/day/year",
    "ymd": "year/month/day",
    "ydm": "year/day/month",
    "dym": "day/year/month",
    "myd": "month/year/day",
}
_EXAMPLES = {"dmy": "DD/MM/YY", "mdy": "MM/DD/YY", "ymd": "YYYY-MM-DD"}
_FORMAT_HINT = (
    "Expected lines like '03.04.24, 09:05 - Ann: text', '4/3/24, 9:05 PM - Ann: text' or "
    "'[03/04/2024, 09:05:12] Ann: text'. Export the chat again from WhatsApp "
    "(More > Export chat > Without media)."
)


@dataclass(slots=True)
class _Entry:
    line: int
    date: tuple[str, str, str]
    time: str
    ampm: str | None
    rest: str
    continuation: list[str] = field(default_factory=list)


def parse_date_format(text: str) -> str:
    """The field order of a ``--date-format`` such as ``DD/MM/YY`` or ``%m/%d/%Y``."""
    letters = [char for char in text.lower() if char in "dmy"]
    order = "".join(key for key, _ in itertools.groupby(letters))
    if sorted(order) != ["d", "m", "y"]:
        raise InputError(
            f"{text!r} is not a date format.",
            field="--date-format",
            hint="Write the order of day, month and year, e.g. DD/MM/YY, MM/DD/YYYY or YYYY-MM-DD.",
        )
    return order


def _to_date(parts: tuple[str, str, str], order: str, *, guessing: bool = False) -> date | None:
    fields = dict(zip(order, parts, strict=True))
    year, month, day = fields["y"], fields["m"], fields["d"]
    if len(year) not in (2, 4) or len(month) > 2 or len(day) > 2:
        return None
    if guessing and order.startswith("y") and len(year) != 4:
        return None  # a two-digit year comes last in every locale WhatsApp uses
    try:
        return date(int(year) + (2000 if len(year) == 2 else 0), int(month), int(day))
    except ValueError:
        return None


def detect_date_order(
    dates: Sequence[tuple[str, str, str]], *, us_clock: bool
) -> tuple[str | None, str | None]:
    """The date order that reads every date of the file, and a warning when that was a guess.

    A field above 12 anywhere in the file settles day against month. When no date does,
    the order that keeps the messages in time order wins, then month first if the clock
    is written ``AM``/``PM`` as US English exports write it (``us_clock``), else day first
    (Spanish ``p. m.``, German ``nachm.``, English ``pm`` and 24-hour locales). Returns
    ``(None, None)`` when no order reads them all. ``dates`` are in file order.
    """
    sequence = [parts for parts, _ in itertools.groupby(dates)]
    distinct = list(dict.fromkeys(sequence))
    valid = [
        order
        for order in ORDERS
        if all(_to_date(parts, order, guessing=True) is not None for parts in distinct)
    ]
    if len(valid) <= 1:
        return (valid[0] if valid else None), None

    def disorder(order: str) -> int:
        read = [_to_date(parts, order, guessing=True) for parts in sequence]
        return sum(
            1 for a, b in itertools.pairwise(read) if a is not None and b is not None and b < a
        )

    preferred = "mdy" if us_clock else "dmy"
    scores = {order: disorder(order) for order in valid}
    best = min(scores.values())
    winners = [order for order in valid if scores[order] == best]
    if len(winners) == 1:
        chosen = winners[0]
        reason = "because that keeps the messages in time order"
    else:
        chosen = preferred if preferred in winners else winners[0]
        reason = (
            "as US English exports with an AM/PM clock write them"
            if us_clock
            else "as every locale but US English writes them"
        )
    other = next(order for order in valid if order != chosen)
    warning = (
        f"the dates could be read as {_LABELS[chosen]} or {_LABELS[other]} (no day is above "
        f"12); read them as {_LABELS[chosen]} {reason}. If that is wrong, import again with "
        f"--date-format {_EXAMPLES.get(other, other.upper())}."
    )
    return chosen, warning


def _clock(entry: _Entry, path: Path) -> tuple[int, int, int]:
    pieces = [int(piece) for piece in _CLOCK_SPLIT.split(entry.time)]
    hour, minute = pieces[0], pieces[1]
    second = pieces[2] if len(pieces) > 2 else 0
    if entry.ampm is not None:
        if not 0 <= hour <= 12:
            raise InputError(
                f"{entry.time} {entry.ampm} is not a 12-hour time.", path=path, line=entry.line
            )
        pm = entry.ampm.lower().startswith(("p", "nachm"))
        hour = hour % 12 + (12 if pm else 0)
    if hour > 23 or minute > 59 or second > 59:
        raise InputError(f"{entry.time} is not a time of day.", path=path, line=entry.line)
    return hour, minute, second


def _moment(day: date, clock: tuple[int, int, int], zone: tzinfo) -> datetime:
    hour, minute, second = clock
    return datetime(day.year, day.month, day.day, hour, minute, second, tzinfo=zone)


def _split_lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _entries(lines: Iterable[str]) -> Iterator[_Entry]:
    """The messages of an export's lines, each with its continuation lines (lines
    before the first header are left out)."""
    entry: _Entry | None = None
    for number, raw_line in enumerate(lines, start=1):
        line = raw_line.lstrip(_MARKS)
        # Only an iOS header starts with "[", and an Android one never does.
        match = (_IOS if line[:1] == "[" else _ANDROID).match(line)
        if match is not None:
            if entry is not None:
                yield entry
            day, time, ampm, rest = match.group("date", "time", "ampm", "rest")
            parts = _SPLIT_DATE.split(day)
            entry = _Entry(
                line=number, date=(parts[0], parts[1], parts[2]), time=time, ampm=ampm, rest=rest
            )
        elif entry is not None:
            entry.continuation.append(raw_line)
    if entry is not None:
        yield entry


@dataclass
class _Survey:
    """What the date order is decided on, from a first reading of the export: its
    dates in file order (repeats in a row once), the line each date is first on, and
    the AM/PM markers."""

    dates: list[tuple[str, str, str]] = field(default_factory=list)
    first_lines: dict[tuple[str, str, str], int] = field(default_factory=dict)
    markers: set[str] = field(default_factory=set)

    def add(self, entry: _Entry) -> None:
        """Note one entry's date and marker."""
        if not self.dates or self.dates[-1] != entry.date:
            self.dates.append(entry.date)
            self.first_lines.setdefault(entry.date, entry.line)
        if entry.ampm:
            self.markers.add(entry.ampm)


def _survey(entries: Iterable[_Entry]) -> _Survey:
    survey = _Survey()
    for entry in entries:
        survey.add(entry)
    return survey


def _may_be_media(text: str) -> bool:
    """False where :data:`_MEDIA` cannot match, found faster than trying it: each of its
    forms holds "<", "(", "omit", "weggelassen" or "null" (in any case; checked so only
    on ASCII text, where the case of a letter is as simple as the pattern's)."""
    if not text.isascii() or "<" in text or "(" in text:
        return True
    lower = text.lower()
    return "omit" in lower or "weggelassen" in lower or "null" in lower


def _classify(body: str) -> tuple[str, str]:
    """``(kind, text)``: kind is "text", "media", "deleted", "system" or "empty"."""
    marked = body[:1] in ("\u200e", "\u200f")
    # The note always holds "<": most messages need no search for it.
    clean = (_EDITED.sub("", body) if "<" in body else body).strip(_CLEAN_STRIP)
    first, _, caption = clean.partition("\n")
    first = first.strip(_MARKS_SPACE)
    if _may_be_media(first) and _MEDIA.fullmatch(first):
        caption = caption.strip()
        return ("text", caption) if caption else ("media", MEDIA_TEXT)
    if _DELETED.fullmatch(clean):
        return "deleted", ""
    if marked:
        return "system", ""
    if not clean:
        return "empty", ""
    return "text", clean


def _unpack_error(path: Path) -> InputError:
    return InputError(
        "looks like a zip file but cannot be unpacked.",
        path=path,
        hint="Unzip it yourself and give the chat's .txt file.",
    )


def _chat_member(archive: zipfile.ZipFile, path: Path) -> zipfile.ZipInfo:
    """The chat inside an export made "with media": its one ``_chat.txt`` (or its one
    ``.txt``)."""
    texts = [
        info
        for info in archive.infolist()
        if info.filename.lower().endswith(".txt") and not info.is_dir()
    ]
    preferred = [info for info in texts if info.filename.endswith("_chat.txt")]
    chosen = preferred or texts
    if len(chosen) != 1:
        raise InputError(
            f"holds {len(chosen)} .txt files; which one is the chat is unclear.",
            path=path,
            hint="Unzip it and give the chat's .txt file.",
        )
    if chosen[0].file_size > MAX_FILE_BYTES:
        raise InputError("holds a chat file larger than 1 GB.", path=path)
    return chosen[0]


def _unzip_chat(data: bytes, path: Path) -> bytes:
    """The chat text inside an export made "with media" (a zip holding ``_chat.txt``)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return archive.read(_chat_member(archive, path))
    except InputError:
        raise
    except ZIP_ERRORS:
        raise _unpack_error(path) from None


def _zip_lines(path: Path, member: str) -> Iterator[str]:
    """The lines of the chat ``member`` of the zip export at ``path``, unpacked a part at
    a time, as :func:`text_lines` reads a ``.txt``; the errors of :func:`_unzip_chat`."""
    try:
        archive = zipfile.ZipFile(path)
        handle = archive.open(member)
    except ZIP_ERRORS:
        raise _unpack_error(path) from None
    with archive:
        try:
            yield from decoded_lines(handle, path, lambda: archive.read(member))
        except InputError:
            raise
        except ZIP_ERRORS:
            raise _unpack_error(path) from None


def parse_whatsapp(
    data: bytes, path: Path, *, zone: tzinfo, date_format: str | None = None
) -> ParsedChat:
    """Read a WhatsApp export (``.txt``, or the ``.zip`` made with media)."""
    if data.startswith(b"PK\x03\x04"):
        data = _unzip_chat(data, path)
    text = decode_text(data, path)
    return parse_whatsapp_lines(
        lambda: _split_lines(text), path, zone=zone, date_format=date_format
    )


def _settle_order(survey: _Survey, path: Path, date_format: str | None) -> tuple[str, list[str]]:
    """The date order (``date_format``'s, else detected from ``survey``) and the warning
    when it was a guess."""
    if not survey.dates:
        raise InputError("holds no WhatsApp message lines.", path=path, hint=_FORMAT_HINT)
    if date_format is not None:
        return parse_date_format(date_format), []
    markers = survey.markers
    us_clock = bool(markers) and all(_US_CLOCK.fullmatch(marker) for marker in markers)
    detected, warning = detect_date_order(survey.dates, us_clock=us_clock)
    if detected is None:
        failures = [
            next(d for d in survey.first_lines if _to_date(d, o, guessing=True) is None)
            for o in ORDERS
        ]
        described = "; ".join(
            f"{_LABELS[o]} fails on line {survey.first_lines[d]} ({'/'.join(d)})"
            for o, d in zip(ORDERS, failures, strict=True)
        )
        raise InputError(
            f"no date order reads every date: {described}.",
            path=path,
            line=survey.first_lines[failures[0]],
            hint="Pass --date-format (e.g. DD/MM/YY) to choose the order.",
        )
    return detected, [] if warning is None else [warning]


def _sender_and_text(entry: _Entry) -> tuple[str, str, str]:
    """``(kind, sender, text)`` of an entry: kind "text" or "media", else the reason it
    is left out ("system", "deleted", "empty")."""
    sender, separator, first_line = entry.rest.partition(": ")
    sender = sender.strip(_MARKS_SPACE).lstrip("~").strip(_SENDER_STRIP)
    if not separator or not sender or len(sender) > _MAX_SENDER or not _QUOTES.isdisjoint(sender):
        return "system", "", ""
    continuation = entry.continuation
    kind, text = _classify("\n".join([first_line, *continuation]) if continuation else first_line)
    return kind, sender, text


def _messages(
    entries: Iterable[_Entry], order: str, path: Path, zone: tzinfo, dropped: Counter[str]
) -> Iterator[ChatMessage]:
    """The messages of the entries, their dates read in ``order``; those left out are
    counted in ``dropped``."""
    senders: dict[str, str] = {}  # one string per sender, not one per message
    days: dict[tuple[str, str, str], date | None] = {}
    last_time: datetime | None = None
    last_stamp: tuple[object, ...] = ()
    for entry in entries:
        day = days.get(entry.date, _NO_DAY)
        if day is _NO_DAY:
            day = days[entry.date] = _to_date(entry.date, order)
        if day is None:
            raise InputError(
                f"{'/'.join(entry.date)} is not a date in {_LABELS[order]} order.",
                path=path,
                line=entry.line,
                hint="Check --date-format.",
            )
        stamp = (entry.date, entry.time, entry.ampm)
        if stamp != last_stamp or last_time is None:
            # Messages of one minute share their time, read once.
            last_time = _moment(day, _clock(entry, path), zone)
            last_stamp = stamp
        kind, sender, text = _sender_and_text(entry)
        if kind not in ("text", "media"):
            dropped[kind] += 1
            continue
        yield ChatMessage(
            sender=senders.setdefault(sender, sender),
            text=text,
            time=last_time,
            kind="media" if kind == "media" else "text",
        )


def parse_whatsapp_lines(
    lines: Callable[[], Iterable[str]],
    path: Path,
    *,
    zone: tzinfo,
    date_format: str | None = None,
) -> ParsedChat:
    """Read a WhatsApp export's text, given as a way to read its lines (twice: once for
    the date order, once for the messages), so a large export is never held whole; only
    the messages kept are."""
    order, warnings = _settle_order(_survey(_entries(lines())), path, date_format)
    dropped: Counter[str] = Counter()
    messages = list(_messages(_entries(lines()), order, path, zone, dropped))
    return ParsedChat(
        messages=messages,
        warnings=warnings,
        dropped=dropped,
        detected={} if date_format else {"date order": _LABELS[order]},
    )


@dataclass
class _Outline:
    """A first reading of an export for a streamed import: the date order's survey, the
    senders of the messages kept and the entries left out, and each kept message's date
    and time of day as numbers (its time once the date order is known)."""

    survey: _Survey = field(default_factory=_Survey)
    senders: Counter[str] = field(default_factory=Counter)
    dropped: Counter[str] = field(default_factory=Counter)
    days: dict[tuple[str, str, str], int] = field(default_factory=dict)
    """Each date as written, numbered in the order first read."""
    clocks: dict[tuple[str, str | None], tuple[int, int]] = field(default_factory=dict)
    """Each time of day as written: the line it is first on and its seconds since
    midnight (-1 for no time of day: the second reading says so)."""
    kept_days: array[int] = field(default_factory=lambda: array("I"))
    kept_clocks: array[int] = field(default_factory=lambda: array("i"))


def _seconds_of_day(entry: _Entry) -> int:
    try:
        hour, minute, second = _clock(entry, Path())
    except InputError:
        return -1
    return hour * 3600 + minute * 60 + second


def _outline(entries: Iterable[_Entry], keep_media: bool) -> _Outline:
    outline = _Outline()
    days, clocks = outline.days, outline.clocks
    for entry in entries:
        outline.survey.add(entry)
        clock = clocks.get((entry.time, entry.ampm))
        if clock is None:
            clock = clocks[entry.time, entry.ampm] = (entry.line, _seconds_of_day(entry))
        kind, sender, _ = _sender_and_text(entry)
        if kind == "text" or (kind == "media" and keep_media):
            outline.senders[sender] += 1
            outline.kept_days.append(days.setdefault(entry.date, len(days)))
            outline.kept_clocks.append(clock[1])
        else:
            outline.dropped[kind] += 1
    return outline


def _time_order(outline: _Outline, order: str, zone: tzinfo) -> array[int] | None:
    """The kept messages' positions sorted by time (stably, as the import sorts them);
    ``None`` when the file has them in time order already. Dates and times are valid."""
    import numpy as np  # only here: `sdtt persona import whatsapp --help` stays light

    ordinals = np.array(
        [cast(date, _to_date(day, order)).toordinal() for day in outline.days], dtype=np.int64
    )
    wall = ordinals[np.frombuffer(outline.kept_days, dtype=np.uint32)] * 86_400
    wall += np.frombuffer(outline.kept_clocks, dtype=np.int32)
    if isinstance(zone, timezone):  # one offset: the clock's order is time order
        return time_order(wall)
    # Daylight saving: each distinct clock reading is placed in time once.
    readings, inverse = np.unique(wall, return_inverse=True)
    moments = (
        _moment(date.fromordinal(day), (rest // 3600, rest // 60 % 60, rest % 60), zone)
        for day, rest in (divmod(int(reading), 86_400) for reading in readings)
    )
    instants = np.fromiter(
        (moment.timestamp() for moment in moments), dtype=np.float64, count=len(readings)
    )
    return time_order(instants[inverse])


class WhatsAppImporter(FileImporter):
    """``sdtt persona import whatsapp CHAT.txt --me NAME``."""

    name = "whatsapp"
    help = "a WhatsApp chat export (.txt, Android or iOS)"
    file_help = "The exported chat: the .txt file, or the .zip exported with media."
    flags = (
        Flag(
            "--date-format",
            "date_format",
            "The order of the dates, e.g. DD/MM/YY, MM/DD/YY or YYYY-MM-DD (default: "
            "detected; a warning is printed when it had to be guessed).",
            metavar="ORDER",
        ),
    )

    def parse(self, data: bytes, path: Path, options: ImportOptions) -> ParsedChat:
        """Read the export."""
        return parse_whatsapp(data, path, zone=options.timezone, date_format=options.date_format)

    def _streamed_source(self, path: Path) -> tuple[str, Callable[[], Iterator[str]]] | None:
        """The export's hash and a way to read its chat's lines a part at a time (the
        ``.txt``, or the chat inside a ``.zip`` made with media); ``None`` for what is
        read whole (a pipe, an unreadable file, a zip that is not plainly one chat)."""
        try:
            if not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
                return None
            with path.open("rb") as handle:
                zipped = handle.read(4) == b"PK\x03\x04"
                handle.seek(0)
                digest = hashlib.file_digest(handle, "sha256").hexdigest()
            if not zipped:
                return digest, lambda: text_lines(path)
            with zipfile.ZipFile(path) as archive:
                member = _chat_member(archive, path).filename
        except (InputError, *ZIP_ERRORS):
            return None  # reading it whole says what is wrong
        return digest, lambda: _zip_lines(path, member)

    def load(self, path: Path, options: ImportOptions) -> tuple[ParsedChat, str]:
        """Read the export a part at a time, twice (a pipe is read whole)."""
        source = self._streamed_source(path)
        if source is None:
            return super().load(path, options)
        digest, lines = source
        chat = parse_whatsapp_lines(
            lines, path, zone=options.timezone, date_format=options.date_format
        )
        return chat, digest

    def prepare(self, path: Path, options: ImportOptions) -> PreparedImport:
        """Read the export once for its date order and senders; the persona is built as
        the messages are read again (see :class:`StreamedImport`)."""
        source = self._streamed_source(path)
        if source is None:
            return super().prepare(path, options)
        digest, lines = source
        outline = _outline(_entries(lines()), options.keep_media)
        order, warnings = _settle_order(outline.survey, path, options.date_format)
        zone = options.timezone

        def messages() -> Iterator[ChatMessage]:
            return _messages(_entries(lines()), order, path, zone, Counter())

        bad_date = any(_to_date(day, order) is None for day in outline.survey.first_lines)
        if bad_date or any(seconds < 0 for _, seconds in outline.clocks.values()):
            for _ in messages():  # raises the error of the first bad line, as parse does
                pass
        chat = ChatOutline(
            senders=outline.senders,
            warnings=warnings,
            dropped=outline.dropped,
            detected={} if options.date_format else {"date order": _LABELS[order]},
            time_order=_time_order(outline, order, zone),
        )
        return self.streamed(chat, messages, path, options, digest)


IMPORTER = WhatsAppImporter()


def import_whatsapp(path: str | Path, options: ImportOptions) -> ImportResult:
    """A persona from a WhatsApp export (the ``.txt``, or the ``.zip`` made with media).

    ``options.date_format`` (e.g. ``"DD/MM/YY"``) settles the date order; without it the
    order is detected and ``result.report.warnings`` says when that was a guess.
    """
    return IMPORTER.run(path, options)
