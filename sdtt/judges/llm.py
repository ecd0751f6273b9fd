"""LLM judges over a built study: paired (both orders) and single-transcript judges.

Each judge model reads what a human judge reads and writes the same
:class:`~sdtt.tasks.judgements.Judgement` records, tagged with the model. An
answer that cannot be read as one option is asked again (at most ``attempts`` times in
all) and then recorded as excluded with reason ``non_compliant``; it is never turned
into an option. A provider failure is recorded the same way with reason ``model_error``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from functools import partial
from typing import Any, Literal, TypeVar

from sdtt.dialogue.shown import AnswerNotes, Shown
from sdtt.errors import (
    InputError,
    ModelError,
    ModelOutputError,
    ProviderConnectionError,
    ProviderTimeoutError,
)
from sdtt.judges.batched import judge_each
from sdtt.judges.llm_options import (
    DEFAULT_ATTEMPTS,
    DEFAULT_CONCURRENCY,
    JudgeKind,
    OrderPolicy,
)
from sdtt.judges.parsing import parse_label, parse_option
from sdtt.judges.prompts import paired_prompt, single_prompt
from sdtt.models import asking
from sdtt.models.asking import Asked
from sdtt.models.base import GenerateConfig, Generator, ModelOutput, Prompt
from sdtt.models.model import CALL_LABEL, labelled_calls
from sdtt.seeds import seeded_rng
from sdtt.tasks.judgements import Judgement, JudgementKey
from sdtt.tasks.questionnaire import AnswerKey, KeyItem, Line, PairItem, Questionnaire

JUDGE_CONFIG = GenerateConfig(max_tokens=16, temperature=0.0)
RAW_LIMIT = 200
"""Characters of a non-compliant answer kept in the record (to see what went wrong)."""


T = TypeVar("T")


async def ask(
    model: Generator,
    make_prompt: Callable[[int], Prompt],
    parse: Callable[[str], T | None],
    *,
    attempts: int = DEFAULT_ATTEMPTS,
    config: GenerateConfig = JUDGE_CONFIG,
) -> Asked[T]:
    """Ask until ``parse`` reads an answer from the reply's :func:`answer_text`, at most
    ``attempts`` times (the loop is :func:`sdtt.models.asking.ask`)."""

    def read(output: ModelOutput) -> T:
        answer = parse(answer_text(output))
        if answer is None:
            raise ModelOutputError("the reply holds no answer that could be read.")
        return answer

    return await asking.ask(model, make_prompt, read, attempts=attempts, config=config)


def answer_text(output: ModelOutput) -> str:
    """The part of a judge's output that holds its answer.

    A completion model continues the prompt's "Answer:" cue and then keeps writing (the
    next chat, another question...), so only its first line is its answer.
    """
    if not output.continued_from:
        return output.text
    lines = output.text.strip().splitlines()
    return lines[0] if lines else ""


def swapped(item: PairItem) -> PairItem:
    """The pair with its chats in the other order, lines renumbered from 1."""
    first, second = item.chats[1], item.chats[0]
    renumbered: list[list[Line]] = [[], []]
    number = 1
    for index, lines in enumerate((first, second)):
        for line in lines:
            renumbered[index].append(line.model_copy(update={"number": number}))
            number += 1
    return item.model_copy(update={"chats": (renumbered[0], renumbered[1])})


def _exclusion(asked: Asked[str], attempts: int) -> str | None:
    if asked.error is not None:
        return f"model_error: {asked.error}"
    if asked.answer is None:
        return f"non_compliant: no readable answer in {attempts} attempt(s)"
    return None


_UNREACHABLE = tuple(
    f"model_error: {kind.__name__}: " for kind in (ProviderTimeoutError, ProviderConnectionError)
)


def _unreachable(record: Judgement) -> str | None:
    """The error of a judgement whose model call got no answer at all (timed out or
    could not connect), else None."""
    reason = record.exclusion_reason or ""
    for prefix in _UNREACHABLE:
        if reason.startswith(prefix):
            return reason.removeprefix(prefix)
    return None


def _shown(truth: KeyItem, extra: dict[str, Any]) -> Shown:
    """What an LLM judge was shown: the pair's, with its topic and how it was asked."""
    return truth.shown().model_copy(update={"topic": truth.topic, **extra})


def _judgement(
    model: Generator,
    item: PairItem,
    truth: KeyItem,
    study: str,
    judge_id: str,
    choice: Literal["A", "B"] | None,
    bot_position: Literal[1, 2],
    correct: bool | None,
    reason: str | None,
    extra: dict[str, Any],
    raw: list[str] | None = None,
) -> Judgement:
    """One LLM judgement record, in the same format as human answers."""
    return Judgement(
        study=study,
        judge_id=judge_id,
        judge_type="llm",
        judge_model=model.name,
        pair_id=item.id,
        pair_kind=truth.kind,
        choice=choice,
        bot_position=bot_position,
        correct=correct,
        excluded=reason is not None,
        exclusion_reason=reason,
        source=f"llm:{model.name}",
        shown=_shown(truth, extra),
        notes=None if raw is None else AnswerNotes(raw_answers=[t[:RAW_LIMIT] for t in raw]),
    )


Order = Literal["original", "swapped"]
ORDERS: tuple[Order, ...] = ("original", "swapped")


def _paired(item: PairItem, order: Order, attempt: int) -> Prompt:
    # The swapped view is made for the prompt and dropped: a batched judge holds every
    # pair's question at once, and the view's copied lines would outweigh its text.
    return paired_prompt(item if order == "original" else swapped(item), attempt=attempt)


def _single(
    lines: list[Line], example: tuple[list[Line], str] | None, user_a_person: bool, attempt: int
) -> Prompt:
    return single_prompt(lines, example=example, attempt=attempt, user_a_person=user_a_person)


def orders_for(policy: OrderPolicy, pair_id: str, seed: int) -> tuple[Order, ...]:
    """The orders a paired judge sees a pair in.

    ``both`` shows both (two judgements per pair, which measures position bias);
    ``random`` shows one order drawn per pair from ``seed`` (one judgement per pair, as
    in the paper, where each LLM judge counts once per pair).
    """
    if policy == "both":
        return ORDERS
    return (seeded_rng(seed, pair_id).choice(ORDERS),)


def judge_id_for(
    model_name: str, kind: JudgeKind, run: str | None = None, orders: OrderPolicy = "both"
) -> str:
    """The judge id LLM judgements carry: ``llm-<kind>:<model>[:random-order][:<run>]``.

    A paired judge asked one random order per pair is named apart from one asked both:
    scored together under one id, the first would weigh once per pair and the second
    twice, so the score tables keep every judge id (run) in a table of its own.
    """
    policy = ":random-order" if kind == "paired" and orders == "random" else ""
    return f"llm-{kind}:{model_name}{policy}" + (f":{run}" if run else "")


async def judge_pair_paired(
    model: Generator,
    item: PairItem,
    truth: KeyItem,
    *,
    study: str,
    judge_id: str,
    attempts: int = DEFAULT_ATTEMPTS,
    orders: Sequence[Order] = ORDERS,
    on_judgement: Callable[[Judgement], None] | None = None,
) -> list[Judgement]:
    """Ask about ``item`` in each of ``orders`` (the built order, swapped, or both): one
    judgement per order, each passed to ``on_judgement`` once all are answered.

    The orders are asked at once, so a batched judge sends both in one job.
    """
    pair = CALL_LABEL.get() or f"pair {item.id}"

    async def in_order(order: Order) -> Asked[str]:
        with labelled_calls(f"{pair}, order {order}"):
            return await ask(model, partial(_paired, item, order), parse_option, attempts=attempts)

    answers = await asking.all_at_once([partial(in_order, order) for order in orders])
    records = []
    for order, asked in zip(orders, answers, strict=True):
        position: Literal[1, 2] = truth.bot_position
        if order == "swapped":
            position = 2 if truth.bot_position == 1 else 1
        reason = _exclusion(asked, attempts)
        choice: Literal["A", "B"] | None = (
            "A" if asked.answer == "A" else "B" if asked.answer == "B" else None
        )
        correct = None if choice is None else (choice == "A") == (position == 1)
        extra: dict[str, Any] = {"judge_kind": "paired", "order": order}
        raw = list(asked.raw) if reason is not None else None
        record = _judgement(
            model, item, truth, study, judge_id, choice, position, correct, reason, extra, raw
        )
        records.append(record)
        if on_judgement is not None:
            on_judgement(record)
    return records


async def judge_pair_single(
    model: Generator,
    item: PairItem,
    truth: KeyItem,
    *,
    study: str,
    judge_id: str,
    example: tuple[list[Line], str] | None = None,
    attempts: int = DEFAULT_ATTEMPTS,
) -> Judgement:
    """Label each chat of ``item`` alone as human or AI; one record for the pair.

    The pair choice is the chat labelled AI when exactly one is; when both get the same
    label there is no pair choice and the record is excluded with reason ``tie``, but
    its per-chat labels still count in the conditional rates.
    """
    labels: list[str | None] = []
    raws: list[str] = []
    error: str | None = None
    # Both chats are asked at once, so a batched judge sends them in one job.
    answers = await asking.all_at_once(
        [
            partial(
                ask,
                model,
                partial(_single, lines, example, item.user_a_person),
                parse_label,
                attempts=attempts,
            )
            for lines in item.chats
        ]
    )
    for asked in answers:
        labels.append(asked.answer)
        raws += asked.raw
        error = error or asked.error
    reason: str | None = None
    choice: Literal["A", "B"] | None = None
    if error is not None:
        reason = f"model_error: {error}"
    elif None in labels:
        reason = f"non_compliant: no readable answer in {attempts} attempt(s)"
    elif labels == ["ai", "human"]:
        choice = "A"
    elif labels == ["human", "ai"]:
        choice = "B"
    else:
        reason = f"tie: both chats labelled {labels[0]}"
    correct = None if choice is None else choice == truth.correct_choice
    extra: dict[str, Any] = {
        "judge_kind": "one-shot" if example is not None else "zero-shot",
        "labels": {"1": labels[0], "2": labels[1]},
    }
    unread = raws if reason is not None and not reason.startswith("tie") else None
    return _judgement(
        model,
        item,
        truth,
        study,
        judge_id,
        choice,
        truth.bot_position,
        correct,
        reason,
        extra,
        unread,
    )


def one_shot_example(
    questionnaire: Questionnaire, key: AnswerKey
) -> tuple[tuple[list[Line], str], str]:
    """The labelled example of the one-shot judge: the bot chat of the first catch pair,
    or of the first pair when there is none. Returns the example and its pair id, which
    the one-shot judge then skips."""
    items = sorted(questionnaire.items, key=lambda i: key.items[i.id].kind != "catch")
    if not items:
        raise InputError("the questionnaire has no pairs to take an example from.")
    item = items[0]
    truth = key.items[item.id]
    return (item.chats[truth.bot_position - 1], "ai"), item.id


async def run_llm_judge(
    model: Generator,
    questionnaire: Questionnaire,
    key: AnswerKey,
    *,
    kind: JudgeKind = "paired",
    run: str | None = None,
    attempts: int = DEFAULT_ATTEMPTS,
    concurrency: int = DEFAULT_CONCURRENCY,
    on_done: Callable[[int, int], None] | None = None,
    orders: OrderPolicy = "both",
    seed: int = 0,
    settled: Collection[JudgementKey] = (),
    on_judgement: Callable[[Judgement], None] | None = None,
) -> list[Judgement]:
    """Judge every pair of a study; records come back in questionnaire order.

    ``orders`` and ``seed`` choose the orders of a paired judge (see :func:`orders_for`).
    ``on_done(done, total)`` is called after each pair (for progress display). Answers
    whose :func:`~sdtt.tasks.judgements.judgement_key` is in ``settled`` (an
    earlier run's) are not asked again; ``on_judgement`` receives each new judgement as
    soon as it is made, so a caller can write it before the next one arrives.
    """
    if attempts < 1:
        raise InputError("attempts must be at least 1.", field="attempts")
    judge_id = judge_id_for(model.name, kind, run, orders)
    example = None
    skip: set[str] = set()
    if kind == "one-shot":
        example, skipped = one_shot_example(questionnaire, key)
        skip.add(skipped)
    # Under a judge design a pair has two views (bot first, bot second); an LLM judge
    # reads the first, and asks both orders itself when told to.
    items = [
        item
        for item in questionnaire.items
        if item.id not in skip and not (item.id in key.items and key.items[item.id].is_mirror)
    ]
    for item in items:
        if item.id not in key.items:
            raise InputError(
                f"the answer key has no entry for pair {item.id}.",
                hint="Use the answer key written together with this questionnaire.",
            )

    def unsettled(item: PairItem, wanted: Sequence[Order | None]) -> list[Order | None]:
        return [o for o in wanted if (key.study, judge_id, item.id, o) not in settled]

    if settled:
        items = [
            item
            for item in items
            if unsettled(item, orders_for(orders, item.id, seed) if kind == "paired" else [None])
        ]
    results: dict[str, list[Judgement]] = {}
    answered = False

    def judged(record: Judgement) -> None:
        # A server that never answers would cost every pair the full timeout and its
        # retries: when the first calls get no answer at all, stop (what was judged is
        # kept, and a rerun resumes), as simulate and topics do.
        nonlocal answered
        failure = _unreachable(record)
        if failure is not None and not answered:
            raise ModelError(
                f"{failure} Stopped judging: no call has been answered, so the other "
                f"pairs would fail alike. When {model.name} answers again, run the same "
                "command again: it resumes."
            )
        answered = answered or failure is None
        if on_judgement is not None:
            on_judgement(record)

    async def one(item: PairItem) -> None:
        with labelled_calls(f"pair {item.id}"):
            truth = key.items[item.id]
            if kind == "paired":
                found = await judge_pair_paired(
                    model,
                    item,
                    truth,
                    study=key.study,
                    judge_id=judge_id,
                    attempts=attempts,
                    orders=[o for o in unsettled(item, orders_for(orders, item.id, seed)) if o],
                    on_judgement=judged,
                )
            else:
                found = [
                    await judge_pair_single(
                        model,
                        item,
                        truth,
                        study=key.study,
                        judge_id=judge_id,
                        example=example,
                        attempts=attempts,
                    )
                ]
                judged(found[0])
            results[item.id] = found
            if on_done is not None:
                on_done(len(results), len(items))

    await judge_each(items, one, concurrency=concurrency)
    return [record for item in items for record in results[item.id]]
