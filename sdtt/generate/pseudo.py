"""Algorithm 1, the self-directed pseudo-dialogue, as a pure state machine (sans-IO).

A **chain** writes one pseudo-dialogue: for each topic in order, ``turns`` burst turns
between the persona (side ``"response"``) and another human (side ``"user"``), each
chat appended to the dialogue the next topic's prompt shows. The state machine never
calls a model and never touches a file: :meth:`ChainState.next_step` says which prompt
to send, :meth:`ChainState.call_record` turns the model's output into the record to
store, and :meth:`ChainState.apply` folds a stored record back in. A chain file is the
header record followed by the records in the order they were produced, so replaying a
file rebuilds the exact state, which is how a killed run resumes (see
:mod:`sdtt.generate.runner`) and how the prompt of any call can be rebuilt.

Two ways to get turns out of a model (``style``):

- ``whole``, for chat models: one call asks for all the topic's remaining rounds. Fewer
  complete turns than asked: the next call shows the chat so far and asks for the rest.
  More: the excess is cut. (Algorithm 1 as the paper states it.)
- ``lines``, for completion models such as the embedded one, which write about one line
  per call: the chain decides who speaks next (burst sizes drawn from the persona's own
  history) and the model writes one message at a time, continuing ``User: [`` or
  ``Response: [``. A topic then always ends at exactly its number of turns.

Timestamps: a topic's chat starts a few hours to a day after the previous chat (drawn
from the chain's seed); the model's own timestamps are kept unless they go back in time
or jump ahead more than an hour, in which case they are resampled (see
:func:`sdtt.dialogue.parse.parse_dialogue`).
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from sdtt.dialogue.message import RESPONSE, SCHEMA_VERSION, USER, Message, Side
from sdtt.dialogue.parse import parse_dialogue
from sdtt.dialogue.render import render_messages
from sdtt.dialogue.turns import flatten_turns, segment_turns, side_runs, to_pingpong
from sdtt.errors import ConfigError, EmptyReplyError, InputError, ModelOutputError
from sdtt.generate.prompts import (
    PROMPT_VERSION,
    Mode,
    continue_task,
    generator_instructions,
    line_prefix,
    start_task,
    topic_header,
)
from sdtt.models.base import GenerateConfig, ModelOutput, Prompt, Usage
from sdtt.personas.persona import Persona
from sdtt.personas.prompt import DEFAULT_HISTORY_TURNS, history_text

Style = Literal["whole", "lines"]
StyleChoice = Literal["auto", "whole", "lines"]
STYLES: tuple[Style, ...] = ("whole", "lines")
COMPLETION_PROVIDERS = frozenset({"local"})
"""Providers whose models continue text rather than chat: 'auto' gives them 'lines'."""
MODES: tuple[Mode, ...] = ("burst", "pingpong")
DEFAULT_TURNS_PER_TOPIC = 10
MAX_PLANNED_BURST = 6
"""A planned burst (``lines`` style) never exceeds this many messages."""
MAX_JUMP = timedelta(hours=1)
"""A generated timestamp further than this after the previous message is resampled."""
TOPIC_GAP_HOURS = (3.0, 30.0)
"""A new topic's chat starts this many hours (uniform) after the previous chat."""
DEFAULT_MAX_TOKENS = 2048
"""Token cap of a 'whole' call: ten burst rounds with timestamps fit."""
LINE_MAX_TOKENS = 80
COPY_TOLERANCE = 1
"""In 'lines' style, a line copying a recent message is asked again this many times, then
kept: the chain must go on, and the copying is part of the drift it measures."""
"""Token cap of one call in ``lines`` style: one message."""


class SettingsError(ConfigError):
    """A chain setting is out of range."""


class ChainStuckError(ModelOutputError):
    """The model kept answering without producing the turns a topic needs."""


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
    temperature: float = Field(default=0.8, ge=0)
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
    timeout: float = Field(default=180.0, gt=0, description="Seconds per call attempt.")

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
    mode: Mode = "burst"
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
    """The style a chain on ``model`` uses for ``choice`` ('auto' picks by provider)."""
    if choice != "auto":
        return choice
    return "lines" if model.split("/", 1)[0] in COMPLETION_PROVIDERS else "whole"


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


class CallRecord(BaseModel):
    """One model call of a chain: what was asked, what came back, what was kept."""

    model_config = ConfigDict(frozen=True, extra="forbid")

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
    usage: dict[str, int]
    latency: float
    attempts: int
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
    mode: Mode
    settings: ChainSettings
    calls: list[int] = Field(description="Calls that wrote messages of this turn.")
    usage: dict[str, int] = Field(
        description="This turn's share of those calls' tokens (they sum to the chain's)."
    )
    messages: list[Message]


def usage_dict(usage: Usage) -> dict[str, int]:
    """A :class:`Usage` as a JSON object."""
    return {
        "input_tokens": usage.input_tokens,
        "cached_input_tokens": usage.cached_input_tokens,
        "output_tokens": usage.output_tokens,
    }


def usage_of(data: Mapping[str, int]) -> Usage:
    """The :class:`Usage` stored as ``data``."""
    return Usage(
        input_tokens=int(data.get("input_tokens", 0)),
        cached_input_tokens=int(data.get("cached_input_tokens", 0)),
        output_tokens=int(data.get("output_tokens", 0)),
    )


def split_usage(usage: Usage, parts: int) -> list[Usage]:
    """``usage`` shared over ``parts`` turns in whole tokens; the first parts get the rest."""

    def shares(total: int) -> list[int]:
        base, rest = divmod(total, parts)
        return [base + (1 if index < rest else 0) for index in range(parts)]

    columns = zip(
        shares(usage.input_tokens),
        shares(usage.cached_input_tokens),
        shares(usage.output_tokens),
        strict=True,
    )
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


def history_messages(persona: Persona, turns: int) -> list[list[Message]]:
    """The conversations (oldest first) :func:`history_text` shows for ``turns`` turns."""
    remaining = turns
    kept: list[list[Message]] = []
    for conversation in reversed(persona.conversations):
        if remaining <= 0:
            break
        chosen = segment_turns(conversation.messages)[-remaining:]
        remaining -= len(chosen)
        if chosen:
            kept.append(flatten_turns(chosen))
    return list(reversed(kept))


def chain_header(spec: ChainSpec, persona: Persona) -> ChainHeader:
    """The header of a new chain file for ``spec`` with ``persona``."""
    conversations = history_messages(persona, spec.settings.history_turns)
    every = [message for conversation in conversations for message in conversation]
    if not every:
        every = persona.messages[-1:]
    if not every:
        raise InputError(f"persona {persona.name!r} has no messages to imitate.")
    bursts: dict[Side, dict[int, int]] = {USER: {}, RESPONSE: {}}
    for side in (USER, RESPONSE):
        for conversation in conversations:
            for size in side_runs(conversation, side):
                bursts[side][size] = bursts[side].get(size, 0) + 1
    return ChainHeader(
        chain=spec.chain_id,
        spec=spec,
        persona_name=persona.name,
        instructions=generator_instructions(spec.mode),
        history=history_text(persona, spec.settings.history_turns),
        history_end=max(message.time for message in every),
        burst_sizes=bursts,
    )


def header_difference(stored: ChainHeader, wanted: ChainHeader) -> str | None:
    """The first field where a chain file's header differs from the one wanted, or None."""
    old = stored.model_dump(mode="json")
    new = wanted.model_dump(mode="json")
    for key in new:
        if old.get(key) != new[key]:
            return key
    return None


# --- pure helpers of the algorithm -------------------------------------------------------


def seeded_rng(*parts: object) -> random.Random:
    """An RNG seeded by ``parts``: the same parts give the same draws on any machine."""
    return random.Random(":".join(str(part) for part in parts))


def sample_burst(counts: Mapping[int, int], rng: random.Random) -> int:
    """A burst size drawn from observed ``counts`` (1 when there are none)."""
    sizes = [size for size in sorted(counts) if counts[size] > 0]
    if not sizes:
        return 1
    drawn = rng.choices(sizes, weights=[counts[size] for size in sizes])[0]
    return max(1, min(MAX_PLANNED_BURST, drawn))


def side_plan(
    turns: int, mode: Mode, bursts: Mapping[Side, Mapping[int, int]], rng: random.Random
) -> list[Side]:
    """Who writes each message of a topic in ``lines`` style: ``turns`` rounds of A then B."""
    plan: list[Side] = []
    for _ in range(turns):
        for side in (USER, RESPONSE):
            size = 1 if mode == "pingpong" else sample_burst(bursts.get(side, {}), rng)
            plan.extend([side] * size)
    return plan


def complete_turns(messages: Sequence[Message]) -> int:
    """Turns of ``messages`` in which side B has answered."""
    return sum(1 for turn in segment_turns(messages) if turn.is_complete)


def drop_repeats(existing: Sequence[Message], new: Sequence[Message]) -> list[Message]:
    """Drop lines a chat model copied from the chat so far at the start of its answer.

    Asked to continue, chat models sometimes start over from the chat's first line or
    repeat its last line before writing new ones.
    """

    def same(a: Message, b: Message) -> bool:
        return a.side == b.side and a.text.strip() == b.text.strip()

    new = list(new)
    if not existing or not new:
        return new
    if same(new[0], existing[0]):
        copied = 0
        while copied < min(len(new), len(existing)) and same(new[copied], existing[copied]):
            copied += 1
        return new[copied:]
    if same(new[0], existing[-1]):
        return new[1:]
    return new


def copies_recent(messages: Sequence[Message], new: Message, window: int = 4) -> bool:
    """True when ``new`` repeats the text of one of the last ``window`` messages.

    Small completion models, writing one line at a time, tend to copy the line above
    again and again; such a copy is asked again (a few times) like an empty answer.
    """
    text = new.text.strip().casefold()
    return any(message.text.strip().casefold() == text for message in messages[-window:])


def cut_to_turns(messages: Sequence[Message], turns: int) -> list[Message]:
    """The messages of the first ``turns`` burst turns."""
    return flatten_turns(segment_turns(messages)[:turns])


def topic_start(header: ChainHeader, topic_index: int, after: datetime) -> datetime:
    """When the chat about topic ``topic_index`` begins: some hours after ``after``."""
    rng = seeded_rng(header.spec.seed, header.chain, "start", topic_index)
    hours = rng.uniform(*TOPIC_GAP_HOURS)
    return (after + timedelta(hours=hours)).replace(microsecond=0)


# --- the state machine ------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """The next call a chain makes."""

    call: int
    topic_index: int
    topic_call: int
    prompt: Prompt
    config: GenerateConfig
    earliest: datetime
    side: Side | None = None
    """In ``lines`` style, the side whose message the call writes."""


@dataclass
class _Topic:
    """Progress on the current topic."""

    messages: list[Message] = field(default_factory=list)
    calls: int = 0
    done: bool = False
    written: int = 0
    """Turn records already written for this topic."""
    turn_calls: dict[int, list[int]] = field(default_factory=dict)
    turn_usage: dict[int, Usage] = field(default_factory=dict)
    uncharged: Usage = field(default_factory=Usage)
    uncharged_calls: list[int] = field(default_factory=list)
    start: datetime | None = None
    misses: int = 0
    """Calls in a row that added nothing (a 'lines' copy is refused only this many times)."""


class ChainState:
    """Where a chain stands: finished topics, the current topic, records written."""

    def __init__(self, header: ChainHeader) -> None:
        self.header = header
        self.spec = header.spec
        self.finished: list[list[Message]] = []
        """Kept messages of every finished topic."""
        self._finished_blocks: list[str] = []
        self._finished_turns = 0
        self.calls = 0
        """Calls recorded so far."""
        self.turns_written = 0
        """Turn records written so far (over all topics)."""
        self.calls_this_run = 0
        """Calls of the current topic made by this process (for the stuck check)."""
        self.total_usage = Usage()
        """Tokens of every call recorded so far."""
        self._topic = _Topic()

    # -- reading the state --

    @property
    def topic_index(self) -> int:
        """The topic being written (== number of topics when the chain is done)."""
        return len(self.finished)

    @property
    def done(self) -> bool:
        """True when every topic has all its turns written."""
        return self.topic_index >= len(self.spec.topics)

    @property
    def messages(self) -> list[Message]:
        """Every kept message so far, finished topics first."""
        return [m for topic in self.finished for m in topic] + self._topic.messages

    @property
    def current_messages(self) -> list[Message]:
        """Kept messages of the topic being written."""
        return list(self._topic.messages)

    def dialogue_text(self) -> str:
        """The generated chats as the prompt shows them: header line, then message lines."""
        blocks = list(self._finished_blocks)
        if not self.done:
            blocks.append(self._block(self.topic_index, self._topic.messages))
        return "\n\n".join(blocks)

    def stable_dialogue_chars(self) -> int:
        """How much of :meth:`dialogue_text` no later prompt of the chain changes.

        That is the chats of the finished topics: later prompts only append to them (the
        current topic's chat, then further topics). The separator after them is left out
        so that the stable part ends with a chat line.
        """
        return len("\n\n".join(self._finished_blocks))

    def _block(self, index: int, messages: Sequence[Message]) -> str:
        header = topic_header(self.spec.topics[index].topic)
        return f"{header}\n{render_messages(messages)}" if messages else header

    def _plan(self) -> list[Side]:
        target = self.spec.topics[self.topic_index]
        rng = seeded_rng(self.spec.seed, self.header.chain, "plan", self.topic_index)
        return side_plan(target.turns, self.spec.mode, self.header.burst_sizes, rng)

    def _start(self) -> datetime:
        if self._topic.start is None:
            after = self.finished[-1][-1].time if self.finished else self.header.history_end
            self._topic.start = topic_start(self.header, self.topic_index, after)
        return self._topic.start

    # -- stepping --

    def next_step(self) -> Step:
        """The call to make next. Raises :class:`ChainStuckError` past the call budget."""
        if self.done:
            raise RuntimeError("the chain is done; there is no next step")
        settings = self.spec.settings
        target = self.spec.topics[self.topic_index]
        topic = self._topic
        plan = self._plan() if settings.style == "lines" else []
        budget = settings.call_budget(target.turns, len(plan))
        if self.calls_this_run >= budget:
            raise ChainStuckError(
                f"topic {self.topic_index + 1} ({target.topic!r}) still lacks turns after "
                f"{self.calls_this_run} calls in this run; the model's answers could not be "
                "used. Rerun to try again, or try another model or --style."
            )
        seed = (self.spec.seed * 1_000_003 + self.calls) % 2**31
        side: Side | None = None
        if settings.style == "whole":
            if topic.messages:
                remaining = max(1, target.turns - complete_turns(topic.messages))
                task = continue_task(target.topic, remaining)
                continue_with = ""
                earliest = topic.messages[-1].time
            else:
                earliest = self._start()
                task = start_task(target.topic, target.turns, earliest)
                continue_with = line_prefix(USER, earliest)
            config = GenerateConfig(
                max_tokens=settings.max_tokens,
                temperature=settings.temperature,
                seed=seed,
                timeout=settings.timeout,
            )
        else:
            side = plan[len(topic.messages)]
            if topic.messages:
                earliest = topic.messages[-1].time
                continue_with = line_prefix(side)
            else:
                earliest = self._start()
                continue_with = line_prefix(side, earliest)
            task = f"Write the next line of the chat about {target.topic}: one {side} message."
            config = GenerateConfig(
                max_tokens=min(settings.max_tokens, LINE_MAX_TOKENS),
                temperature=settings.temperature,
                stop=("\n",),
                seed=seed,
                timeout=settings.timeout,
            )
        prompt = Prompt(
            instructions=self.header.instructions,
            history=self.header.history,
            dialogue=self.dialogue_text(),
            task=task,
            continue_with=continue_with,
            stable_dialogue_chars=self.stable_dialogue_chars(),
        )
        return Step(
            call=self.calls,
            topic_index=self.topic_index,
            topic_call=topic.calls,
            prompt=prompt,
            config=config,
            earliest=earliest,
            side=side,
        )

    def call_record(self, step: Step, output: ModelOutput) -> CallRecord:
        """The record of ``step`` answered by ``output``: parsed, cut, decided (pure)."""
        target = self.spec.topics[step.topic_index]
        before = self._topic.messages
        rng = seeded_rng(self.spec.seed, self.header.chain, "parse", step.call)
        text = output.continued_from + output.text
        if step.side is not None:
            line = output.text.split("\n", 1)[0]
            text = output.continued_from + line
            if output.continued_from.endswith("[") and "]" not in line:
                # The model skipped the timestamp: keep its text, resample the time.
                text = f"{output.continued_from[:-1]} {line}"
        problem: str | None = None
        try:
            parsed = parse_dialogue(text, start=step.earliest, rng=rng, max_gap=MAX_JUMP)
        except EmptyReplyError:
            parsed = []
            problem = "no chat line in the output"
        if step.side is not None:
            parsed = [m for m in parsed if m.side == step.side][:1]
            if parsed and self._topic.misses < COPY_TOLERANCE and copies_recent(before, parsed[0]):
                parsed = []
                problem = "the line copies a recent message"
        else:
            parsed = drop_repeats(before, parsed)
        combined = [*before, *parsed]
        if self.spec.mode == "pingpong":
            combined = to_pingpong(combined)
        if step.side is not None:
            done = len(combined) >= len(self._plan())
        else:
            turns = segment_turns(combined)
            done = len(turns) > target.turns or (
                len(turns) == target.turns and turns[-1].is_complete
            )
            if done:
                combined = cut_to_turns(combined, target.turns)
        added = combined[len(before) :]
        if not added and problem is None:
            problem = "every parsed line was cut or repeated"
        return CallRecord(
            chain=self.header.chain,
            call=step.call,
            topic_index=step.topic_index,
            topic_call=step.topic_call,
            task=step.prompt.task,
            continue_with=step.prompt.continue_with,
            earliest=step.earliest,
            config=config_dict(step.config),
            model=output.model,
            text=output.text,
            continued_from=output.continued_from,
            usage=usage_dict(output.usage),
            latency=round(output.latency, 6),
            attempts=output.attempts,
            messages=added,
            parsed=len(parsed),
            topic_done=done,
            problem=problem if not added else None,
        )

    def apply(self, record: CallRecord, *, live: bool = False) -> None:
        """Fold a call record into the state (``live``: made by this process)."""
        if record.call != self.calls or record.topic_index != self.topic_index:
            raise InputError(
                f"call record {record.call} (topic {record.topic_index}) is out of order; "
                f"expected call {self.calls} on topic {self.topic_index}.",
                hint="The chain file was edited or mixed with another; start a new file.",
            )
        if self._topic.done:
            raise InputError(
                f"call record {record.call} follows a finished topic whose turns are missing.",
                hint="The chain file was edited; start a new file.",
            )
        topic = self._topic
        if topic.start is None and topic.calls == 0:
            topic.start = record.earliest
        before = len(topic.messages)
        topic.messages.extend(record.messages)
        topic.calls += 1
        self.calls += 1
        if live:
            self.calls_this_run += 1
        topic.misses = 0 if record.messages else topic.misses + 1
        usage = usage_of(record.usage)
        self.total_usage = self.total_usage + usage
        if record.messages:
            owners = _turn_of_each(topic.messages)[before:]
            touched = sorted(set(owners))
            charge = usage + topic.uncharged
            for turn, share in zip(touched, split_usage(charge, len(touched)), strict=True):
                topic.turn_usage[turn] = topic.turn_usage.get(turn, Usage()) + share
                calls = topic.turn_calls.setdefault(turn, [])
                for call in [*topic.uncharged_calls, record.call]:
                    if call not in calls:
                        calls.append(call)
            topic.uncharged = Usage()
            topic.uncharged_calls = []
        else:
            topic.uncharged = topic.uncharged + usage
            topic.uncharged_calls.append(record.call)
        topic.done = record.topic_done
        if topic.done and topic.uncharged_calls:
            last = len(segment_turns(topic.messages)) - 1
            if last >= 0:
                topic.turn_usage[last] = topic.turn_usage.get(last, Usage()) + topic.uncharged
                topic.turn_calls.setdefault(last, []).extend(topic.uncharged_calls)
            topic.uncharged = Usage()
            topic.uncharged_calls = []
        self._advance()

    def pending_turns(self) -> list[TurnRecord]:
        """Turn records that are final but not written yet, in order."""
        topic = self._topic
        if self.done:
            return []
        turns = segment_turns(topic.messages)
        final = len(turns) if topic.done else max(0, len(turns) - 1)
        target = self.spec.topics[self.topic_index]
        first_global = self._finished_turns
        records = []
        for index in range(topic.written, final):
            records.append(
                TurnRecord(
                    chain=self.header.chain,
                    topic_index=self.topic_index,
                    topic=target.topic,
                    turn_index=index,
                    turn=first_global + index,
                    model=self.spec.model,
                    mode=self.spec.mode,
                    settings=self.spec.settings,
                    calls=sorted(topic.turn_calls.get(index, [])),
                    usage=usage_dict(topic.turn_usage.get(index, Usage())),
                    messages=list(turns[index].messages),
                )
            )
        return records

    def mark_written(self, record: TurnRecord) -> None:
        """Note that ``record`` is in the file (in order), advancing past a finished topic."""
        expected = self.pending_turns()[:1]
        if not expected or expected[0] != record:
            raise InputError(
                f"turn record {record.turn} does not match the calls before it.",
                hint="The chain file was edited or mixed with another; start a new file.",
            )
        self._topic.written += 1
        self.turns_written += 1
        self._advance()

    def _advance(self) -> None:
        topic = self._topic
        if not topic.done:
            return
        if topic.written < len(segment_turns(topic.messages)):
            return
        self._finished_blocks.append(self._block(self.topic_index, topic.messages))
        self._finished_turns += len(segment_turns(topic.messages))
        self.finished.append(topic.messages)
        self._topic = _Topic()
        self.calls_this_run = 0

    # -- replay --

    @classmethod
    def replay(cls, header: ChainHeader, records: Iterable[CallRecord | TurnRecord]) -> ChainState:
        """The state after ``records`` (a chain file's body, in order)."""
        state = cls(header)
        for record in records:
            if isinstance(record, CallRecord):
                state.apply(record)
            else:
                state.mark_written(record)
        return state


def _turn_of_each(messages: Sequence[Message]) -> list[int]:
    """For each message, the index of the burst turn it belongs to."""
    owners: list[int] = []
    for index, turn in enumerate(segment_turns(messages)):
        owners.extend([index] * len(turn.messages))
    return owners
