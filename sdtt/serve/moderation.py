"""The moderation hook of ``sdtt serve``: a message is checked against the spec's
``[chat] blocked_words`` before it is stored or shown."""

from __future__ import annotations

import re
from collections.abc import Sequence


def blocked_word(text: str, words: Sequence[str]) -> str | None:
    """The first of ``words`` that ``text`` contains as a whole word (any case), or None."""
    for word in words:
        if word.strip() and re.search(
            rf"(?<!\w){re.escape(word.strip())}(?!\w)", text, re.IGNORECASE
        ):
            return word
    return None
