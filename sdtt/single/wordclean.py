"""Post-processing of word associations, the same for human and machine answers.

The steps of the papers' Methods, in their order: lower case; every space and non-letter
character removed (``ice cream`` -> ``icecream``); stop words refused; the word
lemmatised (:mod:`sdtt.single.lemma`, a rule-based stand-in for NLTK's WordNet
lemmatiser, which needs a download); words of fewer than three letters refused; and an
answer too similar to its cue refused: when a common run of letters covers more than 60 %
of the shorter word (``grand`` and ``grandiose``, ``happy`` and ``unhappy``), or the two
lemmas are the same. Refused answers keep their reason, so they can be counted.

The stop-word list is our own list of English function words (articles, pronouns,
auxiliaries, prepositions, conjunctions and common adverbs), close in scope to NLTK's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

from sdtt.single.lemma import lemmatise

MIN_LETTERS = 3
"""Shorter answers are refused (after lemmatising)."""
MAX_OVERLAP = 0.6
"""An answer sharing a run of letters longer than this share of the shorter word with
its cue is too similar to it."""

_STOP_TEXT = """
    a about above after again against all am an and any are aren as at be because been
    before being below between both but by can could couldn did didn do does doesn doing
    don down during each few for from further had hadn has hasn have haven having he her
    here hers herself him himself his how i if in into is isn it its itself just ll me
    might mightn more most must mustn my myself need needn no nor not now of off on once
    only or other our ours ourselves out over own re s same shall shan she should
    shouldn so some such t than that the their theirs them themselves then there these
    they this those through to too under until up ve very was wasn we were weren what
    when where which while who whom why will with won would wouldn y you your yours
    yourself yourselves o d m ma ain also yet ever
"""
STOP_WORDS: frozenset[str] = frozenset(_STOP_TEXT.split())
"""English function words an association may not be."""

_NON_LETTERS = re.compile(r"[^a-z]")


@dataclass(frozen=True)
class Cleaned:
    """One answer after post-processing: the word, or why it was refused."""

    word: str
    """The processed word (what was left of it when refused)."""
    reason: str | None = None
    """None when usable; else why not ('empty', 'stop word', 'fewer than 3 letters',
    'too similar to the cue')."""


def letters_only(text: str) -> str:
    """Lower case, every space and non-letter character removed (ASCII letters kept)."""
    return _NON_LETTERS.sub("", text.lower())


def too_similar(cue: str, word: str) -> bool:
    """Whether ``word`` repeats its cue: a shared run of letters covers more than
    :data:`MAX_OVERLAP` of the shorter of the two (their lemmas compared too)."""
    if lemmatise(cue) == lemmatise(word):
        return True
    shorter = min(len(cue), len(word))
    if not shorter:
        return False
    match = SequenceMatcher(None, cue, word, autojunk=False).find_longest_match(
        0, len(cue), 0, len(word)
    )
    return match.size / shorter > MAX_OVERLAP


def clean_association(cue: str, answer: str) -> Cleaned:
    """Post-process one answer to ``cue`` (see the module's docstring for the steps)."""
    word = letters_only(answer)
    if not word:
        return Cleaned("", "empty")
    if word in STOP_WORDS:
        return Cleaned(word, "stop word")
    word = lemmatise(word)
    if len(word) < MIN_LETTERS:
        return Cleaned(word, f"fewer than {MIN_LETTERS} letters")
    if too_similar(letters_only(cue), word):
        return Cleaned(word, "too similar to the cue")
    return Cleaned(word)
