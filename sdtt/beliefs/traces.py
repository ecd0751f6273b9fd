"""The belief-trace table: how sure one judge was, after every turn, that a side is human.

Every judge that reports a belief as the conversation unfolds writes the same record: a
questionnaire judge moving a 0-100 slider after each revealed turn, an LLM judge asked
for a probability each turn (stated, or read from token log-probabilities), a live judge's
slider, or a market's price. A trace is one judge on one item (a pair, a single chat or a
room); its points hold the belief that the *target* is human. For a pair the target is
User B of chat 1, so 0 means "chat 1 is the AI" and 100 "chat 2 is the AI".

The last point with a belief is the judge's verdict: :func:`to_judgement` turns a pair's
trace into an ordinary :class:`~sdtt.tasks.judgements.Judgement`, so traces
score through the pass-rate code like every other answer. A belief of exactly 50 at the
end picks no side; such a judgement is kept and excluded with reason ``tie``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from sdtt.dialogue.record_files import (
    TableKind,
    append_records,
    iter_records,
    read_records,
    write_records,
)
from sdtt.dialogue.shown import AnswerNotes, Shown, ShownTurnCounts, migrate_answer
from sdtt.tasks.judgements import Judgement, JudgeType, PairKind

TRACE_VERSION = 1
"""Format version of belief-trace records; bump on breaking changes."""

BeliefSource = Literal["stated", "logprob", "slider", "price"]
ItemKind = Literal["pair", "single", "room"]
UNDECIDED = 50.0
"""A final belief of exactly this picks neither side."""


class BeliefPoint(BaseModel):
    """One reading of a judge's belief."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    turn: int | None = Field(
        default=None, ge=0, description="Turns revealed when the belief was given (1-based)."
    )
    message: int | None = Field(
        default=None, ge=0, description="Messages revealed or sent so far (live and markets)."
    )
    time_s: float | None = Field(
        default=None, ge=0, description="Seconds since the trace started, when known."
    )
    belief: float | None = Field(
        ge=0,
        le=100,
        description="0-100: how likely the target is human. None when the judge gave no "
        "readable answer at this point (never guessed).",
    )
    ask: float | None = Field(
        default=None,
        ge=0,
        le=100,
        description="Markets: the price to buy one human security (the ask) when recorded; "
        "``belief`` is then the bid, the price a human security sells for.",
    )
    source: BeliefSource = Field(
        description="'stated' (an LLM's written number), 'logprob' (from token "
        "log-probabilities), 'slider' (a person's slider) or 'price' (a market's price)."
    )
    text: str | None = Field(
        default=None,
        description="What had just been revealed (the target side's messages of this turn), "
        "for listing the moments that moved belief; researcher-side only.",
    )
    reason: str | None = Field(
        default=None,
        description="Why the judge said so at this point, when the judge gave a reason "
        "(per-exchange verdicts with reasons); researcher-side only.",
    )


class BeliefTrace(ShownTurnCounts, BaseModel):
    """One judge's beliefs about one item, in the order given."""

    model_config = ConfigDict(extra="forbid")

    version: int = Field(default=TRACE_VERSION, description="Record format version.")
    study: str = Field(description="Name of the study the item belongs to.")
    judge_id: str = Field(description="A participant id, an LLM judge run id, or a room id.")
    judge_type: JudgeType = Field(description="'human' or 'llm'.")
    judge_model: str | None = Field(default=None, description="provider/model of an LLM judge.")
    item_id: str = Field(description="The opaque pair (or chat, or room) id the judge saw.")
    item_kind: ItemKind = Field(default="pair", description="'pair', 'single' or 'room'.")
    pair_kind: PairKind = Field(default="test", description="'test' or 'catch'.")
    target: str = Field(
        default="chat 1",
        description="Whose humanity the belief is about: 'chat 1' (User B of chat 1 of a "
        "pair), 'chat' (User B of a single chat) or 'target' (a room's target).",
    )
    target_human: bool = Field(description="The truth: is the target human?")
    bot_position: Literal[1, 2] | None = Field(
        default=None, description="Pairs: which chat had the bot."
    )
    points: list[BeliefPoint] = Field(default_factory=list, description="In the order given.")
    excluded: bool = Field(default=False, description="True when analyses should leave it out.")
    exclusion_reason: str | None = Field(default=None, description="Why it is excluded.")
    source: str = Field(description="Where it came from, e.g. 'surveyjs:results.json'.")
    shown: Shown = Field(
        default_factory=Shown,
        description="What the judge was shown, as judgements carry it (conversation ids, "
        "the bot's condition, the live turns revealed live_from..live_to, judge kind, "
        "order).",
    )
    notes: AnswerNotes | None = Field(
        default=None, description="What the record says about the answer (raw answers...)."
    )

    @model_validator(mode="before")
    @classmethod
    def _older_form(cls, data: Any) -> Any:
        # Records written before kept a `condition` mapping (and X, N, N + X on top).
        return migrate_answer(data)

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.excluded and not self.exclusion_reason:
            raise ValueError("an excluded trace needs an exclusion_reason")
        if not self.excluded and self.exclusion_reason:
            raise ValueError("exclusion_reason is set but excluded is false")
        if self.item_kind == "pair" and self.bot_position is None:
            raise ValueError("a pair's trace needs bot_position")
        if (
            self.item_kind == "pair"
            and self.target == "chat 1"
            and self.target_human != (self.bot_position == 2)
        ):
            # Scoring reads bot_position and calibration reads target_human: they must
            # tell the same truth, or one of them is wrong.
            raise ValueError(
                f"target_human is {str(self.target_human).lower()} but bot_position is "
                f"{self.bot_position}: the target (chat 1) is human exactly when the bot is "
                "in chat 2"
            )
        return self

    @property
    def final_belief(self) -> float | None:
        """The last belief given, or None when the judge never gave one."""
        return next((p.belief for p in reversed(self.points) if p.belief is not None), None)

    def belief_at(self, turn: int) -> float | None:
        """The belief held after ``turn`` turns: the last one given at or before it."""
        held = None
        for point in self.points:
            if point.turn is not None and point.turn <= turn and point.belief is not None:
                held = point.belief
        return held

    def key(self) -> tuple[str, str, str, str | None]:
        """What one trace answers: study, judge, item and order (as judgements)."""
        return (self.study, self.judge_id, self.item_id, self.shown.order)


def verdict(belief: float | None) -> bool | None:
    """The side a belief picks: True (target human), False (AI) or None (none, or 50)."""
    if belief is None or belief == UNDECIDED:
        return None
    return belief > UNDECIDED


def to_judgement(trace: BeliefTrace) -> Judgement:
    """The ordinary pair judgement a pair's trace ends in (its last belief).

    Only pair traces convert; single chats and rooms raise ValueError: their verdict is
    recorded on its own (a live game's verdict is a single-witness judgement), so a
    trace of one would count the same judge twice.
    """
    if trace.item_kind != "pair" or trace.bot_position is None:
        raise ValueError(f"a {trace.item_kind} trace has no pair judgement")
    human = verdict(trace.final_belief)
    # Target = chat 1: "chat 1 is human" means chat 2 holds the AI, option B.
    choice: Literal["A", "B"] | None = None if human is None else ("B" if human else "A")
    correct = None if choice is None else (choice == "A") == (trace.bot_position == 1)
    reason = trace.exclusion_reason
    if reason is None and trace.final_belief is None:
        reason = "non_compliant: no readable belief"
    elif reason is None and choice is None:
        reason = "tie: final belief 50"
    return Judgement(
        study=trace.study,
        judge_id=trace.judge_id,
        judge_type=trace.judge_type,
        judge_model=trace.judge_model,
        pair_id=trace.item_id,
        pair_kind=trace.pair_kind,
        choice=choice,
        bot_position=trace.bot_position,
        correct=correct,
        response_time_s=next(
            (p.time_s for p in reversed(trace.points) if p.time_s is not None), None
        ),
        excluded=reason is not None,
        exclusion_reason=reason,
        source=trace.source,
        shown=trace.shown,
        notes=(trace.notes or AnswerNotes()).model_copy(
            update={"final_belief": trace.final_belief}
        ),
    )


def judgements_from_traces(traces: Iterable[BeliefTrace]) -> list[Judgement]:
    """The pair judgements of ``traces`` (other kinds are left out)."""
    return [to_judgement(t) for t in traces if t.item_kind == "pair"]


def write_traces(path: str | Path, traces: Iterable[BeliefTrace]) -> int:
    """Write traces to a new JSONL file (replacing ``path``); returns how many."""
    return write_records(path, traces)


TRACES = TableKind(BeliefTrace, TRACE_VERSION, "belief trace", "belief-trace format")
"""What belief-trace files hold."""


def append_traces(path: str | Path, traces: Iterable[BeliefTrace]) -> int:
    """Append traces to a JSONL file, each flushed as written; returns how many."""
    return append_records(path, traces)


def read_traces(path: str | Path) -> list[BeliefTrace]:
    """Read a trace file; a bad record raises :class:`InputError` naming its line."""
    return read_records(path, TRACES)


_FIRST_LINE_LIMIT = 1 << 24
"""Characters of a first line read to tell traces from judgements (a file of one endless
line, cut off or not JSONL at all, is then refused by the reader)."""


def is_trace_file(path: str | Path) -> bool:
    """True when the first record of a JSONL file is a belief trace (not a judgement)."""
    path = Path(path)
    if not path.is_file():  # a device or pipe: the reader refuses it in one line
        return False
    try:
        with path.open(encoding="utf-8") as handle:
            first = handle.readline(_FIRST_LINE_LIMIT)
    except (OSError, UnicodeDecodeError):
        return False
    return '"points"' in first and '"item_id"' in first


def load_traces(
    paths: Sequence[str | Path],
    *,
    progress: Callable[[Path], Callable[[int], None] | None] | None = None,
) -> list[BeliefTrace]:
    """Read trace files for analysis, keeping the first trace of each key; ``progress``
    gives each file's callback of the bytes read so far."""
    seen: set[tuple[str, str, str, str | None]] = set()
    traces: list[BeliefTrace] = []
    for path in paths:
        told = progress(Path(path)) if progress is not None else None
        for trace in iter_records(path, TRACES, progress=told):
            if trace.excluded or trace.key() not in seen:
                seen.add(trace.key())
                traces.append(trace)
    return traces
