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
