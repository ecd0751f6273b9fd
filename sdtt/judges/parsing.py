"""Reading an LLM judge's answer: a clear option or nothing, never a guess.

An answer counts only when it names exactly one option unambiguously: the whole answer
is the option ("B", "(A)", "Option B", "**A**", "The answer is B.") or exactly one line
says "Answer: X". Anything else (both options mentioned, neither, prose around a letter)
is non-compliant: the caller asks again a bounded number of times, then records the
judgement as non-compliant. The returned option always occurs in the text as written.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_FORMATTING = re.compile(r"[*_`#>\"'“”‘’]")
_PREFIX = r"(?:(?:the\s+)?(?:final\s+)?(?:answer|option|choice)\s*(?:is\s*)?[:\-]?\s*)?"
_ANSWER_LINE = re.compile(r"^\s*(?:final\s+)?answer\s*[:\-]\s*\(?([A-Z])\)?\s*[.!]?\s*$", re.I)


def _whole(options: Sequence[str]) -> re.Pattern[str]:
    letters = "".join(re.escape(option) for option in options)
    return re.compile(rf"^\s*{_PREFIX}[(\[]?([{letters}])[)\]]?\s*[.!]?\s*$", re.IGNORECASE)


def parse_option(text: str, options: Sequence[str] = ("A", "B")) -> str | None:
    """The single option ``text`` clearly gives, or None when it is not clear.

    Option letters must be written in upper case (a lone "a" is an article), and the
    result is always one of ``options`` that appears in ``text``.
    """
    cleaned = _FORMATTING.sub("", text).strip()
    match = _whole(options).match(cleaned)
    if match is not None and match.group(1) in options:
        return match.group(1)
    found = []
    for line in cleaned.splitlines():
        line_match = _ANSWER_LINE.match(line)
        if line_match is not None:
            found.append(line_match.group(1))
    if len(found) == 1 and found[0] in options:
        return found[0]
    return None


def parse_label(text: str) -> str | None:
    """A single-transcript judge's verdict: ``"human"`` or ``"ai"``, or None when unclear.

    Accepts the word alone (any case, with formatting or a final full stop) or one
    "Answer: ..." line; anything naming both or neither is None.
    """
    cleaned = _FORMATTING.sub("", text).strip()
    words = {"human": "human", "person": "human", "ai": "ai", "bot": "ai", "machine": "ai"}
    whole = re.fullmatch(rf"\s*{_PREFIX}([A-Za-z]+)\s*[.!]?\s*", cleaned, re.IGNORECASE)
    if whole is not None and whole.group(1).lower() in words:
        return words[whole.group(1).lower()]
    found = []
    for line in cleaned.splitlines():
        line_match = re.fullmatch(r"\s*answer\s*[:\-]\s*([A-Za-z]+)\s*[.!]?\s*", line, re.I)
        if line_match is not None and line_match.group(1).lower() in words:
            found.append(words[line_match.group(1).lower()])
    return found[0] if len(set(found)) == 1 and len(found) == 1 else None


_NUMBER = r"(\d{1,3}(?:\.\d+)?)"
_PROBABILITY_WHOLE = re.compile(
    rf"^\s*(?:(?:my\s+)?(?:answer|probability|belief|estimate)\s*(?:is\s*)?[:\-]?\s*)?"
    rf"{_NUMBER}\s*(?:%|percent|/\s*100)?\s*[.!]?\s*$",
    re.IGNORECASE,
)
_PROBABILITY_LINE = re.compile(
    rf"^\s*(?:answer|probability|belief)\s*[:\-]\s*{_NUMBER}\s*(?:%|/\s*100)?\s*[.!]?\s*$",
    re.IGNORECASE,
)


def _belief_value(text: str) -> float | None:
    value = float(text)
    # "0.7" could be a probability or 0.7 on the 0-100 scale: ambiguous, so unread.
    if "." in text and 0 < value < 1:
        return None
    return value if 0 <= value <= 100 else None


def parse_probability(text: str) -> float | None:
    """A belief from 0 to 100 that ``text`` clearly gives, or None.

    Accepts the number alone ("73", "73%", "73/100", "Probability: 73") or exactly one
    "Answer: N" line. Numbers outside 0-100, fractions between 0 and 1 (a probability or
    a tiny percentage?), several numbers or prose are None: never guessed.
    """
    cleaned = _FORMATTING.sub("", text).strip()
    whole = _PROBABILITY_WHOLE.match(cleaned)
    if whole is not None:
        return _belief_value(whole.group(1))
    found = [m.group(1) for line in cleaned.splitlines() if (m := _PROBABILITY_LINE.match(line))]
    return _belief_value(found[0]) if len(found) == 1 else None
