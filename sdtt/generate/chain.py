"""What a pseudo-dialogue chain is and how it is stored (method.md, "Algorithm 1").

A **chain** writes one pseudo-dialogue: for each topic in order, ``turns`` burst turns
between the persona (side ``"response"``) and another human (side ``"user"``). This module
holds the chain's settings (:class:`ChainSettings`, :class:`ChainSpec`, built from topics
by :func:`topic_targets`) and the records of a chain file: the header
(:class:`ChainHeader`, built from a persona by :func:`chain_header`) first, then one
:class:`PseudoCallRecord` per model call and one :class:`TurnRecord` per finished turn, in the
order they were produced. The algorithm that produces and replays them is
:mod:`sdtt.generate.pseudo`; reading the files back is :mod:`sdtt.generate.chainfile`.

Two ways to get turns out of a model (``style``, see :func:`resolve_style`): ``whole``
for chat models (one call asks for all of a topic's remaining rounds) and ``lines`` for
completion models such as the embedded one (one message per call).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from sdtt.dialogue.condition import ChatMode
from sdtt.dialogue.message import RESPONSE, SCHEMA_VERSION, USER, Message, Side
from sdtt.dialogue.turns import side_runs
from sdtt.errors import ConfigError, InputError
from sdtt.generate.prompts import PROMPT_VERSION, generator_instructions
from sdtt.models.base import GenerateConfig, Usage
from sdtt.models.registry import provider_of
from sdtt.personas.persona import Persona
from sdtt.personas.prompt import DEFAULT_HISTORY_TURNS, history_messages, history_text

Style = Literal["whole", "lines"]
StyleChoice = Literal["auto", "whole", "lines"]
STYLES: tuple[Style, ...] = ("whole", "lines")
DEFAULT_TURNS_PER_TOPIC = 10
DEFAULT_MAX_TOKENS = 2048
"""Token cap of a 'whole' call: ten burst rounds with timestamps fit."""
DEFAULT_TEMPERATURE = 0.8
DEFAULT_TIMEOUT = 180.0
"""Seconds per call attempt."""


class SettingsError(ConfigError):
    """A chain setting is out of range."""


class TopicTarget(BaseModel):
    """One topic of a chain and how many turns to write about it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    topic: str
    turns: int = Field(ge=1)


class ChainSettings(BaseModel):
    """How a chain calls its model. Stored in the chain file's header."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    style: Style = Field(
        default="whole", description="'whole' (chat models) or 'lines' (completion models)."
    )
    temperature: float = Field(default=DEFAULT_TEMPERATURE, ge=0)
    max_tokens: int = Field(
        default=DEFAULT_MAX_TOKENS, ge=16, description="Token cap of a 'whole' call."
    )
    history_turns: int = Field(
        default=DEFAULT_HISTORY_TURNS, ge=0, description="Persona history turns in the prompt."
    )
    max_calls_per_topic: int | None = Field(
        default=None,
        ge=1,
        description="Calls one topic may take in one run before the chain gives up "
        "(default: turns + 3 for 'whole', 5 per planned message + 5 for 'lines').",
    )
    timeout: float = Field(default=DEFAULT_TIMEOUT, gt=0, description="Seconds per call attempt.")

    def call_budget(self, turns: int, planned_messages: int) -> int:
        """Calls a topic may take in one run before the chain is declared stuck."""
        if self.max_calls_per_topic is not None:
            return self.max_calls_per_topic
        return turns + 3 if self.style == "whole" else 5 * planned_messages + 5


class ChainSpec(BaseModel):
    """What one chain writes: persona x model x mode x seed over a list of topics."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    persona: str = Field(description="Persona name or file, as given.")
    model: str = Field(description="provider/model.")
    mode: ChatMode = "burst"
    seed: int = 0
    topics: tuple[TopicTarget, ...]
    settings: ChainSettings = Field(default_factory=ChainSettings)

    @property
    def total_turns(self) -> int:
        """Pseudo-dialogue turns over all topics."""
        return sum(target.turns for target in self.topics)

    @property
    def chain_id(self) -> str:
        """A readable id, unique for the spec; also the chain file's name."""
        digest = hashlib.sha1(self.model_dump_json().encode("utf-8")).hexdigest()[:6]
        return "_".join(
            (
                _slug(self.persona),
                _slug(self.model),
                self.mode,
                f"s{self.seed}",
                f"t{self.total_turns}",
                digest,
            )
        )


def _slug(text: str) -> str:
    stem = text.rsplit("/", 1)[-1] if text.endswith(".jsonl") else text
    stem = stem.removesuffix(".jsonl")
    return re.sub(r"[^A-Za-z0-9.-]+", "-", stem).strip("-")[:40] or "x"


def resolve_style(choice: StyleChoice, model: str) -> Style:
    """The style a chain on ``model`` uses for ``choice``: 'auto' gives 'lines' to
    completion models (whose provider continues text rather than chats), else 'whole'."""
    if choice != "auto":
        return choice
    provider = provider_of(model)
    return "lines" if provider is not None and provider.completion else "whole"


def topic_targets(topics: Sequence[str], turns: int, per_topic: int) -> tuple[TopicTarget, ...]:
    """Split ``turns`` pseudo turns over ``topics``, ``per_topic`` each (the last may get fewer).

    Raises :class:`SettingsError` when the topics are too few.
    """
    if turns < 1 or per_topic < 1:
        raise SettingsError("The number of turns and the turns per topic must be at least 1.")
    needed = -(-turns // per_topic)
    if needed > len(topics):
        raise SettingsError(
            f"{turns} turns at {per_topic} per topic need {needed} topics, but only "
            f"{len(topics)} were given. Give more topics (sdtt topics -n {needed}) or "
            "more turns per topic."
        )
    targets = []
    remaining = turns
    for topic in topics[:needed]:
        targets.append(TopicTarget(topic=topic, turns=min(per_topic, remaining)))
        remaining -= per_topic
    return tuple(targets)


# --- the chain file's records ---------------------------------------------------------


class ChainHeader(BaseModel):
    """The first record of a chain file: the spec and everything the prompts are built from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: Literal["pseudo_chain"] = "pseudo_chain"
    version: int = SCHEMA_VERSION
    chain: str
    spec: ChainSpec
    persona_name: str
    prompt_version: int = PROMPT_VERSION
    instructions: str = Field(description="The prompt's instructions, verbatim.")
    history: str = Field(description="The persona history the prompt shows, verbatim.")
    history_end: datetime = Field(description="Time of the history's last message.")
    burst_sizes: dict[Side, dict[int, int]] = Field(
        description="Burst size counts of each side in the history ('lines' style plans)."
    )


class PseudoCallRecord(BaseModel):
    """One model call of a chain as its file keeps it: what was asked, what came back,
    what was kept: a function of the chain's spec and the model's answers alone, so two
    runs write the same bytes. (The cost and timing of any model call, for callbacks and
    logs, is :class:`sdtt.models.CallRecord`; a study's run log keeps its timings.)"""

    model_config = ConfigDict(frozen=True, extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _old_timing(cls, data: Any) -> Any:
        # Files written before kept the call's wall-clock latency and its attempts, which
        # no two runs share; they are read and dropped.
        if isinstance(data, dict) and ("latency" in data or "attempts" in data):
            return {k: v for k, v in data.items() if k not in ("latency", "attempts")}
        return data

    type: Literal["pseudo_call"] = "pseudo_call"
    chain: str
    call: int = Field(description="0-based index of the call in the chain.")
    topic_index: int
    topic_call: int = Field(description="0-based index of the call within its topic.")
    task: str
    continue_with: str
    earliest: datetime = Field(description="No kept message is earlier than this.")
    config: dict[str, Any]
    model: str
    text: str = Field(description="The model's raw output.")
    continued_from: str = ""
    usage: dict[str, int | None]
    messages: list[Message] = Field(description="Messages this call added to the topic.")
    parsed: int = Field(description="Messages parsed from the output before cutting.")
    topic_done: bool
    problem: str | None = Field(default=None, description="Why nothing was kept, if so.")


class TurnRecord(BaseModel):
    """One finished pseudo-dialogue turn, with its topic, indices, model and usage share."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: Literal["pseudo_turn"] = "pseudo_turn"
    chain: str
    topic_index: int
    topic: str
    turn_index: int = Field(description="0-based index of the turn within its topic.")
    turn: int = Field(description="0-based index of the turn in the whole pseudo-dialogue.")
    model: str
    mode: ChatMode
    settings: ChainSettings
    calls: list[int] = Field(description="Calls that wrote messages of this turn.")
    usage: dict[str, int | None] = Field(
        description="This turn's share of those calls' tokens (they sum to the chain's)."
    )
    messages: list[Message]


def usage_dict(usage: Usage) -> dict[str, int | None]:
    """A :class:`Usage` as a JSON object."""
    return {
        "input_tokens": usage.input_tokens,
        "cached_input_tokens": usage.cached_input_tokens,
        "output_tokens": usage.output_tokens,
    }


def usage_of(data: Mapping[str, int | None]) -> Usage:
    """The :class:`Usage` stored as ``data`` (``cached_input_tokens`` null: unknown)."""
    cached = data.get("cached_input_tokens", 0)
    return Usage(
        input_tokens=int(data.get("input_tokens") or 0),
        cached_input_tokens=None if cached is None else int(cached),
        output_tokens=int(data.get("output_tokens") or 0),
    )


def split_usage(usage: Usage, parts: int) -> list[Usage]:
    """``usage`` shared over ``parts`` turns in whole tokens; the first parts get the rest."""

    def shares(total: int) -> list[int]:
        base, rest = divmod(total, parts)
        return [base + (1 if index < rest else 0) for index in range(parts)]

    cached: list[int | None] = (
        [None] * parts
        if usage.cached_input_tokens is None
        else list(shares(usage.cached_input_tokens))
    )
    columns = zip(shares(usage.input_tokens), cached, shares(usage.output_tokens), strict=True)
    return [Usage(a, b, c) for a, b, c in columns]


def config_dict(config: GenerateConfig) -> dict[str, Any]:
    """A :class:`GenerateConfig` as a JSON object."""
    return {
        "max_tokens": config.max_tokens,
        "temperature": config.temperature,
        "stop": list(config.stop),
        "seed": config.seed,
        "timeout": config.timeout,
    }


# --- building a chain's header from a persona ----------------------------------------


@dataclass(frozen=True)
class PersonaHistory:
    """What a chain's header holds of the persona's history: the same for every chain of
    one persona, history length and mode, so a run works it out once for all of them."""

    text: str
    end: datetime
    bursts: dict[Side, dict[int, int]]


def persona_history(persona: Persona, turns: int, mode: ChatMode) -> PersonaHistory:
    """The last ``turns`` turns of ``persona``'s history as a chain shows them (the turns
    the bot prompt shows, :func:`~sdtt.personas.prompt.history_messages`)."""
    conversations = history_messages(persona, turns, mode)
    every = [message for conversation in conversations for message in conversation]
    if not every:
        every = [m for c in persona.prompt_conversations for m in c.messages][-1:]
    if not every:
        raise InputError(f"persona {persona.name!r} has no messages to imitate.")
    bursts: dict[Side, dict[int, int]] = {USER: {}, RESPONSE: {}}
    for side in (USER, RESPONSE):
        for conversation in conversations:
            for size in side_runs(conversation, side):
                bursts[side][size] = bursts[side].get(size, 0) + 1
    return PersonaHistory(
        text=history_text(persona, turns, mode),
        end=max(message.time for message in every),
        bursts=bursts,
    )


def chain_header(
    spec: ChainSpec, persona: Persona, history: PersonaHistory | None = None
) -> ChainHeader:
    """The header of a new chain file for ``spec`` with ``persona``, whose
    :func:`persona_history` a caller may pass in if it has it already."""
    if history is None:
        history = persona_history(persona, spec.settings.history_turns, spec.mode)
    return ChainHeader(
        chain=spec.chain_id,
        spec=spec,
        persona_name=persona.name,
        instructions=generator_instructions(spec.mode),
        history=history.text,
        history_end=history.end,
        burst_sizes=history.bursts,
    )


def header_difference(stored: ChainHeader, wanted: ChainHeader) -> str | None:
    """The first field where a chain file's header differs from the one wanted, or None."""
    old = stored.model_dump(mode="json")
    new = wanted.model_dump(mode="json")
    for key in new:
        if old.get(key) != new[key]:
            return key
    return None
