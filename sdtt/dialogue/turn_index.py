"""Turn N+X: where the turns judges see sit in a long test.

A bot conversation's metadata records ``pseudo_turns`` (N: turns of self-directed
pseudo-dialogue in the bot's prompt, 0 for none) and ``live_turns`` (the live turns the
chat was run for). A pair shows live turns ``live_from`` to ``live_to`` (1-based), so the
total turn index shown is ``N + live_to``: the paper's "turn N+X" (a 110-turn test is 100
pseudo turns, then 10 live ones).

Files written before these fields existed still load: a conversation without
``pseudo_turns`` counts as N = 0 when its metadata names no pseudo-dialogue, and as
unknown (no total turn index) when it does; either way a warning says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

PSEUDO_TURNS = "pseudo_turns"
"""Metadata key: turns of pseudo-dialogue in the bot's prompt (N)."""
LIVE_TURNS = "live_turns"
"""Metadata key: live turns the chat was run for."""


def turn_meta(pseudo_turns: int, live_turns: int) -> dict[str, int]:
    """The metadata entries every bot conversation carries."""
    return {PSEUDO_TURNS: pseudo_turns, LIVE_TURNS: live_turns}


def pseudo_turns_of(meta: Mapping[str, Any]) -> tuple[int | None, str | None]:
    """N recorded in a conversation's metadata, and a warning when it had to be inferred.

    Returns ``(N, None)`` when recorded; ``(0, warning)`` for an older file that names no
    pseudo-dialogue; ``(None, warning)`` for an older file that had one of unknown length.
    """
    value = meta.get(PSEUDO_TURNS)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value, None
    had_pseudo = bool(meta.get("pseudo")) or bool(meta.get("pseudo_messages"))
    if had_pseudo:
        return None, (
            "records a pseudo-dialogue but not its length (no 'pseudo_turns'; an older sdtt "
            "wrote it), so its total turn index is unknown"
        )
    return 0, "records no 'pseudo_turns' (an older sdtt wrote it); N = 0 assumed"


def total_turns(pseudo_turns: int | None, live_to: int) -> int | None:
    """The total turn index shown: N plus the index of the last live turn shown."""
    return None if pseudo_turns is None else pseudo_turns + live_to
