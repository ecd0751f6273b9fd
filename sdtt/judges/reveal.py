"""LLM judges in reveal mode: a pair shown turn by turn, a belief asked after each turn.

At every step the judge model reads the pair as a reveal-mode human judge sees it (the
first ``t`` turns of both chats, :mod:`sdtt.tasks.reveal_turns`) and is asked how likely,
from 0 to 100, User B of chat 1 is the human. Each step is a fresh question (the model
does not see its earlier answers), so a step's belief depends on what was revealed only.

Two traces come from the same calls: the *stated* belief (the number written, read by
:func:`~sdtt.judges.parsing.parse_probability`, which never guesses: an unreadable answer
is asked again, then recorded as a missing point) and, when ``logprobs`` is on and the
provider gives token log-probabilities, the *logprob* belief: the expected value of the
number over the likeliest tokens at the answer's place (:func:`logprob_belief`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection
from dataclasses import dataclass
from functools import partial

from sdtt.beliefs.traces import BeliefPoint, BeliefSource, BeliefTrace
from sdtt.dialogue.shown import AnswerNotes
from sdtt.errors import InputError
from sdtt.judges.batched import judge_each
from sdtt.judges.llm import RAW_LIMIT, ask
from sdtt.judges.llm_options import DEFAULT_ATTEMPTS
from sdtt.judges.parsing import parse_probability
from sdtt.judges.prompts import completion_cue, paired_instructions
from sdtt.models.base import GenerateConfig, Generator, ModelOutput, Prompt
from sdtt.tasks.layout import pair_text
from sdtt.tasks.questionnaire import AnswerKey, KeyItem, PairItem, Questionnaire
from sdtt.tasks.reveal_turns import new_text, reveal_turns, revealed

TraceKey = tuple[str, str, str, str | None]
REVEAL_TASK = (
    "You have seen turn {turn} of {turns} of both chats; more may follow. So far, how "
    "likely is it that User B in Chat 1 is the human (and User B in Chat 2 the AI)? "
    "0 means Chat 1's User B is surely the AI, 100 that Chat 2's User B surely is. "
    "Answer with a whole number from 0 to 100 only."
)
REVEAL_RETRY = "Your previous reply could not be read. Reply with one whole number from 0 to 100."
TOP_LOGPROBS = 10
MIN_MASS = 0.5
"""Share of probability the numeric tokens must hold for a log-probability belief."""


def reveal_prompt(item: PairItem, turn: int, turns: int, *, attempt: int = 1) -> Prompt:
    """The question after ``turn`` turns of ``item`` (chat 1 first, as built)."""
    task = REVEAL_TASK.format(turn=turn, turns=turns)
    if attempt > 1:
        task = f"{task}\n\n{REVEAL_RETRY}"
    return Prompt(
        instructions=paired_instructions(item),
        dialogue=pair_text(revealed(item, turn)),
        task=task,
        continue_with=completion_cue(task),
    )


def _number_token(token: str) -> int | None:
    text = token.strip()
    if not text.isdigit():
        return None
    value = int(text)
    return value if 0 <= value <= 100 else None


def logprob_belief(output: ModelOutput, stated: float | None) -> float | None:
    """The expected belief over the likeliest number tokens where the answer starts.

    Only when the stated number is a single token (so the alternatives at its place are
    whole answers, not first digits) and the numeric alternatives hold at least
    :data:`MIN_MASS` of the probability; otherwise None, never an estimate from part of
    a number.
    """
    if output.logprobs is None or stated is None:
        return None
    for position in output.logprobs:
        if not position.token.strip():
            continue
        if _number_token(position.token) != stated:
            return None
        weights: dict[int, float] = {}
        for token, logprob in position.top or ((position.token, position.logprob),):
            value = _number_token(token)
            if value is not None:
                weights[value] = weights.get(value, 0.0) + math.exp(logprob)
        mass = sum(weights.values())
        if mass < MIN_MASS:
            return None
        return round(sum(v * w for v, w in weights.items()) / mass, 3)
    return None


@dataclass(frozen=True)
class Step:
    """What asking at one step gave."""

    stated: float | None
    logprob: float | None
    raw: tuple[str, ...]
    error: str | None = None


async def ask_step(
    model: Generator, item: PairItem, turn: int, turns: int, *, attempts: int, logprobs: bool
) -> Step:
    """Ask for the belief after ``turn`` turns, at most ``attempts`` times."""
    config = GenerateConfig(
        max_tokens=8, temperature=0.0, top_logprobs=TOP_LOGPROBS if logprobs else 0
    )
    asked = await ask(
        model,
        lambda attempt: reveal_prompt(item, turn, turns, attempt=attempt),
        parse_probability,
        attempts=attempts,
        config=config,
    )
    logprob = None if asked.answer is None else logprob_belief(asked.outputs[-1], asked.answer)
    return Step(asked.answer, logprob, asked.raw, error=asked.error)


def reveal_judge_id(model_name: str, source: BeliefSource, run: str | None = None) -> str:
    """``llm-reveal:<model>`` (stated) or ``llm-reveal-logprob:<model>``, plus ``:<run>``."""
    kind = "reveal" if source == "stated" else "reveal-logprob"
    return f"llm-{kind}:{model_name}" + (f":{run}" if run else "")


def _trace(
    model: Generator,
    item: PairItem,
    truth: KeyItem,
    study: str,
    judge_id: str,
    source: BeliefSource,
    steps: list[Step],
) -> BeliefTrace:
    error = next((s.error for s in steps if s.error is not None), None)
    points = [
        BeliefPoint(
            turn=turn,
            belief=step.stated if source == "stated" else step.logprob,
            source=source,
            text=new_text(item, turn),
        )
        for turn, step in enumerate(steps, start=1)
    ]
    shown = truth.shown().model_copy(
        update={"topic": truth.topic, "judge_kind": "reveal", "order": "original"}
    )
    notes = AnswerNotes(belief_source=source)
    unread = [t for t, s in enumerate(steps, 1) if s.stated is None and s.error is None]
    if unread:
        notes = notes.model_copy(
            update={
                "unreadable_turns": unread,
                "raw_answers": [s.raw[-1][:RAW_LIMIT] for s in steps if s.raw][-3:],
            }
        )
    return BeliefTrace(
        study=study,
        judge_id=judge_id,
        judge_type="llm",
        judge_model=model.name,
        item_id=item.id,
        pair_kind=truth.kind,
        target_human=truth.bot_position == 2,
        bot_position=truth.bot_position,
        points=points,
        excluded=error is not None,
        exclusion_reason=None if error is None else f"model_error: {error}",
        source=f"llm:{model.name}",
        shown=shown,
        notes=notes,
    )


def is_model_error(trace: BeliefTrace) -> bool:
    """True when a provider failure, not the judge, produced this (excluded) trace."""
    return trace.excluded and (trace.exclusion_reason or "").startswith("model_error")


def settled_trace_keys(traces: Collection[BeliefTrace]) -> set[TraceKey]:
    """Keys a resumed run must not ask again (model errors are asked again)."""
    return {t.key() for t in traces if not is_model_error(t)}


async def run_reveal_judge(
    model: Generator,
    questionnaire: Questionnaire,
    key: AnswerKey,
    *,
    run: str | None = None,
    attempts: int = DEFAULT_ATTEMPTS,
    concurrency: int = 4,
    logprobs: bool = False,
    settled: Collection[TraceKey] = (),
    on_trace: Callable[[BeliefTrace], None] | None = None,
    on_done: Callable[[int, int], None] | None = None,
) -> list[BeliefTrace]:
    """Reveal every pair of a study to ``model``; traces come back in questionnaire order.

    One stated trace per pair, and a logprob trace when ``logprobs`` is on. Pairs whose
    stated trace key is in ``settled`` are skipped; ``on_trace`` gets each new trace as
    soon as its pair is done.
    """
    if attempts < 1:
        raise InputError("attempts must be at least 1.", field="attempts")
    stated_id = reveal_judge_id(model.name, "stated", run)
    sources: tuple[BeliefSource, ...] = ("stated", "logprob") if logprobs else ("stated",)
    items = [
        item
        for item in questionnaire.items
        if not (item.id in key.items and key.items[item.id].is_mirror)
        and (key.study, stated_id, item.id, "original") not in settled
    ]
    for item in items:
        if item.id not in key.items:
            raise InputError(
                f"the answer key has no entry for pair {item.id}.",
                hint="Use the answer key written together with this questionnaire.",
            )
    results: dict[str, list[BeliefTrace]] = {}

    async def one(item: PairItem) -> None:
        turns = reveal_turns(item)
        step = partial(ask_step, model, item, turns=turns, attempts=attempts, logprobs=logprobs)
        steps = [await step(turn) for turn in range(1, turns + 1)]
        truth = key.items[item.id]
        found = [
            _trace(
                model,
                item,
                truth,
                key.study,
                reveal_judge_id(model.name, source, run),
                source,
                steps,
            )
            for source in sources
        ]
        results[item.id] = found
        for trace in found:
            if on_trace is not None:
                on_trace(trace)
        if on_done is not None:
            on_done(len(results), len(items))

    await judge_each(items, one, concurrency=concurrency)
    return [trace for item in items for trace in results[item.id]]
