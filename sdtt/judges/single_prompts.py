"""What single-item LLM judges are told, and how their answers are read.

Zhang, Kreiman et al. asked ChatGPT "Is A a human or AI? Is B a human or AI?" about one
conversation (zero-shot), or first showed one whole labelled conversation ("In this
example, A is Human; B is AI") and then asked the same (one-shot). The prompts below keep
their words; one line is added that asks for one answer line per speaker, so an answer
can be read without guessing. A judge model reads what a human judge reads (the task's
item: no ids, models or names). :mod:`sdtt.judges.single_item` asks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Literal

from sdtt.errors import InputError
from sdtt.judges.prompts import completion_cue
from sdtt.models.base import Prompt
from sdtt.tasks.single_task import ItemView, Verdict

SingleKind = Literal["zero-shot", "one-shot"]

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
