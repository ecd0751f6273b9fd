"""What a judge was shown, as one typed value nested whole in every answer record.

A :class:`Shown` says which chats a judge saw and how: the bot's
:class:`~sdtt.dialogue.condition.Condition`, the conversations' ids, the live turns shown
(``live_from``..``live_to``), the view and order, the kind of judge and the topic. A
judgement and a belief trace carry it as ``shown``; every analysis reads it by
attribute. What is about the answer rather than what was shown (an LLM's unreadable raw
answers, a person's confidence) is an :class:`AnswerNotes` under the record's ``notes``.

Records written before kept a ``condition`` mapping instead (the bot's condition under
``bot_condition``, or older still as the loose keys of ``bot_meta``, and X, N and N + X
copied to the record's top level). :func:`migrate_answer` turns such a record into the
new form once, as it loads; no other module reads those keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from sdtt.dialogue.condition import Condition, split_meta
from sdtt.dialogue.turn_index import pseudo_turns_of, total_turns

View = Literal["last", "whole", "chunk"]
"""How much of each chat a judge saw: its last X turns, all of it, or one chunk."""

KeptCount = Literal["x_turns", "pseudo_turns", "total_turns"]
"""The turn counts an older record wrote that its window and bot may not give."""


class ShownTurns(BaseModel):
    """Where the turns a judge saw sit: X shown, N, and the total turn index N + live_to."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    x: int = Field(description="X: live turns of each chat shown (or revealed in all).")
    pseudo: int | None = Field(description="N: pseudo-dialogue turns in the bot's prompt.")
    total: int | None = Field(description="N + live_to, the paper's turn N+X; None: unknown.")


class Shown(BaseModel):
    """What one judge was shown for one answer (frozen: it never changes after the fact).

    ``None`` means "not part of this answer": a live room shows no topic, a single chat
    has no human conversation beside it.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    bot: Condition | None = Field(
        default=None, description="What the bot chat shown was run as (None: no bot shown)."
    )
    bot_conversation: str | None = Field(default=None, description="Id of the bot chat shown.")
    human_conversation: str | None = Field(
        default=None, description="Id of the human chat shown beside it."
    )
    conversation: str | None = Field(
        default=None, description="A single chat judged on its own (imported verdicts): its id."
    )
    speaker: str | None = Field(
        default=None, description="A single chat: the speaker whose humanity was judged."
    )
    view: View | None = Field(
        default=None, description="'last', 'whole' or 'chunk' (None: 'last', as before views)."
    )
    live_from: int | None = Field(default=None, description="First live turn shown (1-based).")
    live_to: int | None = Field(default=None, description="Last live turn shown (1-based).")
    topic: str | None = Field(default=None, description="The topic the chats were about.")
    judge_kind: str | None = Field(
        default=None,
        description="How it was judged: 'paired', 'zero-shot', 'one-shot', 'reveal', 'live', "
        "'market' (None: a human's survey answer, or an LLM judge of before kinds).",
    )
    order: str | None = Field(
        default=None, description="'original' or 'swapped': the order a paired judge saw."
    )
    labels: dict[str, str | None] | None = Field(
        default=None,
        description="Single-transcript judges: the label given each chat ('1', '2': "
        "'human' or 'ai').",
    )
    design_view: str | None = Field(
        default=None,
        description="Under a judge design, the id of the view (item) the judge saw; the "
        "record's pair id is then the pair's.",
    )
    kept_counts: dict[KeptCount, int | None] | None = Field(
        default=None,
        description="Records written before: a turn count the window and the bot do not "
        "give, kept as written (it wins, so no old value changes).",
    )

    def turns(self) -> ShownTurns:
        """X, N and the total turn index shown.

        X is the length of the window ``live_from``..``live_to`` (0 without one), N the
        bot's (:func:`~sdtt.dialogue.turn_index.pseudo_turns_of`; 0 for a human witness)
        and the total N + ``live_to``. A kept count wins (a kept N also makes the total).
        """
        kept = self.kept_counts or {}
        live_from, live_to = self.live_from, self.live_to
        x = live_to - live_from + 1 if live_to is not None and live_from is not None else 0
        pseudo = kept["pseudo_turns"] if "pseudo_turns" in kept else pseudo_turns_of(self.bot)[0]
        total = total_turns(pseudo, live_to) if live_to is not None else None
        kept_x = kept.get("x_turns")
        return ShownTurns(
            x=x if kept_x is None else kept_x,
            pseudo=pseudo,
            total=kept.get("total_turns", total),
        )


class ShownTurnCounts:
    """X, N and the total turn index of a judgement or belief trace, read from what it
    was shown (a mixin of both records)."""

    if TYPE_CHECKING:
        shown: Shown

    @property
    def x_turns(self) -> int:
        """X: how many live turns of each chat were shown (or revealed in all)."""
        return self.shown.turns().x

    @property
    def pseudo_turns(self) -> int | None:
        """N: pseudo-dialogue turns in the bot's prompt; None when unknown."""
        return self.shown.turns().pseudo

    @property
    def total_turns(self) -> int | None:
        """The total turn index shown: N + the last live turn shown (the paper's turn
        N+X); None when N is unknown."""
        return self.shown.turns().total


class AnswerNotes(BaseModel):
    """What a record says about its answer that is not what was shown (researcher-side)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    raw_answers: list[str] | None = Field(
        default=None, description="An LLM judge's last unreadable answers (cut short)."
    )
    unreadable_turns: list[int] | None = Field(
        default=None, description="Reveal judges: turns after which no belief could be read."
    )
    belief_source: str | None = Field(
        default=None, description="Reveal judges: 'stated' or 'logprob'."
    )
    confidence: float | None = Field(
        default=None, description="A live judge's confidence slider (0-100), when moved."
    )
    final_belief: float | None = Field(
        default=None, description="A judgement made from a belief trace: the trace's last belief."
    )
    other: dict[str, Any] | None = Field(
        default=None,
        description="Keys an older record's condition held that name nothing above or in "
        "Shown, kept as written.",
    )


_SHOWN_KEYS = frozenset(Shown.model_fields) - {"bot", "kept_counts"}
_NOTE_KEYS = frozenset(AnswerNotes.model_fields) - {"other"}
_RENAMED = {"bot_id": "bot_conversation", "human_id": "human_conversation"}
"""Keys a live study's export wrote for the conversations' ids."""
_BOT_KEYS = ("model", "persona", "mode", "interrogator")
"""Keys of the bot's condition that an older grouping may hold at its top level."""
_TOP_COUNTS: tuple[KeptCount, ...] = ("x_turns", "pseudo_turns", "total_turns")
"""The turn counts older records copied to their top level."""


def _split(grouping: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """An older record's ``condition`` mapping as the fields of its Shown and its notes."""
    shown: dict[str, Any] = {}
    notes: dict[str, Any] = {}
    other: dict[str, Any] = {}
    bot: Any = grouping.get("bot_condition")
    if bot is None and isinstance(grouping.get("bot_meta"), Mapping):
        bot = split_meta(grouping["bot_meta"])[0]
    top = {key: grouping[key] for key in _BOT_KEYS if key in grouping}
    if top:
        found = bot if isinstance(bot, Condition) else Condition.model_validate(bot or {})
        bot = found.model_copy(update=top)
    shown["bot"] = bot
    kept = {key: grouping[key] for key in _TOP_COUNTS if key in grouping}
    if kept:
        shown["kept_counts"] = kept
    for key, value in grouping.items():
        name = _RENAMED.get(key, key)
        if name in ("bot_condition", "bot_meta", "witness", *_BOT_KEYS, *_TOP_COUNTS):
            continue  # read above; a witness is the record's own field
        if name == "order" and not isinstance(value, str | None):
            other[key] = value  # an order that is not text counts as none
        elif name in _SHOWN_KEYS:
            shown[name] = value
        elif name in _NOTE_KEYS:
            notes[name] = value
        else:
            other[key] = value
    if other:
        notes["other"] = other
    return shown, notes


def _fold_counts(record: dict[str, Any], grouping: dict[str, Any]) -> None:
    """Move an older record's top-level X, N and N + X into its grouping: a window the
    numbers imply when it has none (the last X turns, ending at N + live_to = the total),
    and each number the window and the bot do not give kept as written."""
    x = record.pop("x_turns", None)
    pseudo = record.pop("pseudo_turns", None)
    total = record.pop("total_turns", None)
    x = x if isinstance(x, int) else 0
    if "live_to" not in grouping:
        known = isinstance(total, int) and isinstance(pseudo, int)
        grouping["live_to"] = total - pseudo if known else x
    if "live_from" not in grouping and isinstance(grouping["live_to"], int):
        grouping["live_from"] = grouping["live_to"] - x + 1
    turns = Shown.model_validate(_split(grouping)[0]).turns()
    if turns.x != x:
        grouping["x_turns"] = x
    if turns.pseudo != pseudo:
        grouping["pseudo_turns"] = pseudo  # before the total: a kept N changes it
        turns = Shown.model_validate(_split(grouping)[0]).turns()
    if turns.total != total:
        grouping["total_turns"] = total


def migrate_answer(data: Any, *, into: Literal["shown", "rater"] = "shown") -> Any:
    """An older answer record in today's form (for a ``mode="before"`` validator of
    judgements, belief traces and ratings); records of today's form come back unchanged.

    A judgement's or trace's ``condition`` mapping (and its top-level turn counts)
    becomes ``shown`` and ``notes``; a rating's ``condition`` (the rater's settings)
    becomes ``rater`` (``into="rater"``).
    """
    if not isinstance(data, Mapping) or (
        "condition" not in data and not any(key in data for key in _TOP_COUNTS)
    ):
        return data
    record = dict(data)
    grouping = record.pop("condition", None)
    if into == "rater":
        record.setdefault("rater", grouping or {})
        return record
    if not isinstance(grouping, Mapping):
        grouping = {}
    grouping = dict(grouping)
    if any(key in record for key in _TOP_COUNTS):
        _fold_counts(record, grouping)
    shown, notes = _split(grouping)
    record.setdefault("shown", shown)
    if notes:
        record.setdefault("notes", notes)
    return record
