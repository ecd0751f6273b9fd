"""Find the names of people who are not participants, offline, from name lists.

First names and surnames come from the person providers of Faker (MIT, installed with
sdtt, data inside the package: nothing is downloaded). A capitalised word is read as a
name when it is a listed first name, a listed surname mid-sentence, or any word after a
title ("Dr Okafor"); a following capitalised word joins it as a surname ("Charlotte
Dubois", "José García Márquez"). Listed names that are also everyday words ("Will",
"May", "Long") are not names on their own; that list is ``data/name_words.txt``, built
from real chat text by ``benchmarks/build_name_words.py``. Lower-case names of
non-participants ("met charlotte") are not found: too many names are also words.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

OUTPUT_WORDS = Path(__file__).parent / "data" / "name_words.txt"


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_TOKEN = re.compile(r"[^\W\d_]+(?:(?:-|['’](?=[^\W\d_]{2}))[^\W\d_]+)*")
_POSSESSIVE = ("'s", "’s")
_PART_BREAK = re.compile(r"[-'’]")
_CONTRACTION = re.compile(r"['’](?:t|s|m|re|ve|ll|d)\b", re.IGNORECASE)
_SENTENCE_END = ".!?:;\"'“”‘’(*•>-–—\n"
_PARTICLES = _words(
    "de da di del della der den van von la le du dos das bin ibn al el ter ten zu y"
)
_TITLES = _words(
    "mr mrs ms miss mx dr prof sir dame madam madame mme mlle monsieur m herr frau "
    "señor senor señora senora sr sra srta signor signora sig dott uncle aunt auntie "
    "grandma grandpa coach officer nurse"
)
# Names that are everyday words, beside those found in chat by the builder script.
_NAME_WORDS = _words(
    "will may mark bill grace hope joy rose june april august pat sue art rob jack dawn "
    "faith summer sky ray amber ruby frank gene max hunter chase drew sandy rusty penny "
    "holly ivy lily olive iris violet jade pearl crystal destiny chance dean earl miles "
    "page paige rich sunny star angel baby honey love"
)
# Words people capitalise in chat that the name lists also hold: never names.
_EXTRA_WORDS = _words(
    "monday tuesday wednesday thursday friday saturday sunday january february march "
    "april may june july august september october november december christmas easter "
    "god lord jesus allah buddha mom mum dad mama papa mommy daddy grandma grandpa "
    "bro sis dude man guys lol omg ok okay yes yeah yep nope no hi hey hello thanks "
    "thank sorry please sure cool great nice well oh ah wow haha good bad happy "
    "english french spanish german italian dutch american british european asian "
    "african christian catholic muslim jewish north south east west central new old "
    "saint san santa st street road avenue park lake river mount university college "
    "school hospital church station airport bank hotel cafe restaurant bar club "
    "team group chat ai bot siri alexa google apple amazon netflix spotify uber tesla "
    "disney marvel star wars harry potter pokemon mario zelda queen king prince princess "
    "pope president dell ford chanel gucci prada dior america asia europe africa "
    "australia antarctica yesterday today tomorrow tonight then now also maybe"
)
# First names and pet forms people use in chat that Faker's lists lack: Polish, Russian
# and German diminutives, and common Chinese, Indian and Arabic given names.
_MORE_FIRST = _words(
    "kasia gosia basia ania asia ola ula zosia jola marta kuba bartek tomek wojtek maciek "
    "janek staszek franek kacper sasha masha dasha natasha katya kolya misha grisha "
    "vanya tanya olya seryozha lena sveta yulia bex becks becca jojo lulu mimi kiki "
    "mei ling wei xiao li jing yan hui min ming hong fang yun xin hao lan qing "
    "priyanka aditi ananya deepika kavya shreya pooja neha sneha divya rahul arjun rohit "
    "vikram aarav vivaan ishaan sanjay ravi suresh ramesh anil sunil "
    "fatima aisha yusuf omar khalid hamza zainab layla noor amir tariq bilal "
    "chidi ngozi chiamaka emeka tunde adebayo kwame kofi abena"
)
# Cities that the name lists also hold, too well known to be anyone's name in chat.
_CITIES = _words(
    "paris london york berlin madrid rome vienna dublin boston dallas houston denver "
    "chicago seattle phoenix orlando austin brooklyn manhattan oxford cambridge lyon "
    "milan naples florence geneva zurich munich hamburg prague warsaw lisbon barcelona "
    "valencia tokyo delhi mumbai toronto vancouver montreal melbourne brisbane perth "
    "auckland wellington cairo lagos nairobi kingston hollywood vegas miami atlanta "
    "detroit portland nashville memphis queens bristol leeds liverpool manchester "
    "glasgow edinburgh cardiff belfast norwich durham chester brighton bath"
)


@dataclass(frozen=True)
class _Lexicon:
    first: frozenset[str]
    last: frozenset[str]
    words: frozenset[str]
    """Never a name, nor part of one: months, greetings, brands..."""
    places: frozenset[str]
    """Not a name on its own, but may be a surname after a first name ("Daniela Costa")."""
    ambiguous: frozenset[str]
    """Names that are also everyday words: a name only mid-sentence or after a name."""


@functools.lru_cache(maxsize=65536)
def _fold(word: str) -> str:
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    return "".join(char for char in decomposed if not unicodedata.combining(char))


def _strings(value: object) -> list[str]:
    if isinstance(value, dict | list | tuple | set | frozenset):
        return [item for item in value if isinstance(item, str)]
    return []


@functools.cache
def listed_names() -> tuple[frozenset[str], frozenset[str]]:
    """First names and surnames of every Faker locale, as written there."""
    import faker.providers.person as person

    first: set[str] = set()
    last: set[str] = set()
    for module in pkgutil.iter_modules(person.__path__):
        provider = importlib.import_module(f"{person.__name__}.{module.name}").Provider
        attributes = vars(provider)
        for name in ("first_names", "first_names_male", "first_names_female"):
            first.update(_strings(attributes.get(name)))
        last.update(_strings(attributes.get("last_names")))
    return frozenset(first), frozenset(last)


@functools.cache
def _everyday_words() -> frozenset[str]:
    from faker.providers.lorem.en_US import Provider as English

    # English lorem words only: other locales' word lists are cut from texts full of names.
    words = set(English.word_list) | _NAME_WORDS
    if OUTPUT_WORDS.exists():
        words.update(OUTPUT_WORDS.read_text(encoding="utf-8").split())
    return frozenset(_fold(word) for word in words)


@functools.cache
def _places() -> frozenset[str]:
    import faker.providers.address as address

    words = set(_CITIES)
    for module in pkgutil.iter_modules(address.__path__):
        provider = importlib.import_module(f"{address.__name__}.{module.name}").Provider
        for name in ("countries", "states", "provinces", "regions"):
            # Single-word places only: "Georgia", "Jordan", "Victoria" are places first.
            words.update(item for item in _strings(vars(provider).get(name)) if " " not in item)
    return frozenset(_fold(word) for word in words)


@functools.cache
def _lexicon() -> _Lexicon:
    first, last = listed_names()
    never = frozenset(_fold(word) for word in _EXTRA_WORDS | _PARTICLES | _TITLES)
    places = _places() - never
    return _Lexicon(
        first=frozenset(_fold(name) for name in first | _MORE_FIRST if len(name) >= 2)
        - never
        - places,
        last=frozenset(_fold(name) for name in last if len(name) >= 2) - never - places,
        words=never,
        places=places,
        ambiguous=_everyday_words() - never - places,
    )


def listed_first_name(word: str) -> bool:
    """Whether ``word`` is a listed first name that is no everyday word ("will")."""
    folded = _fold(word)
    lexicon = _lexicon()
    return folded in lexicon.first and folded not in lexicon.ambiguous


def lower_case_first_names(text: str) -> list[str]:
    """Lower-case words of ``text`` that are listed first names and no everyday word."""
    return [word for word in _TOKEN.findall(text) if _lower_case_first_name(word)]


@functools.lru_cache(maxsize=1 << 16)
def _lower_case_first_name(word: str) -> bool:
    # Asked once per distinct word, not once per word of every message.
    return word.islower() and len(word) >= 3 and listed_first_name(word)


@dataclass(frozen=True)
class FoundName:
    """A name found in a text: where it is, and the spellings that identify the person."""

    start: int
    end: int
    spellings: tuple[str, ...]


def _capitalised(token: str) -> bool:
    return token[:1].isupper() and not token.isupper()


def _starts_sentence(text: str, start: int) -> bool:
    position = start - 1
    while position >= 0 and text[position] in " \t":
        position -= 1
    return position < 0 or text[position] in _SENTENCE_END


def find_names(text: str) -> list[FoundName]:
    """Names of people in ``text``, by the rules in this module's docstring."""
    lexicon = _lexicon()
    # "Don't" is no "Don", but "Charlotte's" is Charlotte.
    tokens = [
        match
        for match in _TOKEN.finditer(text)
        if not _CONTRACTION.match(text, match.end())
        or text[match.end() : match.end() + 2] in _POSSESSIVE
    ]
    found: list[FoundName] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        word = token.group()
        if not _capitalised(word):
            index += 1
            continue
        folded = _fold(word)
        parts = [_fold(part) for part in _PART_BREAK.split(word) if part]
        after_title = (
            index > 0
            and _fold(tokens[index - 1].group()) in _TITLES
            and _capitalised(tokens[index - 1].group())
            and _joined(text, tokens[index - 1], token)
        )
        starts = _starts_sentence(text, token.start())
        is_first = folded in lexicon.first or (
            len(parts) > 1 and parts[0] in lexicon.first and folded not in lexicon.words
        )
        is_last = folded in lexicon.last
        follows = _name_after(text, tokens, index, lexicon)
        begins = (
            _capitalised(word)
            and folded not in lexicon.words
            and (is_first or after_title or (is_last and (not starts or follows > index)))
            and (after_title or not starts or folded not in lexicon.ambiguous)
        )
        if not begins:
            index += 1
            continue
        end_index = follows if follows > index else index
        # An unlisted given name before a listed one joins it: "Priyanka Sharma".
        if _unlisted_before(text, tokens, index, lexicon) and (
            not found or found[-1].end <= tokens[index - 1].start()
        ):
            index -= 1
            token = tokens[index]
        spellings = [text[token.start() : tokens[end_index].end()]]
        for member in tokens[index : end_index + 1]:
            member_folded = _fold(member.group())
            ordinary = any(
                member_folded in words
                for words in (lexicon.words, lexicon.ambiguous, lexicon.places)
            )
            if not ordinary and len(member_folded) >= 3:
                spellings.append(member.group())
        found.append(FoundName(token.start(), tokens[end_index].end(), tuple(spellings)))
        index = end_index + 1
    return found


def _unlisted_before(text: str, tokens: list[re.Match[str]], index: int, lexicon: _Lexicon) -> bool:
    """Whether the token before ``index`` is a capitalised unknown word right beside it."""
    if index == 0:
        return False
    before = tokens[index - 1]
    folded = _fold(before.group())
    return (
        _capitalised(before.group())
        and text[before.end() : tokens[index].start()] == " "
        and len(folded) >= 2
        and not any(
            folded in words
            for words in (lexicon.words, lexicon.ambiguous, lexicon.places, _TITLES, _PARTICLES)
        )
    )


def _joined(text: str, left: re.Match[str], right: re.Match[str]) -> bool:
    """Whether two tokens are one name's neighbours: only a space or a dot between."""
    return re.fullmatch(r"\.?\s", text[left.end() : right.start()]) is not None


def _name_after(text: str, tokens: list[re.Match[str]], index: int, lexicon: _Lexicon) -> int:
    """The index of the last token of a surname run after ``index`` (``index`` if none)."""
    last = index
    position = index + 1
    while position < len(tokens):
        # Particles such as "de la" only count when a capitalised word follows them.
        run = position
        while (
            run < len(tokens)
            and tokens[run].group() in _PARTICLES
            and _joined(text, tokens[run - 1], tokens[run])
        ):
            run += 1
        if run >= len(tokens) or not _joined(text, tokens[run - 1], tokens[run]):
            break
        word = tokens[run].group()
        if text[tokens[run - 1].end() : tokens[run].start()] != " ":
            break
        if not _capitalised(word) or _fold(word) in lexicon.words:
            break
        last = position = run
        position += 1
    return last
