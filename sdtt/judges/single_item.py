"""LLM judges of single-item tasks: the papers' zero-shot and one-shot prompts, every
speaker judged.

Zhang, Kreiman et al. asked ChatGPT "Is A a human or AI? Is B a human or AI?" about one
conversation (zero-shot), or first showed one whole labelled conversation ("In this
example, A is Human; B is AI") and then asked the same (one-shot). The prompts below keep
their words; one line is added that asks for one answer line per speaker, so an answer
can be read without guessing. A judge model reads what a human judge reads (the task's
item, no ids, models or names) and its answers are
:class:`~sdtt.questionnaires.single_task.SingleAnswer` records like a human judge's, so
scoring is the same. An unreadable answer is asked again (``attempts`` in all), then
recorded as excluded, never turned into a verdict.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Literal

import trio

from sdtt.errors import InputError
from sdtt.judges.llm import ask
from sdtt.judges.llm_options import DEFAULT_ATTEMPTS, DEFAULT_CONCURRENCY
from sdtt.judges.prompts import completion_cue
from sdtt.models.base import GenerateConfig, Prompt
from sdtt.models.model import Model
from sdtt.questionnaires.single_task import ItemView, SingleAnswer, SingleTask, Verdict

SingleKind = Literal["zero-shot", "one-shot"]
KINDS: tuple[SingleKind, ...] = ("zero-shot", "one-shot")
CONFIG = GenerateConfig(max_tokens=24, temperature=0.0)
RAW_LIMIT = 200

ZERO_SHOT = (
    "This is a conversation between agent A and agent B. Please read this conversation "
    "between A and B and output the identity of agents A and B. Is A a human or AI? Is B "
    "a human or AI? Please output a binary answer and choose between human and AI."
)
"""The papers' zero-shot prompt; the conversation follows after "Conversation:"."""
ONE_SHOT = (
    "This is a conversation between agent A and agent B. Please read this conversation "
    "between A and B and output the identity of agents A and B. Are A a human or AI? Are "
    "B a human or AI? Please output a binary answer and choose between human and AI. Here "
    "is an example:"
)
"""The papers' one-shot prompt, up to the example conversation."""
ITEM_INSTRUCTIONS = (
    "You will read one item. For each part named below, say whether a human or an AI "
    "wrote it. Please output a binary answer and choose between human and AI."
)
"""For items that are not chats (a cue and its association...): the same question."""
RETRY_NOTE = "Your previous reply could not be read. Reply with exactly the lines asked for."
_WORDS: dict[str, Verdict] = {
    "human": "human",
    "person": "human",
    "ai": "machine",
    "machine": "machine",
    "bot": "machine",
}
_WORD = "human|person|ai|machine|bot"
_FORMATTING = re.compile(r"[*_`#>\"'“”‘’]")


def item_text(item: ItemView) -> str:
    """The item as plain text: chat lines as ``A: text``, parts as ``Label: text``."""
    if item.image is not None:
        raise InputError(
            "an item with an image cannot be judged by a text-only prompt.",
            field="image",
            hint="Judge image items with a vision-capable judge.",
        )
    lines = [f"{part.label}: {part.text}" for part in item.parts]
    lines += [f"{line.speaker}: {line.text}" for line in item.lines]
    return "\n".join(lines)


def answer_format(item: ItemView) -> str:
    """The added line: one answer line per judged speaker."""
    return "Answer with one line per speaker and nothing else:\n" + "\n".join(
        f"{judged.key}: human or AI" for judged in item.judged
    )


def _truth_words(item: ItemView, truth: Mapping[str, Verdict]) -> str:
    return "; ".join(
        f"{judged.key} is {'Human' if truth[judged.key] == 'human' else 'AI'}"
        for judged in item.judged
        if judged.key in truth
    )


def single_item_prompt(
    item: ItemView,
    *,
    example: tuple[ItemView, Mapping[str, Verdict]] | None = None,
    attempt: int = 1,
) -> Prompt:
    """The prompt for one item; ``example`` is a labelled item shown first (one-shot)."""
    task = answer_format(item)
    if attempt > 1:
        task = f"{task}\n\n{RETRY_NOTE}"
    if not item.lines:
        instructions = ITEM_INSTRUCTIONS
        dialogue = item_text(item)
    elif example is None:
        instructions = ZERO_SHOT
        dialogue = "Conversation: " + item_text(item)
    else:
        shown, truth = example
        instructions = (
            f"{ONE_SHOT}\n{item_text(shown)}\nIn this example, {_truth_words(shown, truth)}. "
            "Thus, output the binary labels of agent A and agent B for the following "
            "conversation:"
        )
        dialogue = item_text(item)
    return Prompt(
        instructions=instructions, dialogue=dialogue, task=task, continue_with=completion_cue(task)
    )


def parse_verdicts(text: str, keys: Sequence[str]) -> dict[str, Verdict] | None:
    """The verdict on every speaker in ``keys`` when ``text`` gives each exactly one
    (``A: human`` lines, or ``A is human``), else None."""
    cleaned = _FORMATTING.sub("", text)
    found: dict[str, Verdict] = {}
    for key in keys:
        # "A: human or AI" (the format echoed back) names no verdict.
        pattern = re.compile(
            rf"(?<![\w-]){re.escape(key)}\s*(?::|=|-|\bis\b)\s*(?:an?\s+)?({_WORD})\b"
            rf"(?!\s*(?:or|/)\s*(?:an?\s+)?(?:{_WORD})\b)",
            re.IGNORECASE,
        )
        said = {_WORDS[match.group(1).lower()] for match in pattern.finditer(cleaned)}
        if len(said) != 1:
            return None
        found[key] = said.pop()
    return found


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
    judge_id = f"llm:{model.name}:{kind}"
    shown = [
        item
        for item in (task.items if items is None else items)
        if example is None or item.id != example[0].id
    ]
    results: dict[str, SingleAnswer] = {}
    limiter = trio.CapacityLimiter(max(1, concurrency))

    async def one(item: ItemView) -> None:
        async with limiter:
            answer = await judge_item(
                model, task, item, kind=kind, judge_id=judge_id, example=example, attempts=attempts
            )
        results[item.id] = answer
        if on_answer is not None:
            on_answer(answer)

    async with trio.open_nursery() as nursery:
        for item in shown:
            nursery.start_soon(one, item)
    return [results[item.id] for item in shown]
