"""Turn N+X: where the turns judges see sit in a long test.

A bot conversation's :class:`~sdtt.dialogue.condition.Condition` records ``pseudo_turns``
(N: turns of self-directed pseudo-dialogue in the bot's prompt, 0 for none) and
``live_turns`` (the live turns the chat was run for). A pair shows live turns
``live_from`` to ``live_to`` (1-based), so the total turn index shown is
``N + live_to``: the paper's "turn N+X" (a 110-turn test is 100 pseudo turns, then 10
live ones).

Files written before N was recorded still load: a conversation without it counts as
N = 0 when it names no pseudo-dialogue, and as unknown (no total turn index) when it
does; either way a warning says so.

Judgements and belief traces keep no numbers of their own for this: their ``condition``
mapping nests the bot's condition (``bot_condition``) and the live window shown
(``live_from``..``live_to``), and :func:`shown_turns` reads X, N and N + ``live_to`` from
them. Records written before carried the three as top-level ``x_turns``, ``pseudo_turns``
and ``total_turns``; :func:`migrate_shown` folds them into the mapping once, at load.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sdtt.dialogue.condition import Condition, record_condition

SHOWN_KEYS = ("x_turns", "pseudo_turns", "total_turns")
"""The turn counts older judgement and trace records copied to their top level. In a
record's ``condition`` mapping the same keys mark a value that the window and the bot's
condition do not give (kept by :func:`migrate_shown` so no old value changes)."""


def pseudo_turns_of(condition: Condition | None) -> tuple[int | None, str | None]:
    """N recorded in a conversation's condition, and a warning when it had to be inferred.

    Returns ``(N, None)`` when recorded; ``(0, warning)`` for an older file that names no
    pseudo-dialogue; ``(None, warning)`` for an older file that had one of unknown length.
    """
    if condition is not None and condition.pseudo_turns is not None:
        return condition.pseudo_turns, None
    if condition is not None and condition.pseudo:
        return None, (
            "records a pseudo-dialogue but not its length (no 'pseudo_turns'; an older sdtt "
            "wrote it), so its total turn index is unknown"
        )
    return 0, "records no 'pseudo_turns' (an older sdtt wrote it); N = 0 assumed"


def total_turns(pseudo_turns: int | None, live_to: int) -> int | None:
    """The total turn index shown: N plus the index of the last live turn shown."""
    return None if pseudo_turns is None else pseudo_turns + live_to


@dataclass(frozen=True)
class ShownTurns:
    """Where the turns a judge saw sit: X shown, N, and the total turn index N + live_to."""

    x: int
    pseudo: int | None
    total: int | None


def shown_turns(grouping: Mapping[str, Any]) -> ShownTurns:
    """X, N and the total turn index of a judgement's or trace's ``condition`` mapping.

    X is the length of the window ``live_from``..``live_to`` (0 without one), N the bot's
    as :func:`pseudo_turns_of` reads it (0 for a human witness), and the total N +
    ``live_to``. A value kept under its own key (:data:`SHOWN_KEYS`) wins (a kept N also
    makes the total: ``None`` there means N is unknown).
    """
    live_from, live_to = grouping.get("live_from"), grouping.get("live_to")
    x = live_to - live_from + 1 if isinstance(live_to, int) and isinstance(live_from, int) else 0
    pseudo = grouping.get("pseudo_turns", pseudo_turns_of(record_condition(grouping))[0])
    total = total_turns(pseudo, live_to) if isinstance(live_to, int) else None
    return ShownTurns(
        x=grouping.get("x_turns", x), pseudo=pseudo, total=grouping.get("total_turns", total)
    )


class ShownTurnCounts:
    """X, N and the total turn index of a judgement or belief trace, read from its
    ``condition`` mapping (a mixin of both records)."""

    if TYPE_CHECKING:
        condition: dict[str, Any]

    @property
    def x_turns(self) -> int:
        """X: how many live turns of each chat were shown (or revealed in all)."""
        return shown_turns(self.condition).x

    @property
    def pseudo_turns(self) -> int | None:
        """N: pseudo-dialogue turns in the bot's prompt; None when unknown."""
        return shown_turns(self.condition).pseudo

    @property
    def total_turns(self) -> int | None:
        """The total turn index shown: N + the last live turn shown (the paper's turn
        N+X); None when N is unknown."""
        return shown_turns(self.condition).total


def migrate_shown(data: Any) -> Any:
    """An older judgement or trace record with its top-level ``x_turns``,
    ``pseudo_turns`` and ``total_turns`` folded into its ``condition`` mapping (for a
    ``mode="before"`` validator); other records come back unchanged.

    A record without a window gets the one its numbers imply (the last X turns, ending
    at N + live_to = the total); a number the window and the nested condition do not
    give is kept under its own key, so :func:`shown_turns` returns what was written.
    """
    if not isinstance(data, Mapping) or not any(key in data for key in SHOWN_KEYS):
        return data
    record = dict(data)
    x = record.pop("x_turns", None)
    pseudo = record.pop("pseudo_turns", None)
    total = record.pop("total_turns", None)
    x = x if isinstance(x, int) else 0
    grouping = dict(record.get("condition") or {})
    if "live_to" not in grouping:
        known = isinstance(total, int) and isinstance(pseudo, int)
        grouping["live_to"] = total - pseudo if known else x
    if "live_from" not in grouping and isinstance(grouping["live_to"], int):
        grouping["live_from"] = grouping["live_to"] - x + 1
    if shown_turns(grouping).x != x:
        grouping["x_turns"] = x
    if shown_turns(grouping).pseudo != pseudo:
        grouping["pseudo_turns"] = pseudo  # before the total: a kept N changes it
    if shown_turns(grouping).total != total:
        grouping["total_turns"] = total
    record["condition"] = grouping
    return record
