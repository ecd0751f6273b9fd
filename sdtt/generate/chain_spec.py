"""Which chains a run writes: a grid from the command line, or a plan file.

A plan file (TOML, or the same structure as JSON) names a topic list, a grid of
personas x models x modes x seeds x turns, and/or explicit chains::

    topics = "chitchat"          # a file in ./topics, a path, or a list of topics
    turns_per_topic = 10

    [grid]
    personas = ["chitchat-32b20fa3", "chitchat-20753511"]
    models = ["openai/gpt-4o-mini", "anthropic/claude-sonnet-4-5"]
    modes = ["burst", "pingpong"]
    seeds = [1, 2]
    turns = [100]

    [settings]                   # optional, for every chain
    temperature = 0.8
    style = "auto"               # auto: 'lines' for local models, 'whole' for the others

    [[chain]]                    # optional, extra chains with their own values
    persona = "chitchat-ad6493d1"
    model = "local/gemma3-270m"
    turns = 30

Paths in a plan file are taken relative to the file's folder first.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from sdtt.dialogue.condition import ChatMode
from sdtt.dialogue.store import validate_record
from sdtt.errors import InputError
from sdtt.files import load_settings_file
from sdtt.generate.chain import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_TEMPERATURE,
    DEFAULT_TIMEOUT,
    DEFAULT_TURNS_PER_TOPIC,
    ChainSettings,
    ChainSpec,
    SettingsError,
    StyleChoice,
    resolve_style,
    topic_targets,
)
from sdtt.generate.topics import locate_topics, read_topics
from sdtt.personas.prompt import DEFAULT_HISTORY_TURNS

CORPUS_TOPICS = "chitchat"
"""The topic list name that can always be had from the chit-chat corpus itself."""
DEFAULT_MODES: tuple[ChatMode, ...] = ("burst",)
PLAN_HINT = "See 'sdtt generate --help' for the plan file format."


class PlanSettings(BaseModel):
    """Settings for every chain of a plan (see :class:`ChainSettings`)."""

    model_config = ConfigDict(extra="forbid")

    style: StyleChoice = "auto"
    temperature: float = Field(default=DEFAULT_TEMPERATURE, ge=0)
    max_tokens: int = Field(default=DEFAULT_MAX_TOKENS, ge=16)
    history_turns: int = Field(default=DEFAULT_HISTORY_TURNS, ge=0)
    max_calls_per_topic: int | None = Field(default=None, ge=1)
    timeout: float = Field(default=DEFAULT_TIMEOUT, gt=0)

    def for_model(self, model: str) -> ChainSettings:
        """The chain settings for a chain on ``model``."""
        return ChainSettings(
            style=resolve_style(self.style, model),
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            history_turns=self.history_turns,
            max_calls_per_topic=self.max_calls_per_topic,
            timeout=self.timeout,
        )


class Grid(BaseModel):
    """Every combination of these values is one chain."""

    model_config = ConfigDict(extra="forbid")

    personas: list[str] = Field(min_length=1)
    models: list[str] = Field(min_length=1)
    modes: list[ChatMode] = Field(default_factory=lambda: list(DEFAULT_MODES), min_length=1)
    seeds: list[int] = Field(default_factory=lambda: [0], min_length=1)
    turns: list[int] = Field(default_factory=lambda: [100], min_length=1)


class ChainEntry(BaseModel):
    """One explicit chain of a plan file."""

    model_config = ConfigDict(extra="forbid")

    persona: str
    model: str
    mode: ChatMode = "burst"
    seed: int = 0
    turns: int = Field(default=100, ge=1)
    topics: str | list[str] | None = None
    turns_per_topic: int | None = Field(default=None, ge=1)


class Plan(BaseModel):
    """A run's chains: a topic list, a grid, explicit chains and shared settings."""

    model_config = ConfigDict(extra="forbid")

    topics: str | list[str] = Field(description="Topic file (name or path) or the topics.")
    turns_per_topic: int = Field(default=DEFAULT_TURNS_PER_TOPIC, ge=1)
    out: str | None = Field(default=None, description="Output folder (default transcripts/).")
    grid: Grid | None = None
    chain: list[ChainEntry] = Field(default_factory=list)
    settings: PlanSettings = Field(default_factory=PlanSettings)

    def specs(self, base: Path | None = None) -> list[ChainSpec]:
        """Every chain of the plan; paths are looked up under ``base`` first."""
        specs: list[ChainSpec] = []
        if self.grid is not None:
            topics = load_topic_list(self.topics, base)
            grid = self.grid
            for persona, model, mode, seed, turns in itertools.product(
                grid.personas, grid.models, grid.modes, grid.seeds, grid.turns
            ):
                specs.append(
                    ChainSpec(
                        persona=persona,
                        model=model,
                        mode=mode,
                        seed=seed,
                        topics=topic_targets(topics, turns, self.turns_per_topic),
                        settings=self.settings.for_model(model),
                    )
                )
        for entry in self.chain:
            wanted = entry.topics if entry.topics is not None else self.topics
            topics = load_topic_list(wanted, base)
            specs.append(
                ChainSpec(
                    persona=entry.persona,
                    model=entry.model,
                    mode=entry.mode,
                    seed=entry.seed,
                    topics=topic_targets(
                        topics, entry.turns, entry.turns_per_topic or self.turns_per_topic
                    ),
                    settings=self.settings.for_model(entry.model),
                )
            )
        if not specs:
            raise SettingsError("The plan has no chains: add a [grid] or [[chain]] entries.")
        return specs


def load_topic_list(value: str | list[str], base: Path | None = None) -> list[str]:
    """Topics given inline (a list) or as a topic file name or path."""
    if isinstance(value, list):
        topics = [topic.strip() for topic in value if topic.strip()]
        if not topics:
            raise InputError("the topic list is empty.", field="topics")
        return topics
    if base is not None and (base / value).is_file():
        return read_topics(base / value)
    try:
        return read_topics(locate_topics(value))
    except InputError:
        if value != CORPUS_TOPICS:
            raise
    # The corpus's own topic prompts, also when ./topics/chitchat.txt is not at hand.
    from sdtt.personas.corpus import load_corpus

    return load_corpus().topics()


def read_plan(path: str | Path) -> Plan:
    """Read and validate a plan file (``.toml`` or ``.json``)."""
    path = Path(path)
    data = load_settings_file(path, what="plan file", toml_hint=PLAN_HINT)
    if not isinstance(data, dict):
        raise InputError("must hold a table of settings.", path=path, hint=PLAN_HINT)
    return validate_record(Plan, data, path, hint=PLAN_HINT)


def grid_specs(
    *,
    personas: list[str],
    models: list[str],
    modes: list[ChatMode],
    seeds: list[int],
    turns: list[int],
    topics: list[str],
    turns_per_topic: int,
    settings: PlanSettings,
) -> list[ChainSpec]:
    """The chains of a grid given on the command line."""
    plan = Plan(
        topics=topics,
        turns_per_topic=turns_per_topic,
        grid=Grid(personas=personas, models=models, modes=modes, seeds=seeds, turns=turns),
        settings=settings,
    )
    return plan.specs()
