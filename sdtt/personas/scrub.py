"""PII scrubbing: replace personal data in chat text by consistent placeholders.

Emails (also written as ``bob[at]example[dot]com``), phone numbers, URLs, @handles, IBANs,
card numbers, identity numbers, MAC addresses, GPS positions, dates of birth, street
addresses, postcodes and people's names become ``[EMAIL_1]``, ``[PHONE_2]``, ``[NAME_3]``...
Participants' names are given; other people's names are found by
:mod:`sdtt.personas.pii_names`, the structured kinds by :mod:`sdtt.personas.pii_patterns`
(checksums from python-stdnum) and phones also by phonenumbers. One :class:`Scrubber` is used for
a whole persona, so the same value always gets the same placeholder and the bot still
sees that two messages talk about the same person or address. All spellings of one
person's name (full name, first name, last name, nickname) share one placeholder.

The detectors lean towards privacy: a long digit run is treated as a phone number unless
it is clearly a date, a time, a year range, a decimal or an amount with thousands
separators. Dates and times such as "at 10:30" or "2024" are left alone, unless a date
sits beside a word such as "born" or "DOB". Name parts that are everyday words ("Will",
"May", "Mom") are replaced only where they are written with a capital letter, and
accent-less spellings ("Zoe" for "Zoë") count as the name.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal, get_args

import phonenumbers

from sdtt.personas import pii_patterns
from sdtt.personas.pii_names import find_names, listed_first_name, lower_case_first_names

Kind = Literal[
    "EMAIL",
    "URL",
    "HANDLE",
    "IBAN",
    "CARD",
    "MAC",
    "GPS",
    "DOB",
    "ID",
    "ADDRESS",
    "POSTCODE",
    "PHONE",
    "NAME",
]
KINDS: tuple[Kind, ...] = get_args(Kind)
"""Detector order is priority order: an email is never also read as a handle or name, and
an IBAN, card or id number is never also read as a phone number."""

KIND_LABELS: dict[Kind, tuple[str, str]] = {
    "EMAIL": ("email address", "email addresses"),
    "URL": ("URL", "URLs"),
    "HANDLE": ("@handle", "@handles"),
    "IBAN": ("IBAN", "IBANs"),
    "CARD": ("card number", "card numbers"),
    "MAC": ("MAC address", "MAC addresses"),
    "GPS": ("GPS position", "GPS positions"),
    "DOB": ("date of birth", "dates of birth"),
    "ID": ("identity number", "identity numbers"),
    "ADDRESS": ("street address", "street addresses"),
    "POSTCODE": ("postcode", "postcodes"),
    "PHONE": ("phone number", "phone numbers"),
    "NAME": ("name", "names"),
}
# Kinds that always hold a digit: skipped for the many messages with none.
_DIGIT_KINDS = frozenset({"IBAN", "CARD", "GPS", "DOB", "ID", "ADDRESS", "POSTCODE", "PHONE"})
# Local numbers are read as if dialled in these countries; "+" numbers need none.
PHONE_REGIONS = ("US", "GB", "DE", "FR")

_EMAIL = re.compile(
    r"(?<![\w.%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"
)
_TLDS = (
    "com|net|org|edu|gov|info|biz|io|co|me|app|dev|ai|ly|gl|tv|uk|us|ca|au|nz|de|fr|es|it|nl|"
    "be|ch|at|se|no|dk|fi|pl|pt|ru|jp|cn|in|br|mx|ie|eu|xyz|site|online|shop|blog"
)
_URL = re.compile(
    r"(?:\b(?:https?|ftp)://|\bwww\.)[^\s<>\"']+"
    rf"|\b(?:[A-Za-z0-9-]+\.)+(?:{_TLDS})\b(?:/[^\s<>\"']*)?",
    re.IGNORECASE,
)
_URL_TRAILING = ".,;:!?)]}'\"»”’"
_HANDLE = re.compile(r"(?<![\w@./])@[A-Za-z0-9_](?:[A-Za-z0-9_.]*[A-Za-z0-9_])?")
_BROADCAST_HANDLES = {"@here", "@channel", "@everyone", "@all"}
_PHONE = re.compile(r"(?<![\w+(])(?:\+|\()?\d[\d \u00a0\-./()]{5,}\d(?!\w)")
# Spans that look like numbers but are dates, times or year ranges; masked before phones.
_NOT_PHONE = re.compile(
    r"(?<![\d.])\d{4}-\d{1,2}-\d{1,2}(?![\d])"
    r"|(?<!\d[./-])(?<!\d)\d{1,2}[./-]\d{1,2}[./-](?:\d{4}|\d{2})(?![./-]?\d)"
    r"|(?<!\d)\d{1,2}:\d{2}(?::\d{2})?(?!\d)"
    r"|(?<!\d)(?:19|20)\d{2}\s?[-–/]\s?(?:(?:19|20)\d{2}|\d{2})(?![./-]?\d)"
)
_PLACEHOLDER = re.compile(rf"\[(?:{'|'.join(KINDS)})_\d+\]")
_DECIMAL = re.compile(r"\d+[.,]\d+")
_THOUSANDS = re.compile(r"[1-9]\d{0,2}(?:[.,]\d{3})+(?:[.,]\d{1,2})?")

# Names that are also everyday words: replaced only where written with a capital letter.
_COMMON_WORDS = frozenset(
    [
        "will",
        "may",
        "mark",
        "bill",
        "grace",
        "hope",
        "joy",
        "rose",
        "june",
        "april",
        "august",
        "pat",
        "sue",
        "art",
        "rob",
        "jack",
        "dawn",
        "faith",
        "summer",
        "sky",
        "ray",
        "amber",
        "ruby",
        "frank",
        "gene",
        "max",
        "hunter",
        "chase",
        "drew",
        "sandy",
        "rusty",
        "penny",
        "holly",
        "ivy",
        "lily",
        "olive",
        "iris",
        "violet",
        "jade",
        "pearl",
        "crystal",
        "destiny",
        "chance",
        "dean",
        "earl",
        "miles",
        "page",
        "paige",
        "rich",
        "sunny",
        "star",
        "angel",
        "baby",
        "honey",
        "mom",
        "mum",
        "dad",
        "mama",
        "papa",
        "bro",
        "sis",
        "love",
        "me",
        "you",
        "he",
        "she",
        "it",
        "we",
        "us",
        "they",
        "him",
        "her",
        "my",
        "your",
        "our",
        "his",
        "its",
        "their",
        "i",
        "a",
        "an",
        "and",
        "or",
        "but",
        "so",
        "no",
        "yes",
        "hi",
        "hey",
        "ok",
        "not",
        "all",
        "any",
        "one",
        "two",
        "work",
        "home",
        "boss",
    ]
)
# Name particles and titles never scrubbed on their own.
_PARTICLES = frozenset(
    [
        "de",
        "da",
        "di",
        "del",
        "della",
        "der",
        "den",
        "van",
        "von",
        "la",
        "le",
        "du",
        "dos",
        "das",
        "y",
        "e",
        "bin",
        "al",
        "el",
        "jr",
        "sr",
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "the",
        "and",
        "of",
    ]
)


@dataclass
class ScrubReport:
    """What a scrubber replaced: counts only, never the original values."""

    replacements: Counter[str] = field(default_factory=Counter)
    """Replacements made per kind."""
    distinct: Counter[str] = field(default_factory=Counter)
    """Different values found per kind."""
    to_review: int = 0
    """Lower-case words in the persona's own messages that are listed first names: left
    in place (most are words, "will", "mark"), but worth a look before sharing."""

    def as_dict(self) -> dict[str, dict[str, int]]:
        """The report as plain JSON-able data."""
        return {
            "replacements": {kind: self.replacements[kind] for kind in KINDS},
            "distinct": {kind: self.distinct[kind] for kind in KINDS},
            "to_review": {"lower-case first names": self.to_review},
        }

    def summary(self) -> str:
        """One line such as ``3 email addresses (2 distinct), 1 phone number (1 distinct)``."""
        parts = [
            f"{self.replacements[kind]} {KIND_LABELS[kind][self.replacements[kind] != 1]} "
            f"({self.distinct[kind]} distinct)"
            for kind in KINDS
            if self.replacements[kind]
        ]
        text = ", ".join(parts) if parts else "nothing found to replace"
        if self.to_review:
            text += (
                f"; {self.to_review} lower-case "
                f"{'word' if self.to_review == 1 else 'words'} in the persona's messages "
                f"{'is a first name' if self.to_review == 1 else 'are first names'}, "
                "left as written: review them (--scrub-report lists them)"
            )
        return text


@dataclass(frozen=True)
class _Span:
    start: int
    end: int
    kind: Kind
    key: str


def _name_variants(name: str) -> set[str]:
    """The full name plus each part long enough to identify the person alone."""
    cleaned = re.sub(r"[\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]", "", name)
    cleaned = " ".join(cleaned.strip().lstrip("~").split())
    variants: set[str] = set()
    if sum(char.isalpha() for char in cleaned) >= 2:
        variants.add(cleaned)
    for part in re.split(r"[\s,()\[\]|/]+", cleaned):
        part = part.strip(".'\"-_")
        letters = sum(char.isalpha() for char in part)
        if letters >= 2 and part.casefold() not in _PARTICLES:
            variants.add(part)
    # People often type names without their accents: "Zoe" for "Zoë".
    return variants | {_strip_accents(variant) for variant in variants}


def _strip_accents(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return unicodedata.normalize(
        "NFC", "".join(c for c in decomposed if not unicodedata.combining(c))
    )


class Scrubber:
    """Replaces personal data in texts with placeholders, consistently across calls.

    ``people`` is a list of people, each given as the names they go by (full name,
    nickname, username...); every spelling of one person maps to one ``[NAME_n]``.
    With ``find_names`` (the default) other people's names are found too, and each one
    found is remembered like a given person, so "Charlotte Dubois" and a later
    "Charlotte" share a placeholder.
    """

    def __init__(self, people: Iterable[Iterable[str]] = (), *, find_names: bool = True) -> None:
        self.find_names = find_names
        self.report = ScrubReport()
        self._placeholders: dict[tuple[Kind, str], str] = {}
        self._counters: Counter[str] = Counter()
        self._originals: dict[str, str] = {}
        self._name_keys: dict[str, str] = {}
        self._name_pattern: re.Pattern[str] | None = None
        self._review: Counter[str] = Counter()
        # Off only in tests, which check the cheap checks below never skip a value.
        self._prefilter = True
        for index, names in enumerate(people):
            self.add_person(names, key=f"person-{index}")

    def add_person(self, names: Iterable[str], *, key: str | None = None) -> None:
        """Add one person by all the names they go by."""
        variants = {variant for name in names for variant in _name_variants(name)}
        self._add_variants(variants, key or f"person-extra-{len(self._name_keys)}")

    def _add_variants(self, variants: Iterable[str], person: str) -> None:
        # A spelling shared by two people keeps the first person's placeholder.
        variants = set(variants) | {_strip_accents(variant) for variant in variants}
        if not variants:
            return
        for variant in variants:
            folded = variant.casefold()
            if folded not in self._name_keys:
                self._name_keys[folded] = person
                self._name_pattern = None  # compiled again only when a spelling is new

    def _names_regex(self) -> re.Pattern[str] | None:
        if self._name_pattern is None and self._name_keys:
            alternatives = sorted(self._name_keys, key=len, reverse=True)
            body = "|".join(re.escape(name) for name in alternatives)
            self._name_pattern = re.compile(rf"(?<!\w)(?:{body})(?!\w)", re.IGNORECASE)
        return self._name_pattern

    def placeholder(self, kind: Kind, key: str, original: str) -> str:
        """The placeholder for value ``key`` of ``kind``, made on first sight."""
        slot = (kind, key)
        if slot not in self._placeholders:
            self._counters[kind] += 1
            self.report.distinct[kind] += 1
            self._placeholders[slot] = f"[{kind}_{self._counters[kind]}]"
            self._originals[self._placeholders[slot]] = original
        return self._placeholders[slot]

    def to_review(self) -> dict[str, int]:
        """Lower-case first names left in the persona's own messages, with how often.

        Holds personal data: keep it local like :meth:`mapping`.
        """
        return dict(sorted(self._review.items()))

    def mapping(self) -> dict[str, str]:
        """Placeholder -> first original value seen. Holds personal data: keep it local."""
        return dict(self._originals)

    def _spans(self, kind: Kind, text: str) -> list[_Span]:
        if kind == "EMAIL":
            return [
                _Span(match.start(), match.end(), kind, match.group().casefold())
                for match in _EMAIL.finditer(text)
            ] + [
                _Span(start, end, kind, key)
                for start, end, key in pii_patterns.obfuscated_emails(text, _plain_local)
            ]
        if kind == "URL":
            found: list[_Span] = []
            for match in _URL.finditer(text):
                value = match.group().rstrip(_URL_TRAILING)
                if value:
                    key = value.casefold().rstrip("/")
                    found.append(_Span(match.start(), match.start() + len(value), kind, key))
            return found
        if kind == "HANDLE":
            return [
                _Span(match.start(), match.end(), kind, match.group().casefold())
                for match in _HANDLE.finditer(text)
                if match.group().casefold() not in _BROADCAST_HANDLES
            ]
        if kind == "PHONE":
            return _phone_spans(text)
        if kind != "NAME":
            return [
                _Span(start, end, kind, key)
                for start, end, key in pii_patterns.DETECTORS[kind](text)
            ]
        if self.find_names and (not self._prefilter or _has_upper(text)):
            for name in find_names(text):
                self._add_variants(name.spellings, f"found-{_strip_accents(name.spellings[0])}")
        pattern = self._names_regex()
        if pattern is None:
            return []
        names: list[_Span] = []
        for match in pattern.finditer(text):
            value = match.group()
            folded = value.casefold()
            if folded in _COMMON_WORDS and not value[:1].isupper():
                continue
            person = self._name_keys.get(folded)
            if person is not None:
                names.append(_Span(match.start(), match.end(), kind, person))
        return names

    def scrub(self, text: str) -> str:
        """``text`` with every detected value replaced by its placeholder.

        One pass per kind, in priority order, each on the text the previous passes left:
        a URL holding a name is one URL, and the name left beside a replaced handle
        ("@Ann Smith") is still found. Placeholders are never matched again.
        """
        return self.scrub_with_spans(text)[0]

    def scrub_own(self, text: str) -> str:
        """:meth:`scrub` for a message the persona wrote, noting lower-case first names.

        Lower-case names are not replaced (too many are words), but in the persona's own
        messages, which the bot imitates, each one left is counted for review.
        """
        scrubbed = self.scrub(text)
        words = lower_case_first_names(
            _PLACEHOLDER.sub(" ", scrubbed) if "[" in scrubbed else scrubbed
        )
        self._review.update(words)
        self.report.to_review += len(words)
        return scrubbed

    def scrub_with_spans(self, text: str) -> tuple[str, list[Replacement]]:
        """Like :meth:`scrub`, also saying where each replaced value was in ``text``."""
        # origin[i]: where character i of the current text was in the input (-1: placeholder);
        # made only once something is replaced, as most messages hold nothing.
        origin: list[int] | None = None
        replaced: list[Replacement] = []
        has_digits = _has_digit(text) if self._prefilter else any(char.isdigit() for char in text)
        protected = _protected(text)
        kinds = _kinds_to_try(text, has_digits) if self._prefilter else KINDS
        for kind in kinds:
            if kind in _DIGIT_KINDS and not has_digits:
                continue
            spans = [
                span
                for span in self._spans(kind, text)
                if span.end > span.start
                and all(span.end <= start or span.start >= end for start, end in protected)
            ]
            if not spans:
                continue
            if origin is None:
                origin = list(range(len(text)))
            taken: list[_Span] = []
            for span in sorted(spans, key=lambda s: (s.start, s.start - s.end)):
                if not taken or span.start >= taken[-1].end:
                    taken.append(span)
            pieces: list[str] = []
            new_origin: list[int] = []
            position = 0
            for span in taken:
                pieces.append(text[position : span.start])
                new_origin += origin[position : span.start]
                placeholder = self.placeholder(kind, span.key, text[span.start : span.end])
                pieces.append(placeholder)
                new_origin += [-1] * len(placeholder)
                replaced.append(
                    Replacement(origin[span.start], origin[span.end - 1] + 1, kind, placeholder)
                )
                self.report.replacements[kind] += 1
                position = span.end
            pieces.append(text[position:])
            new_origin += origin[position:]
            text = "".join(pieces)
            origin = new_origin
            protected = _protected(text)
        return text, sorted(replaced, key=lambda item: item.start)


@dataclass(frozen=True)
class Replacement:
    """One replaced value: its place in the input text, its kind and its placeholder."""

    start: int
    end: int
    kind: Kind
    placeholder: str


# What a text must hold for a kind's detector to find anything in it (a cheap test
# first, so the many messages that hold no personal data skip the costly patterns).
_MAY_EMAIL = re.compile(r"@|\sat\s|[\[({<]\s*at?\s*[\])}>]", re.IGNORECASE)
_ASCII_DIGIT = re.compile(r"[0-9]")


def _has_digit(text: str) -> bool:
    """Whether any character of ``text`` is a digit as :meth:`str.isdigit` reads one."""
    if text.isascii():
        return _ASCII_DIGIT.search(text) is not None
    return any(char.isdigit() for char in text)


def _has_upper(text: str) -> bool:
    """Whether any character of ``text`` is upper case (names are found only there)."""
    if text.lower() != text:
        return True
    return not text.isascii() and any(char.isupper() for char in text)


def _kinds_to_try(text: str, has_digits: bool) -> tuple[Kind, ...]:
    """The kinds whose detectors may find something in ``text``, in priority order."""
    dot = "." in text
    return _KINDS_BY_CLUE[
        (
            _MAY_EMAIL.search(text) is not None,
            dot or "://" in text,
            "@" in text,
            has_digits,
            dot or ":" in text or "-" in text,  # a MAC address's separators
        )
    ]


def _kinds_for(email: bool, url: bool, handle: bool, digits: bool, mac: bool) -> tuple[Kind, ...]:
    clues = (("EMAIL", email), ("URL", url), ("HANDLE", handle), ("MAC", mac))
    skipped = {kind for kind, clue in clues if not clue}
    if not digits:
        skipped |= _DIGIT_KINDS
    return tuple(kind for kind in KINDS if kind not in skipped)


_KINDS_BY_CLUE = {clues: _kinds_for(*clues) for clues in itertools.product((False, True), repeat=5)}


def _protected(text: str) -> list[tuple[int, int]]:
    """Where the placeholders already in ``text`` are: never matched again."""
    if "[" not in text:
        return []
    return [match.span() for match in _PLACEHOLDER.finditer(text)]


def _plain_local(local: str) -> bool:
    """Whether the word before a plain "at" is an email's local part: a first name ("tom at
    example.org") or a word no one writes in prose ("j.smith", "tom84")."""
    return listed_first_name(local) or re.search(r"[\d._%+-]", local) is not None


def _phone_spans(text: str) -> list[_Span]:
    masked = _NOT_PHONE.sub(lambda match: "#" * len(match.group()), text)
    spans: list[_Span] = []
    for match in _PHONE.finditer(masked):
        value = match.group().rstrip(" \u00a0-./(")
        start = match.start()
        # An opening parenthesis belongs to the number only if it closes inside it.
        if value.startswith("(") and ")" not in value:
            value = value[1:]
            start += 1
        digits = re.sub(r"\D", "", value)
        if not 7 <= len(digits) <= 15:
            continue
        international = value.startswith(("+", "00", "("))
        if not international and (_DECIMAL.fullmatch(value) or _THOUSANDS.fullmatch(value)):
            continue
        groups = re.findall(r"\d+", value)
        if len(groups) > 1 and max(len(group) for group in groups) < 2:
            continue  # "1 2 3 4 5 6 7" is counting, not a number
        spans.append(_Span(start, start + len(value), "PHONE", digits.lstrip("0")))
    if sum(char.isdigit() for char in masked) >= 7:
        spans += _library_phone_spans(masked)
    return spans


def _library_phone_spans(masked: str) -> list[_Span]:
    """Numbers that phonenumbers calls valid, dialled from any of :data:`PHONE_REGIONS`."""
    spans: list[_Span] = []
    for region in PHONE_REGIONS:
        for match in phonenumbers.PhoneNumberMatcher(
            masked, region, leniency=phonenumbers.Leniency.VALID
        ):
            if _THOUSANDS.fullmatch(match.raw_string) or _DECIMAL.fullmatch(match.raw_string):
                continue
            digits = re.sub(r"\D", "", match.raw_string)
            spans.append(_Span(match.start, match.end, "PHONE", digits.lstrip("0")))
    return spans
