"""Finding names that must not reach judges: models, personas, conversation ids.

The questionnaire carries only opaque ids, so a leak can come from two places: text the
researcher wrote (title, instructions, questions) and the chats themselves. A name in
the researcher's text is an error; a name inside a chat is reported as a warning, because
chats are shown as they are (someone may well have typed "are you a bot?").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from sdtt.dialogue.condition import Condition
from sdtt.models.registry import provider_of
from sdtt.tasks.questionnaire import Questionnaire

GENERIC_TERMS: tuple[str, ...] = ("bot", "bots", "chatbot", "persona", "sdtt", "simulated")
"""Words that hint at the study's machinery; flagged in researcher-written text."""

_META_NAME_KEYS = (
    "model",
    "models",
    "persona",
    "persona_name",
    "interrogator",
    "interrogator_model",
    "simulator",
    "provider",
)
_MIN_TERM = 3
_NOT_NAMES = frozenset({"script", "human", "none", "null", "mock"})
"""Metadata values that are ordinary words, not names worth hiding."""


def meta_terms(meta: Mapping[str, Any]) -> list[str]:
    """Model and persona names in a conversation's metadata (and model names sans provider,
    unless the provider's names are a script's, ordinary words: ``short`` of
    ``mock/short`` would flag every intro that speaks of short chats)."""
    terms: list[str] = []
    for key in _META_NAME_KEYS:
        value = meta.get(key)
        values = value if isinstance(value, list | tuple) else [value]
        for item in values:
            if isinstance(item, str) and item.strip() and item.strip().lower() not in _NOT_NAMES:
                terms.append(item.strip())
                provider = provider_of(item)
                if "/" in item and not (provider is not None and provider.scripted):
                    terms.append(item.rsplit("/", 1)[1].strip())
    return terms


def source_terms(condition: Condition | None, meta: Mapping[str, Any]) -> list[str]:
    """Model and persona names in a conversation's condition and metadata."""
    named = {} if condition is None else condition.model_dump()
    return meta_terms(named) + meta_terms(meta)


def unique_terms(terms: Iterable[str]) -> list[str]:
    """Terms long enough to search for, without duplicates (case-insensitive), in order."""
    seen: set[str] = set()
    kept: list[str] = []
    for term in terms:
        folded = term.casefold()
        if len(term) >= _MIN_TERM and folded not in seen:
            seen.add(folded)
            kept.append(term)
    return kept


def find_terms(text: str, terms: Iterable[str]) -> list[str]:
    """The terms that occur in ``text`` as whole words, ignoring case."""
    found: list[str] = []
    for term in terms:
        pattern = r"(?<![A-Za-z0-9])" + re.escape(term) + r"(?![A-Za-z0-9])"
        if re.search(pattern, text, flags=re.IGNORECASE):
            found.append(term)
    return found


def researcher_texts(questionnaire: Questionnaire) -> list[tuple[str, str]]:
    """Every text of the questionnaire that is not chat content, as ``(where, text)``."""
    texts = [
        ("title", questionnaire.title),
        ("intro", questionnaire.intro),
        ("end_text", questionnaire.end_text),
    ]
    questions = list(questionnaire.demographics)
    if questionnaire.strategy is not None:
        questions.append(questionnaire.strategy)
    for item in questionnaire.items:
        questions.append(item.judgement)
        if item.topic is not None:
            questions.append(item.topic)
    for question in questions:
        texts.append((f"question {question.name}", question.text))
        texts += [
            (f"question {question.name} option {c.value}", c.label) for c in question.choices or ()
        ]
    return texts


def questionnaire_leaks(
    questionnaire: Questionnaire, specific: Iterable[str]
) -> tuple[list[str], list[str]]:
    """``(errors, warnings)``: names in researcher-written text, and in chat text."""
    specific = unique_terms(specific)
    errors: list[str] = []
    warnings: list[str] = []
    for where, text in researcher_texts(questionnaire):
        for term in find_terms(text, specific):
            errors.append(f"{where} contains {term!r}, which judges must not see.")
        for term in find_terms(text, GENERIC_TERMS):
            warnings.append(f"{where} contains {term!r}; it may tell judges what is tested.")
    for item in questionnaire.items:
        for chat in item.chats:
            for line in chat:
                for term in find_terms(line.text, specific):
                    warnings.append(
                        f"pair {item.id} line {line.number} (chat text) mentions {term!r}; "
                        "judges will see it."
                    )
    return errors, warnings
