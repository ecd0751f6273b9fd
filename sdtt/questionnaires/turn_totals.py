"""The paper's design from a study spec: which chats sit at the asked total turns.

``total_turns = [3, 10, 110]`` asks for whole live chats whose total turn index N + X
(pseudo-dialogue turns plus live turns) is 3, 10 or 110, for every (model, persona, mode,
topic) the study's bot conversations cover. :func:`select_for_totals` keeps the chats that
fit, says which it leaves out, and lists every missing cell with the commands that would
produce it. Pure: conversations in, a :class:`Selection` out.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field

from sdtt.dialogue.condition import Condition
from sdtt.dialogue.message import Transcript
from sdtt.dialogue.turn_index import pseudo_turns_of
from sdtt.questionnaires.pairing import complete_turns

PSEUDO_PLACEHOLDER = "transcripts/pseudo/<chain>.jsonl"
"""Where ``sdtt generate`` puts a chain (its id is only known once it is written)."""


@dataclass(frozen=True, order=True)
class Cell:
    """One condition of the design: what the bot is, and what it chats about."""

    model: str
    persona: str
    mode: str
    topic: str

    @classmethod
    def of(cls, bot: Transcript) -> Cell:
        """The cell of a bot conversation (``?`` for what its metadata does not say)."""
        condition = bot.condition or Condition()
        model, persona = condition.model or "?", condition.persona or "?"
        return cls(model, persona, condition.mode, bot.topic or "?")

    def label(self, total: int) -> str:
        """``model M, persona P, mode burst, topic 'T', total 110 turns``."""
        return (
            f"model {self.model}, persona {self.persona}, mode {self.mode}, "
            f"topic {self.topic!r}, {total} total turns"
        )


def split_total(total: int, max_live: int) -> tuple[int, int]:
    """``(N, X)`` for a total turn index: all live up to ``max_live``, else pseudo first."""
    return (0, total) if total <= max_live else (total - max_live, max_live)


def commands_for(cell: Cell, total: int, max_live: int) -> list[str]:
    """The sdtt commands that produce a chat of ``cell`` at ``total`` turns."""
    pseudo, live = split_total(total, max_live)
    common = (
        f"--persona {shlex.quote(cell.persona)} --model {shlex.quote(cell.model)} "
        f"--mode {shlex.quote(cell.mode)}"
    )
    chat = f"sdtt simulate {common} --topic {shlex.quote(cell.topic)} --turns {live}"
    if pseudo == 0:
        return [chat]
    return [
        f"sdtt generate {common} --turns {pseudo}",
        f"{chat} --pseudo {PSEUDO_PLACEHOLDER}",
    ]


@dataclass
class Selection:
    """The bot conversations a total-turns design uses, and what it lacks."""

    kept: list[tuple[Transcript, str | None]] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    """Why each other conversation is not used."""
    missing: list[tuple[Cell, int]] = field(default_factory=list)
    """(cell, total) with no conversation."""

    def missing_message(self, max_live: int) -> str:
        """Every missing cell with the commands that would make it, one per line."""
        lines = [f"{len(self.missing)} conversation(s) the study asks for are missing:"]
        for cell, total in self.missing:
            lines.append(f"  - {cell.label(total)}; make it with:")
            lines += [f"      {command}" for command in commands_for(cell, total, max_live)]
        return "\n".join(lines)


def select_for_totals(
    bots: Sequence[tuple[Transcript, str | None]], totals: Sequence[int]
) -> Selection:
    """Keep the bot conversations whose N + live turns is one of ``totals``.

    Every cell seen among ``bots`` must have a conversation at every total; the others
    are reported in :attr:`Selection.missing`.
    """
    selection = Selection()
    found: set[tuple[Cell, int]] = set()
    cells: list[Cell] = []
    for bot, path in bots:
        cell = Cell.of(bot)
        if cell not in cells:
            cells.append(cell)
        pseudo, _ = pseudo_turns_of(bot.condition)
        live = len(complete_turns(bot.messages))
        if pseudo is None:
            selection.left_out.append(
                f"bot conversation {bot.id!r} does not record its pseudo-dialogue length, so "
                "its total turn index is unknown; left out."
            )
            continue
        total = pseudo + live
        if total not in totals:
            selection.left_out.append(
                f"bot conversation {bot.id!r} is at {pseudo} + {live} = {total} total turns, "
                "which the study does not ask for; left out."
            )
            continue
        found.add((cell, total))
        selection.kept.append((bot, path))
    selection.missing = [
        (cell, total)
        for cell in sorted(cells)
        for total in sorted(totals)
        if (cell, total) not in found
    ]
    return selection
