"""LLM judges of single-item tasks: every item asked, every speaker judged.

The prompts are the papers' zero-shot and one-shot ones
(:mod:`sdtt.judges.single_prompts`). A judge's answers are
:class:`~sdtt.tasks.single_task.SingleAnswer` records like a human judge's, so
scoring is the same. An unreadable answer is asked again (``attempts`` in all), then
recorded as excluded, never turned into a verdict; a provider failure is recorded the
same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from sdtt.errors import InputError
from sdtt.judges.batched import judge_each
from sdtt.judges.llm import ask
from sdtt.judges.llm_options import DEFAULT_ATTEMPTS, DEFAULT_CONCURRENCY
from sdtt.judges.single_prompts import SingleKind, parse_verdicts, single_item_prompt
from sdtt.models.base import GenerateConfig
from sdtt.models.model import Model
from sdtt.tasks.single_task import ItemView, SingleAnswer, SingleTask, Verdict

CONFIG = GenerateConfig(max_tokens=24, temperature=0.0)
RAW_LIMIT = 200
"""Characters of an unreadable answer kept in the record (to see what went wrong)."""


def judge_id_for(model: str, kind: SingleKind) -> str:
    """The judge id of a model answering with a prompt kind."""
    return f"llm:{model}:{kind}"


async def judge_item(
    model: Model,
    task: SingleTask,
    item: ItemView,
    *,
    kind: SingleKind,
    judge_id: str,
    example: tuple[ItemView, Mapping[str, Verdict]] | None = None,
    attempts: int = DEFAULT_ATTEMPTS,
) -> SingleAnswer:
    """One LLM answer to one item."""
    keys = [judged.key for judged in item.judged]
    asked = await ask(
        model,
        lambda attempt: single_item_prompt(item, example=example, attempt=attempt),
        lambda text: parse_verdicts(text, keys),
        attempts=attempts,
        config=CONFIG,
    )
    exclusion = None
    if asked.error is not None:
        exclusion = f"model_error: {asked.error}"
    elif asked.answer is None:
        exclusion = f"non_compliant: no readable answer in {attempts} attempt(s)"
    raw = asked.raw[-1][:RAW_LIMIT] if asked.raw and asked.answer is None else None
    verdicts: dict[str, Verdict | None] = {key: None for key in keys}
    if asked.answer is not None:
        verdicts.update(asked.answer)
    return SingleAnswer(
        task=task.id,
        judge_id=judge_id,
        judge_type="llm",
        judge_model=model.name,
        judge_kind=kind,
        item=item.id,
        verdicts=verdicts,
        reason=raw,
        exclusion_reason=exclusion,
        where=f"{model.name} {kind}",
    )


async def judge_task(
    model: Model,
    task: SingleTask,
    *,
    kind: SingleKind = "zero-shot",
    example: tuple[ItemView, Mapping[str, Verdict]] | None = None,
    items: Sequence[ItemView] | None = None,
    attempts: int = DEFAULT_ATTEMPTS,
    concurrency: int = DEFAULT_CONCURRENCY,
    on_answer: Callable[[SingleAnswer], None] | None = None,
) -> list[SingleAnswer]:
    """Answers to every item of ``task`` (or ``items``), in task order. A one-shot judge
    needs its ``example`` (an item and its truth), which it is not asked about."""
    if kind == "one-shot" and example is None:
        raise InputError("a one-shot judge needs a labelled example item.", field="example")
    if attempts < 1:
        raise InputError("attempts must be at least 1.", field="attempts")
    judge_id = judge_id_for(model.name, kind)
    shown = [
        item
        for item in (task.items if items is None else items)
        if example is None or item.id != example[0].id
    ]
    results: dict[str, SingleAnswer] = {}

    async def one(item: ItemView) -> None:
        answer = await judge_item(
            model, task, item, kind=kind, judge_id=judge_id, example=example, attempts=attempts
        )
        results[item.id] = answer
        if on_answer is not None:
            on_answer(answer)

    await judge_each(shown, one, concurrency=concurrency)
    return [results[item.id] for item in shown]
