"""Keeping credentials and terminal control codes out of what sdtt prints and stores.

A ``--base-url`` may carry a user name and password (``https://user:pass@host/v1``);
:func:`redact_text` hides them wherever a URL appears in a message or a record.
Chat text comes from models and from other people's exports, so before it reaches a
terminal :func:`printable` drops the control characters that could retitle the window,
clear the screen or move the cursor.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import urlsplit, urlunsplit

REDACTED = "***"
"""What credentials are replaced with."""

# scheme://userinfo@ : the userinfo runs up to the last "@" before the host part ends.
_USERINFO = re.compile(
    r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^\s/?#@]+(?:@[^\s/?#@]+)*)@"
)


def redact_url(url: str) -> str:
    """``url`` with any user name and password replaced by ``***``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact_text(url)
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{REDACTED}@{host}"))


def redact_text(text: str) -> str:
    """``text`` with the credentials of every URL in it replaced by ``***``."""
    return _USERINFO.sub(lambda match: f"{match['scheme']}{REDACTED}@", text)


# Kept: newline and tab (layout). Dropped: every other C0 and C1 control (ESC starts the
# sequences that retitle, clear or move), DEL, and the bidirectional overrides that can
# make text display in a different order than it is stored.
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# Whole escape sequences go, not just their ESC, so no "[2J" debris is left: CSI
# (ESC [ ... final byte), OSC and other string commands (ESC ] ... BEL or ESC \\), and
# two-character escapes.
_ESCAPE_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x9b[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b[\]PX^_]|[\x90\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"
    r"|\x1b[ -~]"
)


def printable(text: str, *, keep_newlines: bool = True) -> str:
    """``text`` without terminal control characters (and, unless kept, newlines).

    Use it on any text sdtt did not write itself before it goes to a terminal.
    """
    kept = "\n\t" if keep_newlines else "\t"
    return "".join(
        char
        for char in _ESCAPE_SEQUENCE.sub("", text)
        if char in kept or (unicodedata.category(char) != "Cc" and char not in _BIDI_CONTROLS)
    )
