"""Detectors for structured personal data: bank, card and id numbers, addresses, places.

Each detector takes a text and returns ``(start, end, key)`` triples, where ``key`` is a
normalised form of the value (the same IBAN written with or without spaces gets one key).
Checksums come from python-stdnum (IBAN mod 97, Luhn for cards, national id numbers);
the rest are patterns. The scrubber decides the order in which they run and what
replaces them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from types import ModuleType

import stdnum.br.cpf
import stdnum.dk.cpr
import stdnum.es.dni
import stdnum.es.nie
import stdnum.fi.hetu
import stdnum.fr.nir
import stdnum.iban
import stdnum.it.codicefiscale
import stdnum.no.fodselsnummer
import stdnum.se.personnummer
import stdnum.us.ssn
from stdnum import luhn
from stdnum.exceptions import InvalidChecksum, ValidationError

Found = tuple[int, int, str]
"""One detected value: start, end and its normalised key."""


def _compact(text: str) -> str:
    return re.sub(r"[\s.\-/]", "", text).upper()


# --- obfuscated emails ------------------------------------------------------------------
_BRACKET_AT = r"\s*(?:\[\s*at?\s*\]|\(\s*at?\s*\)|\{\s*at\s*\}|<\s*at\s*>)\s*"
_BRACKET_DOT = r"\s*(?:\[\s*(?:dot|\.)\s*\]|\(\s*(?:dot|\.)\s*\)|\{\s*dot\s*\}|<\s*dot\s*>)\s*"
_WORD_DOT = r"\s+dot\s+"
_ANY_DOT = rf"(?:{_BRACKET_DOT}|{_WORD_DOT}|\.)"
_LOCAL = r"(?<![\w.%+-])[a-z0-9][a-z0-9._%+-]*"
_LABEL = r"[a-z0-9][a-z0-9-]*"
_TLD = r"[a-z]{2,12}(?![\w@])"
_LOCAL = rf"{_LOCAL}(?:(?:{_BRACKET_DOT}|{_WORD_DOT})[a-z0-9][a-z0-9_%+-]*)*"
_OBFUSCATED_EMAIL = re.compile(
    # "bob[at]example[dot]com", "bob (at) mail.example.org"
    rf"{_LOCAL}(?:{_BRACKET_AT}|\s*@\s*(?={_LABEL}{_BRACKET_DOT}|{_LABEL}{_WORD_DOT}))"
    rf"{_LABEL}(?:{_ANY_DOT}{_LABEL})*{_ANY_DOT}{_TLD}"
    # "bob at example dot com": a plain "at" only when the dot is spelled out too
    rf"|{_LOCAL}\s+at\s+{_LABEL}(?:{_ANY_DOT}{_LABEL})*(?:{_BRACKET_DOT}|{_WORD_DOT}){_TLD}",
    re.IGNORECASE,
)
_AT_PART = re.compile(rf"{_BRACKET_AT}|\s*@\s*|\s+at\s+", re.IGNORECASE)
_DOT_PART = re.compile(rf"{_BRACKET_DOT}|{_WORD_DOT}", re.IGNORECASE)


# "tom at example.org": only a plain "at" and plain dots, so the caller checks the word
# before "at" can be an address's local part ("we are at example.org" holds none).
_PLAIN_AT_EMAIL = re.compile(
    rf"(?P<local>{_LOCAL})\s+at\s+{_LABEL}(?:\.{_LABEL})*\.(?:{_TLD})", re.IGNORECASE
)


def obfuscated_emails(
    text: str, plain_local: Callable[[str], bool] = lambda word: False
) -> list[Found]:
    """Emails written to dodge scrapers: ``bob[at]example[dot]com``, ``bob at x dot org``.

    ``plain_local`` says whether a word before a plain "at" is a local part:
    ``tom at example.org`` is an email, ``look at example.org`` is not.
    """
    found: list[Found] = []
    for match in _PLAIN_AT_EMAIL.finditer(text):
        if plain_local(match.group("local")):
            local, domain = re.split(r"\s+at\s+", match.group(), maxsplit=1, flags=re.I)
            found.append((match.start(), match.end(), f"{local}@{domain}".casefold()))
    for match in _OBFUSCATED_EMAIL.finditer(text):
        value = match.group()
        parts = _AT_PART.split(value, maxsplit=1)
        if len(parts) != 2:
            continue
        local, domain = (_DOT_PART.sub(".", part) for part in parts)
        found.append((match.start(), match.end(), f"{local}@{domain}".casefold()))
    return found


# --- bank accounts and cards --------------------------------------------------------------
_IBAN = re.compile(
    r"(?<![A-Za-z0-9])(?:[A-Z]{2}\d{2}(?:[ \-]?[A-Z0-9]){11,30}"
    r"|[a-z]{2}\d{2}(?:[ \-]?[a-z0-9]){11,30})(?![A-Za-z0-9])"
)


def _is_iban(compact: str) -> bool:
    """A valid IBAN, or one whose only fault is its check digits (a typo still identifies)."""
    try:
        stdnum.iban.validate(compact)
        return True
    except InvalidChecksum:
        fixed = compact[:2] + stdnum.iban.calc_check_digits(compact) + compact[4:]
        return bool(stdnum.iban.is_valid(fixed))
    except ValidationError:
        return False


def ibans(text: str) -> list[Found]:
    """IBANs, with or without spaces, checked against each country's format."""
    found: list[Found] = []
    for match in _IBAN.finditer(text):
        value = match.group()
        # The pattern may have swallowed a following code word: trim group by group.
        while len(_compact(value)) >= 15:
            if _is_iban(_compact(value)):
                found.append((match.start(), match.start() + len(value), _compact(value)))
                break
            value = re.sub(r"[ \-]?[A-Za-z0-9]{1,4}$", "", value)
    return found


# A separator may be spaced out: "4111 - 1111 - 1111 - 1111".
_CARD_GAP = r"(?: ?[\-.] ?| )?"
_CARD = re.compile(rf"(?<![\d\-.])\d(?:{_CARD_GAP}\d){{12,18}}(?![\d])")
_GROUPED_16 = re.compile(r"\d{4}( ?[\-.]? ?)\d{4}\1\d{4}\1\d{4}")


def cards(text: str) -> list[Found]:
    """Payment card numbers: 13-19 digits passing Luhn, or any 16 digits in groups of 4."""
    found: list[Found] = []
    for match in _CARD.finditer(text):
        digits = re.sub(r"\D", "", match.group())
        if luhn.is_valid(digits) or _GROUPED_16.fullmatch(match.group()):
            found.append((match.start(), match.end(), digits))
    return found


# --- devices and places ---------------------------------------------------------------------
_MAC = re.compile(
    r"(?<![\w:.-])(?:[0-9A-Fa-f]{2}([:-])(?:[0-9A-Fa-f]{2}\1){4}[0-9A-Fa-f]{2}"
    r"|[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4})(?![\w:-])"
)


def macs(text: str) -> list[Found]:
    """MAC addresses: ``a4:5e:60:c2:19:0f``, ``A4-5E-...``, ``a45e.60c2.190f``."""
    return [
        (match.start(), match.end(), re.sub(r"[^0-9a-f]", "", match.group().casefold()))
        for match in _MAC.finditer(text)
    ]


_DEG = r"\s?°?"
_DECIMAL_PAIR = re.compile(
    rf"(?<![\w.])([-+−]?\d{{1,2}}\.\d{{3,}}){_DEG}\s?([NS])?\s*[,;/ ]\s*"
    rf"([-+−]?\d{{1,3}}\.\d{{3,}}){_DEG}\s?([EW])?(?![\w.])"
)
_NUMBER = r"[-+−]?\d{1,3}\.\d{3,}"
_HEMISPHERE_FIRST = re.compile(
    r"(?<![\w])[NS]\s?\d{1,2}\.\d{3,}°?\s*[,;/ ]\s*[EW]\s?\d{1,3}\.\d{3,}°?(?![\w.])"
)
_LABELLED_PAIR = re.compile(
    rf"(?i:\blat(?:itude)?)\s*[:=]?\s*{_NUMBER}\s*[,;/]?\s*"
    rf"(?i:lon|long|lng|longitude)\s*[:=]?\s*{_NUMBER}(?![\d.])"
)
_DMS_ONE = r"\d{1,3}°\s?\d{1,2}\s?['′’]\s?(?:\d{1,2}(?:[.,]\d+)?\s?(?:\"|″|''|”)\s?)?"
_DMS_PAIR = re.compile(rf"{_DMS_ONE}[NS]\s*,?\s*{_DMS_ONE}[EW](?!\w)")


def coordinates(text: str) -> list[Found]:
    """GPS positions: decimal pairs (``48.85837, 2.29448``) and degrees-minutes-seconds."""
    found: list[Found] = []
    for match in _DECIMAL_PAIR.finditer(text):
        latitude = float(match.group(1).replace("−", "-"))
        longitude = float(match.group(3).replace("−", "-"))
        if abs(latitude) <= 90 and abs(longitude) <= 180:
            found.append((match.start(), match.end(), f"{latitude:.4f},{longitude:.4f}"))
    for match in [*_DMS_PAIR.finditer(text), *_HEMISPHERE_FIRST.finditer(text)]:
        found.append((match.start(), match.end(), re.sub(r"\s", "", match.group())))
    for match in _LABELLED_PAIR.finditer(text):
        found.append((match.start(), match.end(), re.sub(r"\s", "", match.group())))
    return found


# --- identity numbers -------------------------------------------------------------------------
# Formats whose checksum python-stdnum knows; a match that fails its check is left to the
# phone detector, which still replaces long digit runs.
_ID_CHECKS: list[tuple[re.Pattern[str], tuple[ModuleType, ...]]] = [
    (re.compile(r"(?<![\d-])\d{3}-\d{2}-\d{4}(?![\d-])"), (stdnum.us.ssn,)),
    (re.compile(r"(?<![\d.])\d{3}\.\d{3}\.\d{3}-\d{2}(?!\d)"), (stdnum.br.cpf,)),
    (
        re.compile(r"(?<![\d-])\d{6}[-+A]\d{3}[0-9A-Y](?![\w-])"),
        (stdnum.fi.hetu, stdnum.dk.cpr, stdnum.se.personnummer),
    ),
    (re.compile(r"(?<!\d)\d{6}\s?\d{5}(?!\d)"), (stdnum.no.fodselsnummer,)),
    (
        re.compile(
            r"(?<![\w])[12]\s?\d{2}\s?\d{2}\s?(?:\d{2}|2[AB])\s?\d{3}\s?\d{3}\s?\d{2}(?!\d)"
        ),
        (stdnum.fr.nir,),
    ),
    (re.compile(r"(?<![\w])[XYZ]?\d{7,8}-?[A-Z](?![\w])"), (stdnum.es.dni, stdnum.es.nie)),
    (
        re.compile(r"(?<![\w])[A-Z]{6}\d{2}[A-Z]\d{2}[A-Z]\d{3}[A-Z](?![\w])"),
        (stdnum.it.codicefiscale,),
    ),
]
# Letters and at least five digits in one upper-case token: passports, licences, NINOs.
_ALNUM_ID = re.compile(r"(?<![\w-])(?=[A-Z0-9]*[A-Z])(?=(?:[A-Z]*\d){5})[A-Z0-9]{6,18}(?![\w-])")
_UK_NINO = re.compile(
    r"(?<![\w])(?:[A-Z]{2}\s?\d{2}\s?\d{2}\s?\d{2}\s?[A-D]|[a-z]{2}\s?\d{2}\s?\d{2}\s?\d{2}\s?[a-d])"
    r"(?![\w])"
)
_ID_KEYWORD = re.compile(
    r"(?i:passport|passeport|pasaporte|passaporto|reisepass|ausweis|personalausweis|"
    r"id\s?card|identity\s+card|id\s+(?:number|no)|national\s+id|ssn|social\s+security|"
    r"national\s+insurance|nino|dni|nie|nif|bsn|personnummer|tax\s+id|tin|"
    r"driv(?:er'?s|ing)\s+licen[cs]e|licen[cs]e\s+(?:number|no))"
    r"(?i:\s+(?:number|no\.?|nr\.?|num))?\s*(?:(?i:is)\s+|[:#=\-]\s*)?"
    r"(?P<value>(?=(?:[A-Z \-]*\d){5})[A-Z0-9]{1,20}(?:[ \-][A-Z0-9]{1,12}){0,4})(?![\w])"
)
_LONG_DIGITS = re.compile(r"(?<![\d])\d{16,}(?![\d])")


def id_numbers(text: str) -> list[Found]:
    """Passport-like and national identity numbers, checked with python-stdnum when known."""
    found: list[Found] = []
    for pattern, modules in _ID_CHECKS:
        for match in pattern.finditer(text):
            if any(module.is_valid(match.group()) for module in modules):
                found.append((match.start(), match.end(), _compact(match.group())))
    for simple in (_ALNUM_ID, _UK_NINO, _LONG_DIGITS):
        found += [(m.start(), m.end(), _compact(m.group())) for m in simple.finditer(text)]
    for match in _ID_KEYWORD.finditer(text):
        start, end = match.span("value")
        found.append((start, end, _compact(match.group("value"))))
    return found


# --- street addresses and postcodes -----------------------------------------------------------
_EN_STREET_ANY_CASE = r"street|road|rd|avenue|ave|lane|boulevard|blvd|crescent|parkway|highway"
_EN_STREET_CAPITAL = (
    r"St|Dr|Ln|Pl|Ct|Sq|Hwy|Pkwy|Way|Place|Court|Close|Walk|Row|Hill|Square|Grove|Gardens|"
    r"Mews|Terrace|Drive|Circle|Terr|Loop|Trail|Alley|Cove|View|Heights|Ridge|Path|Crossing|Bend"
)
_STOP = (
    r"the|a|an|of|on|in|at|to|up|down|off|my|your|our|this|that|from|by|mins?|minutes?|hours?|"
    r"hrs?|km|miles?|more|other|few|and|or|for|with|long|short|blocks?|doors?|times?|days?|"
    r"weeks?|years?|people|kids|cars?|lanes?|steps?|per|cent|percent"
)
_EN_ADDRESS = re.compile(
    r"(?<![\w.,])\d{1,5}[A-Za-z]?(?:[-/]\d{1,4}[A-Za-z]?)?,?\s+"
    rf"(?:(?!(?i:{_STOP})\b)(?:[A-Za-z]|\d{{1,3}}(?:st|nd|rd|th)\b)[\w'’.-]*\s+){{1,4}}"
    rf"(?:(?i:{_EN_STREET_ANY_CASE})\b\.?|(?:{_EN_STREET_CAPITAL})\b\.?)"
    r"(?:\s+(?:NW|NE|SW|SE|N|S|E|W)\b)?"
    r"(?:,?\s*(?i:apt|apartment|flat|unit|suite|ste|#)\.?\s*#?\w{1,5}\b)?"
)
_ROMANCE_TYPES = (
    r"rue|avenue|av\.|bd|boulevard|chemin|allée|allee|impasse|place|quai|cours|route|via|"
    r"viale|piazza|piazzale|corso|vicolo|calle|c/|avenida|avda\.?|paseo|plaza|carrer|rua|"
    r"travessa|largo|praça|ronda|camino"
)
_PARTICLE = r"(?:de|del|della|delle|dei|di|du|des|la|le|les|l[’']|d[’']|da|do|dos|das|el|los|las)"
_STREET_NAME = (
    rf"(?:{_PARTICLE}\s*)*[A-ZÀ-Ý][\w’'.-]*(?:\s+(?:{_PARTICLE}\s*)*[A-ZÀ-Ý][\w’'.-]*){{0,3}}"
)
_ROMANCE_NUMBER_FIRST = re.compile(
    rf"(?<![\w])\d{{1,4}}(?:\s?(?:bis|ter))?,?\s+(?i:{_ROMANCE_TYPES})\s+{_STREET_NAME}(?![\w])"
)
_ROMANCE_NUMBER_LAST = re.compile(
    rf"(?<![\w])(?i:{_ROMANCE_TYPES})\s+{_STREET_NAME},?\s+(?:n[º°o.]\s*)?\d{{1,4}}[A-Za-z]?(?![\w])"
)
_GERMANIC_SUFFIX = (
    r"straße|strasse|str\.|weg|gasse|platz|allee|ring|damm|ufer|laan|straat|gracht|plein|"
    r"dijk|kade|steig|chaussee|pfad|gata|gatan|vej|vägen|veien"
)
_GERMANIC_ADDRESS = re.compile(
    rf"(?<![\w])(?:[A-ZÄÖÜÅØ][\wäöüßåøæé-]*(?:{_GERMANIC_SUFFIX})"
    rf"|[A-ZÄÖÜÅØ][\wäöüßåøæé-]+\s+(?:Straße|Strasse|Str\.|Weg|Gasse|Platz|Allee|Ring|Damm"
    r"|Gate|Gata|Gatan|Vej|Vei|Veien|Vägen|Väg|Allé))"
    r"\s+\d{1,4}[a-zA-Z]?(?:[-/]\d{1,4})?(?![\w])"
)


# One-word English streets: "221 Kingsway", "1560 Broadway", "12 Eastgate".
_EN_ONE_WORD = re.compile(r"(?<![\w.,])\d{1,5}[A-Za-z]?\s+[A-Z][a-z]+(?:way|gate)\b")
# German streets named with a preposition: "Am Markt 4", "An der Alster 12", "Zum Hafen 3".
# Not times ("Am Montag 5", "Im Mai 12"), nor a count before a noun ("Zur Zeit 3 Leute").
_GERMAN_NOT_STREET = (
    r"Montag|Dienstag|Mittwoch|Donnerstag|Freitag|Samstag|Sonntag|Wochenende|Januar|Februar|"
    r"März|April|Mai|Juni|Juli|August|September|Oktober|November|Dezember|Jahr|Moment|Zeit|"
    r"Morgen|Abend|Anfang|Ende|Schnitt|Durchschnitt|Ganzen|Prinzip|Grunde|Endeffekt"
)
_GERMAN_PREPOSITION = re.compile(
    r"(?<![\w])(?:Am|An\s+der|An\s+den|Auf\s+der|Auf\s+dem|Im|In\s+der|In\s+den|Zum|Zur"
    rf"|Unter\s+den|Hinter\s+der|Vor\s+dem)\s+(?!(?:{_GERMAN_NOT_STREET})\b)[A-ZÄÖÜ][\wäöüß-]+"
    r"\s+\d{1,3}[a-z]?(?![\w:]|[.,]\d|\s+[A-ZÄÖÜ][a-zäöüß])"
)
# Polish streets after their abbreviation: "ul. Marszałkowska 84", "al. Jana Pawła II 15/3".
_POLISH_ADDRESS = re.compile(
    r"(?<![\w])(?i:ul\.|ulica|al\.|aleja|pl\.|plac|os\.|osiedle)\s*"
    r"(?:[A-ZĄĆĘŁŃÓŚŹŻ0-9][\wąćęłńóśźż.-]*\s+){1,4}\d{1,4}[a-zA-Z]?(?:/\d{1,4})?(?![\w])"
)


def street_addresses(text: str) -> list[Found]:
    """Street addresses with a house number, in English, Romance, Germanic, Polish styles."""
    found: list[Found] = []
    for pattern in (
        _EN_ADDRESS,
        _EN_ONE_WORD,
        _ROMANCE_NUMBER_FIRST,
        _ROMANCE_NUMBER_LAST,
        _GERMANIC_ADDRESS,
        _GERMAN_PREPOSITION,
        _POLISH_ADDRESS,
    ):
        for match in pattern.finditer(text):
            value = match.group().rstrip(".,")
            found.append((match.start(), match.start() + len(value), value.casefold()))
    return found


_US_STATES = (
    "AL|AK|AZ|AR|CA|CO|CT|DE|FL|GA|HI|ID|IL|IN|IA|KS|KY|LA|ME|MD|MA|MI|MN|MS|MO|MT|NE|NV|NH|"
    "NJ|NM|NY|NC|ND|OH|OK|OR|PA|RI|SC|SD|TN|TX|UT|VT|VA|WA|WV|WI|WY|DC"
)
_NOT_CITY = (
    r"Euros?|Dollars?|Pounds?|EUR|USD|GBP|Steps?|Followers?|Likes?|Views?|Points?|Miles?|"
    r"Words?|Pages?|Calories|People|Members?|Users?|Km|Kms|Items?|Units?"
)
_CITY = rf"(?!(?:{_NOT_CITY})\b)[A-ZÀ-Ý][a-zà-ÿ'’-]+"
_POSTCODES = [
    # UK, e.g. SW1A 2AA, and Canada, e.g. K1A 0B1
    re.compile(r"(?<![\w])(?:[A-Z]{1,2}\d[A-Z\d]?\s?\d[ABD-HJLNP-UW-Z]{2})(?![\w])"),
    re.compile(r"(?<![\w])[ABCEGHJ-NPRSTVXY]\d[A-Z]\s?\d[A-Z]\d(?![\w])"),
    # US ZIP after a state: "Austin, TX 78701"
    re.compile(rf"(?<=\b(?:{_US_STATES})\s)\d{{5}}(?:-\d{{4}})?(?![\w])"),
    re.compile(rf"(?<=\b(?:{_US_STATES}),\s)\d{{5}}(?:-\d{{4}})?(?![\w])"),
    # Continental codes before a city: "75002 Paris", "8001 Zürich", "1012 AB Amsterdam"
    re.compile(rf"(?<![\w.,€$£-])(?:[A-Z]{{1,2}}-)?\d{{5}}(?=\s{_CITY})"),
    re.compile(rf"(?<![\w.,€$£-])(?!(?:19|20)\d\d\b)\d{{4}}(?:\s?[A-Z]{{2}})?(?=\s{_CITY})"),
    # After a keyword: "postcode 75002", "zip: 94103"
    re.compile(
        r"(?i:\b(?:zip|zip\s?code|post\s?code|postal\s+code|plz|cp|code\s+postal))\s*:?\s*"
        r"(?P<value>[A-Z0-9]{3,5}(?:[\s-][A-Z0-9]{2,4})?)(?![\w])"
    ),
]


def postcodes(text: str) -> list[Found]:
    """Postcodes: UK and Canadian formats anywhere, numeric codes beside a state or city."""
    found: list[Found] = []
    for pattern in _POSTCODES:
        for match in pattern.finditer(text):
            group = "value" if "value" in pattern.groupindex else 0
            found.append((match.start(group), match.end(group), _compact(match.group(group))))
    return found


# --- dates of birth -------------------------------------------------------------------------
_MONTHS = (
    # English, German, French, Spanish, Italian, Portuguese, Dutch, Polish (genitive)
    r"jan(?:uary|\.)?|feb(?:ruary|\.)?|mar(?:ch|\.)?|apr(?:il|\.)?|may|june?|july?|"
    r"aug(?:ust|\.)?|sept?(?:ember|\.)?|oct(?:ober|\.)?|nov(?:ember|\.)?|dec(?:ember|\.)?|"
    r"januar|jänner|februar|märz|mai|juni|juli|oktober|dezember|"
    r"janvier|février|fevrier|mars|avril|juin|juillet|août|aout|septembre|octobre|novembre|"
    r"décembre|decembre|enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|"
    r"setiembre|octubre|noviembre|diciembre|gennaio|febbraio|aprile|maggio|giugno|luglio|"
    r"settembre|ottobre|dicembre|janeiro|fevereiro|março|maio|junho|julho|setembro|outubro|"
    r"novembro|dezembro|januari|februari|maart|mei|augustus|"
    r"stycznia|lutego|marca|kwietnia|maja|czerwca|lipca|sierpnia|września|wrzesnia|"
    r"października|pazdziernika|listopada|grudnia"
)
_DAY = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th|er|º|\.)?"
_YEAR = r"(?:19|20)\d{2}"
_DATE = (
    rf"(?:{_YEAR}[-./]\d{{1,2}}[-./]\d{{1,2}}"
    rf"|\d{{1,2}}[-./]\d{{1,2}}[-./](?:{_YEAR}|\d{{2}})"
    rf"|{_DAY}\s*(?:(?:of|de|di)\s+)?(?:{_MONTHS})(?:,?\s*(?:(?:de|del)\s+)?'?{_YEAR}|'\d{{2}})?"
    rf"|(?:{_MONTHS})\s+{_DAY}(?:,?\s*{_YEAR})?"
    rf"|(?:{_MONTHS})\s+{_YEAR})"
)
_BIRTH_WORD = (
    r"born|birthday|b-?day|birth\s?date|date\s+of\s+birth|d\.?o\.?b\.?|"
    r"geboren|geb\.|geburtstag|geburtsdatum|née?|naissance|anniversaire|"
    r"nacid[oa]|naci|nació|nacimiento|cumpleaños|cumple|"
    r"urodzon[aey]|urodziłam|urodziłem|urodziny|urodzenia|"
    r"nat[oa]|nascita|compleanno|nascid[oa]|aniversário|jarig|verjaardag"
)
_DOB = re.compile(
    rf"(?<![\w])(?i:{_BIRTH_WORD})(?![\w])[^\S\n]*[:=\-]?"
    # up to four short words between: "born on the", "nacido el", "geboren am", "is on"
    rf"(?:[^\S\n]*(?i:on|the|is|was|in|am|ist|le|el|il|em|op|w|dnia|du|del|de|my|her|his|:)){{0,4}}"
    rf"[^\S\n]*(?P<value>(?i:{_DATE}))(?![\w])"
)


# The date first: "am 3. März 1985 geboren", "12 maja 1990 urodzona", "1/2/1990 born".
_DOB_BEFORE = re.compile(
    rf"(?<![\w])(?P<value>(?i:{_DATE}))[^\S\n]+(?:\w+[^\S\n]+)?"
    r"(?i:geboren|born|urodzon[aey]|urodziłam|urodziłem|nat[oa]|née?|nacid[oa])(?![\w])"
)


def dates_of_birth(text: str) -> list[Found]:
    """A date written next to "born", "birthday", "DOB" and the like, in several languages."""
    return [
        (match.start("value"), match.end("value"), re.sub(r"\s", "", match["value"]).casefold())
        for pattern in (_DOB, _DOB_BEFORE)
        for match in pattern.finditer(text)
    ]


DETECTORS: dict[str, Callable[[str], list[Found]]] = {
    "IBAN": ibans,
    "CARD": cards,
    "MAC": macs,
    "GPS": coordinates,
    "DOB": dates_of_birth,
    "ID": id_numbers,
    "ADDRESS": street_addresses,
    "POSTCODE": postcodes,
}
"""The structured detectors by kind."""
