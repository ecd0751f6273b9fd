"""Keeping credentials and terminal control codes out of what sdtt prints and stores.

A ``--base-url`` may carry a user name and password (``https://user:pass@host/v1``);
:func:`redact_text` hides them wherever a URL appears in a message or a record.
Chat text, persona details, model and file names come from models, from other people's
exports and from files anyone may have edited. One rule covers every such string on its
way out: :func:`shown` for a Rich console (credentials hidden, control characters that
could retitle the window, clear the screen or move the cursor dropped, Rich markup
escaped so ``[/]`` is text, not a crash), :func:`plot_label` for a matplotlib figure
(``$`` would start mathtext). :func:`printable` is the control-character part alone.
"""

from __future__ import annotations

import re
import unicodedata

REDACTED = "***"
"""What credentials are replaced with."""

# scheme://userinfo@ and, without a scheme, user:password@host. A password may hold
# "#", "/" or "?" that were not percent-encoded: the userinfo runs up to the last "@" of
# the URL when a ":" comes before any "/" and is not a port's (user:pass...@), else up
# to an "@" before the first "/", "?" or "#" (user@host; a path like /@name is no
# userinfo). Without a scheme only the user:password form counts (user@host is an email).
_WITH_SCHEME = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<rest>\S+)")
_WITHOUT_SCHEME = re.compile(r"(?<![\w.+%/:@*-])[A-Za-z0-9][\w.~%!$&'*+,;-]*:[^\s/]\S*@\S+")
_PLAIN_USERINFO = re.compile(r"[^/?#@]+(?:@[^/?#@]+)*(?=@)")
_PORT = re.compile(r"\d+(?:[/?#]|$)")


def _hide_userinfo(rest: str, *, plain: bool = True) -> str:
    """``rest`` (a URL after ``scheme://``) with any userinfo replaced by ``***``;
    ``plain``: a user name without a password counts too."""
    cut = rest.rfind("@")
    if cut == -1:
        return rest
    ends = [i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i != -1]
    colon = rest.find(":", 0, min(ends, default=len(rest)))
    if colon != -1 and not _PORT.match(rest, colon + 1):
        return f"{REDACTED}{rest[cut:]}"
    found = _PLAIN_USERINFO.match(rest) if plain else None
    return f"{REDACTED}{rest[found.end() :]}" if found else rest


def redact_url(url: str) -> str:
    """``url`` with any user name and password replaced by ``***``."""
    return redact_text(url)


def redact_text(text: str) -> str:
    """``text`` with the credentials of every URL in it replaced by ``***``, with or
    without a scheme (``alice:pw@host/v1``)."""
    text = _WITH_SCHEME.sub(lambda match: match["scheme"] + _hide_userinfo(match["rest"]), text)
    return _WITHOUT_SCHEME.sub(lambda match: _hide_userinfo(match[0], plain=False), text)


HIDDEN_CHARACTERS = frozenset(
    # Unicode's Bidi_Control set: marks, embeddings, overrides and isolates, which can
    # show text in another order than it was typed (U+202E shows "gnp.exe" as "exe.png").
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
    # Invisible characters that show nothing at all: zero-width space, word joiner and
    # the invisible operators, the byte-order mark, Mongolian vowel separator, combining
    # grapheme joiner, Hangul and Khmer fillers, interlinear annotation marks. Kept: the
    # zero-width joiner and non-joiner (U+200D, U+200C), which shape emoji and scripts.
    "\u200b\u2060\u2061\u2062\u2063\u2064\u2065\ufeff\u180e\u034f"
    "\u115f\u1160\u3164\uffa0\u17b4\u17b5\ufff9\ufffa\ufffb"
)
"""Characters no reader sees, or that reorder what they see: dropped from every text
shown to people (terminals, plots and every export judges receive)."""
_HIDDEN = re.compile("[" + "".join(sorted(HIDDEN_CHARACTERS)) + "]")


def without_hidden(text: str) -> tuple[str, int]:
    """``text`` without :data:`HIDDEN_CHARACTERS`, and how many were dropped."""
    found = len(_HIDDEN.findall(text))
    return (_HIDDEN.sub("", text), found) if found else (text, 0)


# Kept: newline and tab (layout). Dropped: every other C0 and C1 control (ESC starts the
# sequences that retitle, clear or move), DEL, and the hidden characters above.
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
        if char in kept or (unicodedata.category(char) != "Cc" and char not in HIDDEN_CHARACTERS)
    )


def shown(text: object) -> str:
    """``text`` ready for a Rich console: credentials hidden, control characters dropped,
    markup escaped. Every string sdtt did not write itself goes through it (or through
    :func:`printable` when it is not printed with markup)."""
    from rich.markup import escape  # here: the commands that print have Rich loaded

    return escape(printable(redact_text(str(text))))


def plot_label(text: object) -> str:
    """``text`` ready for a matplotlib label or title: one line, no control characters,
    and ``$`` (which starts mathtext, and crashes on an odd count) shown as itself."""
    return printable(redact_text(str(text)), keep_newlines=False).replace("$", r"\$")
