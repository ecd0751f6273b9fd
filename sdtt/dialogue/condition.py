"""The condition of a bot conversation: the study's central datum, as one typed value.

A :class:`Condition` says what a bot chat was run as: which persona on which model, in
which mode (burst or ping-pong), with which pseudo-dialogue in the prompt and how many
turns of it (N), for how many live turns (X), with which typing-delay preset and seed,
and who interrogated. :class:`~sdtt.dialogue.message.Transcript` carries it, the engine
opens a bot from it (:func:`sdtt.engine.opening.open_bot`), and what a judge was shown
(:class:`~sdtt.dialogue.shown.Shown`) nests it whole as ``bot``.

Older files wrote these facts as loose keys of a transcript's ``meta`` (the mode twice:
``mode`` and ``settings.mode``). :func:`split_meta` reads them once, when a file is
loaded; nothing else reads condition facts from ``meta``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

ChatMode = Literal["burst", "pingpong"]
"""How the sides take turns: runs of messages (burst) or one message each (ping-pong)."""
CHAT_MODES: tuple[ChatMode, ...] = get_args(ChatMode)
"""The chat modes, in the order choices list them."""

DelayName = Literal["paper", "jones-bergen", "fitted", "human"]
"""The typing-delay presets of the engine (:mod:`sdtt.engine.schedule`)."""

_TOP_KEYS = ("persona", "model", "mode", "interrogator", "pseudo", "pseudo_turns", "live_turns")
"""The condition's keys as older files wrote them at the top of ``meta``."""
CONDITION_SETTINGS = ("mode", "delays", "seed")
"""The session settings that are part of the condition: a transcript records them in its
condition only (older files copied them into ``meta["settings"]`` too)."""
_INDEX_KEY = "condition"
"""Older live-study files wrote the study's condition number as ``meta["condition"]``."""


class Condition(BaseModel):
    """What one bot conversation was run as (frozen: a chat's condition never changes).

    ``None`` means "not recorded": a file written before the field existed, or a side
    that has none (a human chat names no persona or model).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    persona: str | None = Field(default=None, description="The persona the bot plays.")
    model: str | None = Field(default=None, description="provider/model playing the persona.")
    mode: ChatMode = Field(default="burst", description="'burst' or 'pingpong'.")
    pseudo: str | None = Field(
        default=None, description="The pseudo-dialogue file in the bot's prompt (None: none)."
    )
    pseudo_turns: int | None = Field(
        default=0,
        ge=0,
        description="N: turns of pseudo-dialogue in the prompt (None: not recorded).",
    )
    live_turns: int | None = Field(
        default=None, ge=0, description="X: the live turns the chat was run for."
    )
    delays: DelayName | None = Field(default=None, description="The typing-delay preset.")
    seed: int | None = Field(
        default=None, description="The seed every per-role seed derives from (see seeds.py)."
    )
    interrogator: str | None = Field(
        default=None, description="Who played side A: 'human', 'script' or provider/model."
    )
    index: int | None = Field(
        default=None, ge=0, description="Its number in a live study's design (sdtt serve)."
    )

    @property
    def turn_index(self) -> int | None:
        """The total turn index N + X the chat reaches (None when either is unknown)."""
        if self.pseudo_turns is None or self.live_turns is None:
            return None
        return self.pseudo_turns + self.live_turns

    def label(self) -> str:
        """A readable name for reports and the admin page (never sent to participants)."""
        pseudo = Path(self.pseudo).stem if self.pseudo else "none"
        return f"{self.model} · {self.persona} · pseudo {pseudo} · {self.delays}"


def split_meta(meta: Mapping[str, Any]) -> tuple[Condition | None, dict[str, Any]]:
    """An older file's ``meta`` as its condition and the free-form rest.

    The condition is None when ``meta`` records none of its keys (a human chat from a
    corpus or an import). A condition without ``pseudo_turns`` gets None there (not
    recorded), so callers can warn (:func:`sdtt.dialogue.turn_index.pseudo_turns_of`).
    """
    rest = dict(meta)
    found: dict[str, Any] = {}
    for key in _TOP_KEYS:
        if key in rest:
            found[key] = rest.pop(key)
    settings = rest.get("settings")
    if isinstance(settings, Mapping):
        kept = dict(settings)
        for key in CONDITION_SETTINGS:
            if key in kept:
                value = kept.pop(key)
                # The top-level mode wins: the settings' copy is the duplicate.
                found.setdefault(key, value)
        rest["settings"] = kept
    index = rest.get(_INDEX_KEY)
    if isinstance(index, int) and not isinstance(index, bool):
        found["index"] = rest.pop(_INDEX_KEY)
    if not found:
        return None, dict(meta)
    found.setdefault("pseudo_turns", None)
    if found.get("mode") is None:
        found.pop("mode", None)
    for key in ("persona", "model", "interrogator", "pseudo"):
        if key in found:
            found[key] = None if found[key] in (None, "") else str(found[key])
    pseudo_turns = found["pseudo_turns"]
    if not isinstance(pseudo_turns, int) or isinstance(pseudo_turns, bool) or pseudo_turns < 0:
        found["pseudo_turns"] = None
    return Condition.model_validate(found), rest


def migrate_record(data: Any, *, condition: str = "condition", meta: str = "meta") -> Any:
    """A raw record whose ``meta`` may hold an older file's condition keys, with them moved
    into ``condition`` (for a ``mode="before"`` validator). Records that already carry a
    condition, or that are no mapping, come back unchanged."""
    if not isinstance(data, Mapping) or data.get(condition) is not None:
        return data
    old = data.get(meta)
    if not isinstance(old, Mapping):
        return data
    found, rest = split_meta(old)
    if found is None:
        return data
    return {**data, condition: found, meta: rest}


def chat_mode(condition: Condition | None) -> ChatMode:
    """The mode of a chat with this condition: burst when it records none."""
    return "burst" if condition is None else condition.mode
