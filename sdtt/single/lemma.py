"""A small rule-based English lemmatiser for one-word associations.

The papers lemmatised with NLTK's WordNet lemmatiser, whose data (WordNet) is not in any
wheel: it is downloaded at run time, which sdtt never does. This module is a documented
stand-in that runs offline: a table of common irregular forms, then suffix rules for
plurals (``-ies``, ``-es``, ``-s``), verb forms (``-ing``, ``-ed``, doubled consonants)
and comparatives (``-er``/``-est`` only for the short adjectives listed). It maps the
regular inflections of everyday words to their base forms and leaves a word it is unsure
of as it is (``news``, ``glass``, ``bus``, ``this``): a missed lemma only keeps two
spellings of one answer apart, while a wrong one would change the answer.

It is not WordNet: derivations (``happiness``) stay, and rare irregular forms outside the
table stay inflected. Results are lower case.
"""

from __future__ import annotations


def _pairs(text: str) -> dict[str, str]:
    """``form=lemma`` pairs separated by white space."""
    return dict(pair.split("=") for pair in text.split())


IRREGULAR: dict[str, str] = _pairs(
    """
    children=child men=man women=woman people=person mice=mouse feet=foot teeth=tooth
    geese=goose knives=knife wives=wife lives=life leaves=leaf wolves=wolf halves=half
    selves=self shelves=shelf loaves=loaf thieves=thief oxen=ox dice=die was=be were=be
    been=be is=be are=be am=be went=go gone=go goes=go did=do done=do does=do had=have
    has=have made=make said=say saw=see seen=see took=take taken=take came=come
    gave=give given=give knew=know known=know got=get gotten=get ran=run ate=eat
    eaten=eat wrote=write written=write spoke=speak spoken=speak broke=break
    broken=break chose=choose chosen=choose drove=drive driven=drive flew=fly flown=fly
    grew=grow grown=grow threw=throw thrown=throw drew=draw drawn=draw sang=sing
    sung=sing swam=swim swum=swim began=begin begun=begin drank=drink drunk=drink
    fell=fall fallen=fall felt=feel found=find thought=think brought=bring bought=buy
    caught=catch taught=teach fought=fight sold=sell told=tell left=leave kept=keep
    slept=sleep sent=send spent=spend built=build met=meet paid=pay stood=stand
    understood=understand lost=lose held=hold led=lead sat=sit won=win wore=wear
    worn=wear tore=tear torn=tear rode=ride ridden=ride rose=rise risen=rise woke=wake
    hid=hide hidden=hide bit=bite bitten=bite froze=freeze frozen=freeze stole=steal
    stolen=steal shook=shake forgot=forget forgotten=forget lying=lie dying=die
    tying=tie going=go doing=do being=be seeing=see buses=bus gases=gas better=good
    best=good worse=bad worst=bad
    """
)
"""Irregular forms of nouns, verbs and adjectives and their lemmas (checked before any
suffix rule)."""

_KEEP_TEXT = """
    news glass grass class bus gas yes this his its us was series species lens chaos
    bias atlas canvas iris tennis physics mathematics politics economics always perhaps
    thus less unless across kiss boss loss dress stress happiness business sadness
    kindness illness darkness red bed shed sled wed bred fled sped need seed feed weed
    speed breed bleed greed deed reed creed hundred sacred naked wicked kindred beloved
    ring king sing thing spring string wing swing bring sting morning evening nothing
    something everything anything ceiling pudding wedding building feeling meeting
    painting clothing during ping cling fling sling wring bling viking dumpling sibling
    darling duckling sterling herring earring icing awning lightning offspring water
    paper dinner summer winter number river silver finger mother father sister brother
    teacher butter letter matter never ever over under after other weather tiger ladder
    hammer corner flower power tower fever cancer danger anger hunger soccer computer
    monster master doctor chapter
    """
KEEP: frozenset[str] = frozenset(_KEEP_TEXT.split())
"""Words that look inflected but are lemmas already."""

SHORT_COMPARATIVES: dict[str, str] = _pairs(
    """
    bigger=big biggest=big smaller=small smallest=small faster=fast fastest=fast
    slower=slow slowest=slow taller=tall tallest=tall older=old oldest=old younger=young
    youngest=young happier=happy happiest=happy hotter=hot hottest=hot colder=cold
    coldest=cold darker=dark darkest=dark brighter=bright brightest=bright
    stronger=strong strongest=strong higher=high highest=high longer=long longest=long
    shorter=short shortest=short larger=large largest=large nicer=nice nicest=nice
    easier=easy easiest=easy richer=rich richest=rich
    """
)
"""Comparatives and superlatives of common short adjectives (``-er`` is too often part
of a noun, ``water``, to be cut by rule)."""

_VOWELS = frozenset("aeiou")
_E_ENDINGS = (
    "at",
    "iz",
    "bl",
    "dg",
    "iv",
    "ak",
    "ok",
    "ik",
    "uc",
    "ac",
    "rs",
    "ns",
    "rg",
    "av",
    "nc",
)
"""Stem endings after which a cut ``-ing``/``-ed`` had an ``e`` (making -> make)."""


def lemmatise(word: str) -> str:
    """The lemma of one lower-cased English word, by the rules in this module's docstring."""
    word = word.lower()
    if word in IRREGULAR:
        return IRREGULAR[word]
    if word in SHORT_COMPARATIVES:
        return SHORT_COMPARATIVES[word]
    if word in KEEP or len(word) <= 3:
        return word
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return _verb_stem(word[: -len(suffix)])
    return _singular(word)


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes", "zzes")):
        return word[:-2]
    if word.endswith("oes") and len(word) > 4:
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is", "ous")):
        return word[:-1]
    return word


def _lost_e(stem: str) -> bool:
    # "smok" (smoking) lost its e, "cook" (cooking) did not: a vowel-led ending counts
    # only after a consonant; a consonant cluster (danc, charg) always does.
    ending = stem[-2:]
    if ending not in _E_ENDINGS:
        return False
    return ending[0] not in _VOWELS or (len(stem) >= 3 and stem[-3] not in _VOWELS)


def _verb_stem(stem: str) -> str:
    # running -> runn -> run; hopping -> hopp -> hop (but not "fall", "kiss", "add").
    if (
        len(stem) >= 3
        and stem[-1] == stem[-2]
        and stem[-1] not in _VOWELS
        and stem[-1] not in "lsz"
    ):
        return stem[:-1]
    if stem.endswith("i") and len(stem) >= 3:
        return stem[:-1] + "y"  # cried -> cri -> cry
    if _lost_e(stem) or (
        len(stem) >= 3
        and stem[-1] not in _VOWELS | {"w", "x", "y"}
        and stem[-2] in _VOWELS
        and stem[-3] not in _VOWELS
        and stem[-2:] not in ("en", "er", "on", "el", "ad", "ed")
        and len(stem) <= 4
    ):
        return stem + "e"  # making -> make, hoping -> hope, smiled -> smile
    return stem
