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

Judgements and belief traces keep no numbers of their own for this: what they were
shown (:class:`~sdtt.dialogue.shown.Shown`) nests the bot's condition and the live window
(``live_from``..``live_to``), and :meth:`~sdtt.dialogue.shown.Shown.turns` reads X, N and
N + ``live_to`` from them.
"""

from __future__ import annotations

from sdtt.dialogue.condition import Condition


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
