"""Algorithm 1, the self-directed pseudo-dialogue, as a pure state machine (sans-IO).

A **chain** writes one pseudo-dialogue: for each topic in order, ``turns`` burst turns
between the persona (side ``"response"``) and another human (side ``"user"``), each
chat appended to the dialogue the next topic's prompt shows. The state machine never
calls a model and never touches a file: :meth:`ChainState.next_step` says which prompt
to send, :meth:`ChainState.call_record` turns the model's output into the record to
store, and :meth:`ChainState.apply` folds a stored record back in. A chain file is the
header record followed by the records in the order they were produced, so replaying a
file rebuilds the exact state, which is how a killed run resumes (see
:mod:`sdtt.generate.runner`) and how the prompt of any call can be rebuilt. The chain's
settings and the records themselves live in :mod:`sdtt.generate.chain`.

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

import random
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sdtt.dialogue.condition import ChatMode
from sdtt.dialogue.message import RESPONSE, USER, Message, Side, turn_starts
from sdtt.dialogue.parse import parse_dialogue
from sdtt.dialogue.render import render_messages
from sdtt.dialogue.turns import to_pingpong
from sdtt.errors import EmptyReplyError, InputError, ModelOutputError
from sdtt.generate.chain import (
    ChainHeader,
    PseudoCallRecord,
    TurnRecord,
    config_dict,
    split_usage,
    usage_dict,
    usage_of,
)
from sdtt.generate.prompts import (
    continue_task,
    line_prefix,
    start_task,
    topic_header,
)
from sdtt.models.base import GenerateConfig, ModelOutput, Prompt, Usage
from sdtt.models.registry import provider_of
from sdtt.seeds import derive_seed, seeded_rng

MAX_PLANNED_BURST = 6
"""A planned burst (``lines`` style) never exceeds this many messages."""
MAX_JUMP = timedelta(hours=1)
"""A generated timestamp further than this after the previous message is resampled."""
TOPIC_GAP_HOURS = (3.0, 30.0)
"""A new topic's chat starts this many hours (uniform) after the previous chat."""
LINE_MAX_TOKENS = 80
"""Token cap of one call in ``lines`` style: one message."""
COPY_TOLERANCE = 1
"""In 'lines' style, a line copying a recent message is asked again this many times, then
kept: the chain must go on, and the copying is part of the drift it measures."""


class ChainStuckError(ModelOutputError):
    """The model kept answering without producing the turns a topic needs."""


# --- pure helpers of the algorithm -------------------------------------------------------


def sample_burst(counts: Mapping[int, int], rng: random.Random) -> int:
    """A burst size drawn from observed ``counts`` (1 when there are none)."""
    sizes = [size for size in sorted(counts) if counts[size] > 0]
    if not sizes:
        return 1
    drawn = rng.choices(sizes, weights=[counts[size] for size in sizes])[0]
    return max(1, min(MAX_PLANNED_BURST, drawn))


def speaker_order(
    turns: int, mode: ChatMode, bursts: Mapping[Side, Mapping[int, int]], rng: random.Random
) -> list[Side]:
    """Who writes each message of a topic in ``lines`` style: ``turns`` rounds of A then B."""
    order: list[Side] = []
    for _ in range(turns):
        for side in (USER, RESPONSE):
            size = 1 if mode == "pingpong" else sample_burst(bursts.get(side, {}), rng)
            order.extend([side] * size)
    return order


def complete_turns(messages: Sequence[Message], starts: Sequence[int] | None = None) -> int:
    """Turns of ``messages`` in which side B has answered (``starts``: their
    :func:`~sdtt.dialogue.message.turn_starts`, if known).

    Every turn but the last has: it ended because side A wrote after side B.
    """
    if starts is None:
        starts = turn_starts(messages)
    if not messages or messages[-1].side == RESPONSE:
        return len(starts)
    return len(starts) - 1


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


def cut_to_turns(
    messages: Sequence[Message], turns: int, starts: Sequence[int] | None = None
) -> list[Message]:
    """The messages of the first ``turns`` burst turns (``starts``: their
    :func:`~sdtt.dialogue.message.turn_starts`, if known)."""
    if starts is None:
        starts = turn_starts(messages)
    return list(messages[: starts[turns]] if turns < len(starts) else messages)


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
    starts: list[int] = field(default_factory=list)
    """Where each burst turn of ``messages`` begins (kept up to date as they grow)."""
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

    def _speakers(self) -> list[Side]:
        target = self.spec.topics[self.topic_index]
        # "plan" names this stream in chain files already written: kept, so they resume.
        rng = seeded_rng(self.spec.seed, self.header.chain, "plan", self.topic_index)
        return speaker_order(target.turns, self.spec.mode, self.header.burst_sizes, rng)

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
        speakers = self._speakers() if settings.style == "lines" else []
        budget = settings.call_budget(target.turns, len(speakers))
        if self.calls_this_run >= budget:
            provider = provider_of(self.spec.model)
            if provider is not None and provider.scripted:
                advice = (
                    f"{self.spec.model} is scripted: it answers the same way on every run, so "
                    "running again fails the same way. Give the chain a model that writes "
                    "chat lines (e.g. mock/chatty), or fewer turns."
                )
            else:
                advice = "Rerun to try again, or try another model or --style."
            raise ChainStuckError(
                f"topic {self.topic_index + 1} ({target.topic!r}) still lacks turns after "
                f"{self.calls_this_run} calls in this run; the model's answers could not be "
                f"used. {advice}"
            )
        seed = derive_seed(self.spec.seed, "call", self.calls)
        side: Side | None = None
        if settings.style == "whole":
            if topic.messages:
                remaining = max(1, target.turns - complete_turns(topic.messages, topic.starts))
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
            side = speakers[len(topic.messages)]
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

    def call_record(self, step: Step, output: ModelOutput) -> PseudoCallRecord:
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
            done = len(combined) >= len(self._speakers())
        else:
            starts = turn_starts(combined)
            done = len(starts) > target.turns or (
                len(starts) == target.turns and combined[-1].side == RESPONSE
            )
            if done:
                combined = cut_to_turns(combined, target.turns, starts)
        added = combined[len(before) :]
        if not added and problem is None:
            problem = "every parsed line was cut or repeated"
        return PseudoCallRecord(
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
            messages=added,
            parsed=len(parsed),
            topic_done=done,
            problem=problem if not added else None,
        )

    def apply(self, record: PseudoCallRecord, *, live: bool = False) -> None:
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
        turn_starts(topic.messages, topic.starts)
        topic.calls += 1
        self.calls += 1
        if live:
            self.calls_this_run += 1
        topic.misses = 0 if record.messages else topic.misses + 1
        usage = usage_of(record.usage)
        self.total_usage = self.total_usage + usage
        if record.messages:
            # The new messages belong to the turn going on at ``before`` and every later one.
            touched = range(bisect_right(topic.starts, before) - 1, len(topic.starts))
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
            last = len(topic.starts) - 1
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
        starts = topic.starts
        ends = [*starts[1:], len(topic.messages)]
        final = len(starts) if topic.done else max(0, len(starts) - 1)
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
                    messages=topic.messages[starts[index] : ends[index]],
                )
            )
        return records

    def mark_written(self, record: TurnRecord, *, check: bool = True) -> None:
        """Note that ``record`` is in the file (in order), advancing past a finished topic.

        ``check=False`` skips comparing it with the expected record, for a record that
        :meth:`pending_turns` just made (the comparison rebuilds every pending turn).
        """
        expected = self.pending_turns()[:1] if check else [record]
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
        turns = len(topic.starts)
        if topic.written < turns:
            return
        self._finished_blocks.append(self._block(self.topic_index, topic.messages))
        self._finished_turns += turns
        self.finished.append(topic.messages)
        self._topic = _Topic()
        self.calls_this_run = 0

    # -- replay --

    @classmethod
    def replay(
        cls, header: ChainHeader, records: Iterable[PseudoCallRecord | TurnRecord]
    ) -> ChainState:
        """The state after ``records`` (a chain file's body, in order)."""
        state = cls(header)
        for record in records:
            if isinstance(record, PseudoCallRecord):
                state.apply(record)
            else:
                state.mark_written(record)
        return state
