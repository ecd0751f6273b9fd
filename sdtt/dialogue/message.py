"""Messages, burst turns and transcripts: the data every part of sdtt exchanges.

Side names follow the prompt format of the method: ``"user"`` is side A (the
interrogator, or the persona's chat partner in a history) and ``"response"`` is side B
(the persona, or the bot that plays it, or the human being compared with the bot).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from sdtt.dialogue.condition import Condition, migrate_record

SCHEMA_VERSION = 1
"""Version written into every transcript and persona file; bump on breaking changes."""

Side = Literal["user", "response"]
USER: Side = "user"
RESPONSE: Side = "response"


class Message(BaseModel):
    """One chat message: who sent it, what it says, and when (timezone-aware)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    side: Side = Field(description="'user' (side A) or 'response' (side B, the persona/bot).")
    text: str = Field(description="The message text exactly as sent.")
    time: datetime = Field(description="When it was sent; must carry a timezone.")

    @field_validator("time")
    @classmethod
    def _require_timezone(cls, value: datetime) -> datetime:
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError("timestamp has no timezone; add one such as +00:00 or Z")
        # Most times have whole seconds already: no copy for them (every message is built
        # through here, a chain's several per model call).
        return value.replace(microsecond=0) if value.microsecond else value


class Turn(BaseModel):
    """A burst turn: side A's run of messages, then side B's run before A writes again.

    A conversation that opens with side B starts with a turn whose ``user`` part is
    empty; a conversation that ends with side A ends with a turn whose ``response``
    part is empty.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    user: tuple[Message, ...] = ()
    response: tuple[Message, ...] = ()

    @property
    def messages(self) -> tuple[Message, ...]:
        """Both parts in order: side A's messages, then side B's."""
        return self.user + self.response

    @property
    def is_complete(self) -> bool:
        """True when side B has answered in this turn."""
        return bool(self.response)


def segment_turns(messages: Iterable[Message]) -> list[Turn]:
    """Split messages into burst turns.

    A turn is the maximal run of side-A ("user") messages followed by the maximal run of
    side-B ("response") messages before side A writes again. A conversation opening with
    side B starts with a turn whose user part is empty; one ending with side A ends with a
    turn whose response part is empty.
    """
    # The parts are messages already: built without validating each one again, which
    # made splitting a chain's topic a good part of its per-call cost.
    turns: list[Turn] = []
    user: list[Message] = []
    response: list[Message] = []
    for message in messages:
        if message.side == USER and response:
            turns.append(Turn.model_construct(user=tuple(user), response=tuple(response)))
            user, response = [], []
        (user if message.side == USER else response).append(message)
    if user or response:
        turns.append(Turn.model_construct(user=tuple(user), response=tuple(response)))
    return turns


def turn_starts(messages: Sequence[Message], starts: list[int] | None = None) -> list[int]:
    """Where each burst turn of ``messages`` begins: the split of :func:`segment_turns`
    as indices, without building the turns.

    ``starts``, the turn starts of an earlier, shorter state of ``messages`` (a list that
    only grows), is extended in place rather than found again: a turn begins at the first
    message and wherever side A writes after side B, so a start depends only on the
    message before it, and the scan resumes after the last start known.
    """
    if starts is None:
        starts = []
    done = starts[-1] + 1 if starts else 0
    for index in range(done, len(messages)):
        if index == 0 or (messages[index].side == USER and messages[index - 1].side != USER):
            starts.append(index)
    return starts


class Transcript(BaseModel):
    """One conversation with its metadata, as stored in a JSONL transcript file."""

    model_config = ConfigDict(extra="forbid")

    version: int = SCHEMA_VERSION
    id: str = Field(description="Opaque identifier of the conversation.")
    topic: str | None = Field(default=None, description="What the conversation is about.")
    messages: list[Message] = Field(default_factory=list)
    condition: Condition | None = Field(
        default=None,
        description="What the chat was run as (persona, model, mode, N, X...); None for a "
        "chat that records none (a human chat from a corpus or an import).",
    )
    meta: dict[str, Any] = Field(
        default_factory=dict,
        description="Free-form provenance: source, session settings, conversion counts...",
    )

    @model_validator(mode="before")
    @classmethod
    def _old_meta(cls, data: Any) -> Any:
        # Files written before `condition` existed kept it as loose keys of `meta`.
        return migrate_record(data)

    @property
    def turns(self) -> list[Turn]:
        """The conversation split into burst turns (see :func:`segment_turns`)."""
        return segment_turns(self.messages)
