"""The study spec of ``sdtt study``: a TOML file naming a whole offline design.

The design is the product personas x models x modes x turns (N, X) x topics; every cell
is one chat. Chats are simulated (``interrogator`` names a model) or collected from
people (``interrogator = "human"``); LLM judges and a human survey judge the pairs the
questionnaire makes of them; LLM cohorts (``[cohorts.NAME]``) rate the similarity of
excerpts drawn from its chats (as ``sdtt align``); the analyses and the report follow.
``examples/turns_study.toml`` shows the main sections. A bad spec raises one
:class:`InputError` naming the file, the line and the field, as ``sdtt serve``'s spec
does.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from sdtt.align.llm import IDENTITIES, ORDERS, PROMPTS, Cohort
from sdtt.dialogue.condition import ChatMode
from sdtt.dialogue.store import validate_record
from sdtt.errors import ConfigError, InputError
from sdtt.files import load_settings_file
from sdtt.judges.llm_options import JudgeKind, OrderPolicy
from sdtt.models.batch import batch_provider
from sdtt.models.prices import Price
from sdtt.models.registry import PROVIDERS
from sdtt.serve.spec import spec_line
from sdtt.surveys.tools import TOOLS
from sdtt.tasks.rating_spec import Unit
from sdtt.tasks.study import Timestamps

SPEC_HINT = "See 'Running a whole study' in the README for the spec format."
_BURST: tuple[ChatMode, ...] = ("burst",)
JUDGE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
SURVEY_JUDGEMENTS = "survey"
"""The survey's judgement file is ``OUT/judgements/survey.jsonl``."""
HUMAN = "human"
"""The ``interrogator`` of chats collected from people (``sdtt chat`` / ``sdtt serve``)."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class StudySection(_Section):
    """What the study is called, where it is written, its seed and its budget."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    title: str = "sdtt study"
    out: str = Field(default="", description="Output folder, relative to the spec ('': NAME).")
    seed: int = 0
    start: str = Field(
        default="2025-01-01T12:00",
        description="Simulated chats start at this time (one hour apart), so their prompts "
        "and the whole study come out the same on every run.",
    )

    @field_validator("start")
    @classmethod
    def _start(cls, value: str) -> str:
        try:
            datetime.fromisoformat(value)
        except ValueError:
            raise ValueError("must be a date and time such as 2025-01-01T12:00") from None
        return value

    budget: float | None = Field(
        default=None,
        ge=0,
        description="US dollars the study may spend on priced calls; the run stops before "
        "a call that could exceed it.",
    )


class DesignSection(_Section):
    """The grid of chats: every combination is one cell."""

    personas: list[str] = Field(min_length=1)
    models: list[str] = Field(min_length=1)
    modes: list[ChatMode] = Field(default_factory=lambda: list(_BURST), min_length=1)
    turns: list[tuple[int, int]] = Field(
        min_length=1,
        description="(N, X) pairs: N pseudo-dialogue turns in the bot's prompt, X live turns.",
    )
    topics: list[str] = Field(min_length=1, description="Live chat topics (corpus topics pair).")
    interrogator: str = Field(
        default="mock/chatty",
        min_length=1,
        description="The model that questions the bot, or 'human' for chats people hold.",
    )

    @field_validator("turns")
    @classmethod
    def _turns(cls, value: list[tuple[int, int]]) -> list[tuple[int, int]]:
        for n, x in value:
            if n < 0 or x < 1:
                raise ValueError("each (N, X) needs N >= 0 and X >= 1")
        if len(set(value)) != len(value):
            raise ValueError("an (N, X) pair is listed twice")
        totals = [n + x for n, x in value]
        if len(set(totals)) != len(totals):
            raise ValueError(
                "two (N, X) pairs have the same total N + X: judges could not tell them apart"
            )
        return value


class PseudoSection(_Section):
    """How the pseudo-dialogue chains (for N > 0) are written."""

    model: str = Field(default="", description="'' : each cell's own model.")
    topics: str = Field(
        default="chitchat",
        description="A topic file or list name (as 'sdtt generate --topics'), or 'generate' "
        "for a topic list asked of topics_model.",
    )
    topics_model: str = "mock/chatty"
    topics_count: int = Field(default=10, ge=1)
    turns_per_topic: int = Field(default=10, ge=1)


class QuestionnaireSection(_Section):
    """How chats are paired and shown to judges (as ``sdtt questionnaire build``)."""

    human: str = Field(
        default="corpus",
        description="The human side: 'corpus' (other people's chats on the bot's topic), "
        "'persona' (the imitated person's own chats its persona holds out of every prompt: "
        "'sdtt persona hold-out', or held_out), or a transcript file.",
    )
    held_out: int | float | None = Field(
        default=None,
        description="With human = 'persona': how many of each persona's chats the run "
        "holds out of the bot's prompt to show as the human side, a count (3) or a share "
        "of its chats (0.25); drawn with the study's seed. None: the personas listed hold "
        "chats out already ('sdtt persona hold-out').",
    )
    seed: int = 1
    catch_pairs: int = Field(default=1, ge=0)
    pairs_per_judge: int | None = Field(default=None, ge=1)
    topic_check: bool = True
    timestamps: Timestamps = "hidden"

    @field_validator("held_out", mode="before")
    @classmethod
    def _held_out(cls, value: object) -> object:
        if isinstance(value, bool):
            raise ValueError("must be a count (3) or a share (0.25), not true or false")
        if isinstance(value, int) and value < 1:
            raise ValueError("a count of chats must be 1 or more")
        if isinstance(value, float) and not 0 < value < 1:
            raise ValueError("a share of chats is between 0 and 1 (0.25); a count is whole (3)")
        return value

    @model_validator(mode="after")
    def _held_out_needs_persona(self) -> QuestionnaireSection:
        if self.held_out is not None and self.human.strip().lower() != "persona":
            raise ValueError(
                "held_out holds the persona's own chats out: it needs human = 'persona'"
            )
        return self


class _BatchSettings(_Section):
    """How a section's model calls go: direct, or through the provider's batch API (as the
    commands' ``--batch``, ``--poll`` and ``--batch-retries``), at its discount."""

    batch: bool = Field(
        default=False,
        description="Send the calls through the provider's batch API, at its discount.",
    )
    poll: float = Field(
        default=60.0, ge=0, description="Seconds between status checks of a batch job."
    )
    batch_retries: int = Field(
        default=2, ge=0, description="New jobs a batch request without an answer is sent in."
    )


def _no_batch_api(model: str) -> str | None:
    """Why ``model`` cannot be batched, ``None`` when its provider has a batch API."""
    try:
        batch_provider(model)
    except ConfigError:
        able = " and ".join(f"{p.name}/" for p in PROVIDERS.values() if p.batch)
        return (
            f"{model} has no batch API ({able} models have one); leave batch out for direct calls"
        )
    return None


class JudgeSection(_BatchSettings):
    """One LLM judge (``[judges.NAME]``)."""

    model: str = Field(min_length=1)
    kind: JudgeKind = "paired"
    orders: OrderPolicy = "both"
    attempts: int = Field(default=2, ge=1)
    seed: int = 0


class SurveySection(_Section):
    """The human survey: an export to field, and where its answers come back."""

    format: str = Field(description="The survey tool ('surveyjs', 'qualtrics', ...).")
    judges: int = Field(default=20, ge=1, description="Judges to recruit (for the prereg).")
    answers: str = Field(
        default="",
        description="The tool's answer file, relative to the spec ('': OUT/survey/answers.*).",
    )

    @field_validator("format")
    @classmethod
    def _tool(cls, value: str) -> str:
        tool = TOOLS.get(value)
        if tool is None or tool.read is None:
            readable = ", ".join(name for name, t in TOOLS.items() if t.read is not None)
            raise ValueError(
                f"not a survey tool whose answers can come back; use one of {readable}"
            )
        return value


class AlignSection(_Section):
    """The similarity rating task the cohorts rate (as ``sdtt align build`` with a
    ``[rating]`` section whose one source is the study's questionnaire)."""

    unit: Unit = Field(default="burst", description="'message', 'burst' or 'excerpt'.")
    excerpt_turns: int = Field(default=2, ge=1, description="Turns of an 'excerpt' item.")
    items_per_source: int = Field(
        default=4, ge=1, description="Items drawn (seeded) from each side, bot and human."
    )
    seed: int = Field(default=0, description="Draws the items and seeds the permutations.")
    permutations: int = Field(
        default=200, ge=0, description="Permutations of the tests (as 'sdtt align score')."
    )


class CohortSection(_BatchSettings):
    """LLM cohorts rating the task (``[cohorts.NAME]``, as ``sdtt align judge``): one
    cohort per model x temperature x prompt variant."""

    models: list[str] = Field(min_length=1)
    temperatures: list[float] = Field(default_factory=lambda: [1.0], min_length=1)
    prompts: list[str] = Field(default_factory=lambda: ["plain"], min_length=1)
    participants: int = Field(default=10, ge=1, description="Participants per cohort.")
    identities: bool = False
    orders: str = Field(default="shown", description="'shown' or 'both'.")
    attempts: int = Field(default=2, ge=1)
    seed: int = 0

    @field_validator("temperatures")
    @classmethod
    def _temperatures(cls, value: list[float]) -> list[float]:
        if any(not 0 <= t <= 2 for t in value):
            raise ValueError("every temperature must be between 0 and 2")
        return value

    @field_validator("prompts")
    @classmethod
    def _prompts(cls, value: list[str]) -> list[str]:
        unknown = [p for p in value if p not in PROMPTS]
        if unknown:
            raise ValueError(f"unknown prompt variant {unknown[0]!r}; use {', '.join(PROMPTS)}")
        return value

    @field_validator("orders")
    @classmethod
    def _orders(cls, value: str) -> str:
        if value not in ORDERS:
            raise ValueError(f"use one of {', '.join(ORDERS)}")
        return value

    def cohorts(self) -> list[Cohort]:
        """The ``sdtt align`` cohorts this section names."""
        return [
            Cohort(
                model,
                self.participants,
                temperature,
                prompt,
                self.seed,
                identities=self.identities,
                orders=self.orders,
            )
            for model in self.models
            for temperature in self.temperatures
            for prompt in self.prompts
        ]


class AnalysisSection(_Section):
    """What is computed from the judgements, and what the prereg states."""

    by: list[str] = Field(default_factory=lambda: ["turns"])
    bootstrap: int = Field(default=200, ge=0)
    margin: float = Field(default=0.1, gt=0, lt=0.5)
    alpha: float = Field(default=0.05, gt=0, lt=1)
    power: float = Field(default=0.8, gt=0, lt=1)
    expected_pass_rate: float = Field(
        default=0.4, gt=0, lt=1, description="The pass rate the study is powered to detect."
    )
    icc: float = Field(default=0.0, ge=0, lt=1)
    sequential: bool = Field(
        default=False,
        description="Stop each condition once the anytime-valid stopping rule of 'sdtt score "
        "--sequential' is met (within +-margin); the prereg states it, the report checks it.",
    )
    max_judgements: int = Field(
        default=2000,
        ge=1,
        le=100_000,
        description="With sequential: the most judgements a condition collects (the cap of "
        "'sdtt plan --sequential --max-judgements').",
    )
    simulations: int = Field(
        default=2000,
        ge=1,
        le=100_000,
        description="With sequential: simulated studies for the prereg's expected and "
        "worst-case judgements (as 'sdtt plan --sequential --simulations').",
    )
    hypotheses: list[str] = Field(
        default_factory=lambda: [
            "The bot's pass rate differs from 50% at some total turn index N + X.",
        ]
    )


class PriceSection(_Section):
    """Dollars per million tokens of one model (``[prices."provider/model"]``)."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float | None = Field(default=None, ge=0)

    def price(self) -> Price:
        """As the price tables hold it (cached input priced as input unless given)."""
        cached = self.input if self.cached_input is None else self.cached_input
        return Price(self.input, cached, self.output)


class StudySpec(_Section):
    """A whole study spec."""

    study: StudySection
    design: DesignSection
    pseudo: PseudoSection = PseudoSection()
    questionnaire: QuestionnaireSection = QuestionnaireSection()
    judges: dict[str, JudgeSection] = Field(default_factory=dict)
    survey: SurveySection | None = None
    align: AlignSection = AlignSection()
    cohorts: dict[str, CohortSection] = Field(default_factory=dict)
    analysis: AnalysisSection = AnalysisSection()
    prices: dict[str, PriceSection] = Field(default_factory=dict)

    def problem(self) -> tuple[str, str] | None:
        """A field and what is wrong with it, for settings valid one by one but not
        together; None when there is none."""
        for name in ("personas", "models", "modes", "topics"):
            values = getattr(self.design, name)
            if len(set(values)) != len(values):
                return f"design.{name}", "lists a value twice"
        for name in self.judges:
            # A judge's name is its judgement file's: OUT/judgements/NAME.jsonl.
            if not JUDGE_NAME.match(name) or name == SURVEY_JUDGEMENTS:
                return f"judges.{name}", (
                    "name a judge with letters, digits, '-' and '_' "
                    f"(not {SURVEY_JUDGEMENTS!r}, the survey's)"
                )
        for name, judge in self.judges.items():
            problem = _no_batch_api(judge.model) if judge.batch else None
            if problem:
                return f"judges.{name}.batch", problem
        return self._cohort_problem() or self._judged_problem()

    def _cohort_problem(self) -> tuple[str, str] | None:
        seen: dict[str, str] = {}
        for name, section in self.cohorts.items():
            # A cohort's name is its rating file's: OUT/align/ratings/NAME.jsonl.
            if not JUDGE_NAME.match(name):
                return f"cohorts.{name}", "name a cohort with letters, digits, '-' and '_'"
            if section.identities and section.participants > len(IDENTITIES):
                return f"cohorts.{name}.participants", (
                    f"with identities a cohort has at most {len(IDENTITIES)} participants"
                )
            problems = [_no_batch_api(model) for model in section.models] if section.batch else []
            problem = next((p for p in problems if p), None)
            if problem:
                return f"cohorts.{name}.batch", problem
            for cohort in section.cohorts():
                if cohort.name in seen:
                    return f"cohorts.{name}", (
                        f"the cohort {cohort.name!r} is also in [cohorts.{seen[cohort.name]}]"
                    )
                seen[cohort.name] = name
        return None

    def _judged_problem(self) -> tuple[str, str] | None:
        if not self.judges and self.survey is None:
            return "judges", "name a judge: a [judges.NAME] table or a [survey]"
        return None


@dataclass(frozen=True)
class Study:
    """A checked spec, where it was read from and its hash."""

    spec: StudySpec
    path: Path
    sha256: str
    out_dir: Path | None = None
    """Where the study is written instead of the spec's ``out`` (a bundle's copy)."""

    @property
    def folder(self) -> Path:
        """The spec's folder: relative paths are read against it."""
        return self.path.resolve().parent

    @property
    def out(self) -> Path:
        """Where the study is written."""
        if self.out_dir is not None:
            return self.out_dir
        # Normalised, so "../runs/x" is shown and stored as the folder it names.
        return Path(os.path.normpath(self.folder / (self.spec.study.out or self.spec.study.name)))

    @property
    def simulated(self) -> bool:
        """Whether a model holds the chats (else people do)."""
        return self.spec.design.interrogator != HUMAN


def read_spec(path: str | Path, *, out: Path | None = None) -> Study:
    """Read and check a study spec; a problem is one :class:`InputError` naming the file,
    the line and the field. ``out`` overrides where the study is written."""
    path = Path(path)
    if not path.exists():
        raise InputError(
            "study spec not found.",
            path=path,
            hint="Give the path of a spec, e.g. examples/turns_study.toml. " + SPEC_HINT,
        )
    data = load_settings_file(path, what="study spec", toml_hint=SPEC_HINT)
    if not isinstance(data, dict):
        raise InputError("must hold a table of settings.", path=path, hint=SPEC_HINT)
    try:
        spec = validate_record(StudySpec, data, path, hint=SPEC_HINT)
    except InputError as error:
        if error.field is None:
            raise
        line = spec_line(path, error.field)
        raise InputError(
            error.problem, path=path, line=line, field=error.field, hint=error.hint
        ) from None
    problem = spec.problem()
    if problem is not None:
        field, text = problem
        raise InputError(
            text + ".", path=path, line=spec_line(path, field), field=field, hint=SPEC_HINT
        )
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return Study(spec=spec, path=path, sha256=digest, out_dir=out)
