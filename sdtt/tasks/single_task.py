"""The single-item task judges receive, and the answers that come back from it.

In a single-item test (Zhang, Kreiman et al.) a judge sees ONE item at a time, a
conversation or a conversation's first exchanges, a cue and its association, an image and
its caption, and says for each speaker whether a human or a machine wrote it. This module
holds what a judge sees and nothing else (opaque ids, the item's text, the questions):
:mod:`sdtt.single` builds it from items and keeps the researcher's key. Every survey tool
that can field it (its ``single_files`` and ``read_single`` in :mod:`sdtt.surveys`) shows
an item with :func:`item_html` and turns a response into an answer with
:func:`item_answer`, and LLM judges answer it too.

Question names inside a survey are built from the item id: ``<item>v<n>`` the verdict on
the n-th judged speaker, ``<item>c<n>`` its confidence, ``<item>why`` the reason and
``<item>topic`` the topic check.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from sdtt.dialogue.record_files import TableKind, read_records
from sdtt.errors import InputError
from sdtt.tasks.ids import by_id
from sdtt.tasks.layout import chat_html, escape_html, scale_points
from sdtt.tasks.questionnaire import Line, Question

TASK_VERSION = 1
ANSWERS_VERSION = 1
ANSWERS_FORMAT = "single-item answers"
Verdict = Literal["human", "machine"]
VERDICTS: tuple[tuple[Verdict, str], ...] = (("human", "Human"), ("machine", "Machine"))
"""Each verdict's code and the label judges read."""
CONFIDENCE = (1, 5)
"""The confidence scale: 1 (guessing) to 5 (certain)."""
CONFIDENCE_ENDS = ("guessing", "certain")


class Part(BaseModel):
    """A labelled piece of text of an item that is not a chat (a cue, an association)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    label: str
    text: str


class Judged(BaseModel):
    """One speaker the judge labels: its key (``A``, ``B``, or a part's label), how the
    questions name it, and its own verdict question when the task's does not fit (a
    part: "Was this caption written by a human or a machine?")."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str
    label: str
    question: str | None = None


class ItemView(BaseModel):
    """One item as a judge sees it: a chat's numbered lines, labelled parts and/or an
    image, the speakers to label and the topic check."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z][a-z0-9]{5,11}$", description="Opaque item id.")
    lines: list[Line] = Field(default_factory=list, description="A chat, speakers A and B.")
    parts: list[Part] = Field(default_factory=list, description="Labelled texts.")
    image: str | None = Field(default=None, description="An image's URL or data URI.")
    judged: list[Judged] = Field(min_length=1)
    topic: Question | None = None

    @model_validator(mode="after")
    def _shows_something(self) -> ItemView:
        if not (self.lines or self.parts or self.image):
            raise ValueError("an item shows a chat, labelled parts or an image")
        return self

    def verdict_name(self, index: int) -> str:
        """The survey question name of the verdict on the ``index``-th judged speaker (1-based)."""
        return f"{self.id}v{index}"

    def confidence_name(self, index: int) -> str:
        """The survey question name of the confidence in that verdict."""
        return f"{self.id}c{index}"

    @property
    def reason_name(self) -> str:
        """The survey question name of the item's free-text reason."""
        return f"{self.id}why"

    @property
    def topic_name(self) -> str:
        """The survey question name of the item's topic check."""
        return f"{self.id}topic"


class SingleTask(BaseModel):
    """Everything a single-item judge receives, and nothing else."""

    model_config = ConfigDict(extra="forbid")

    version: int = TASK_VERSION
    id: str = Field(description="Opaque task id (judges may see it).")
    title: str
    intro: str
    end_text: str
    question: str = Field(
        description="The verdict question; '{speaker}' stands for the speaker's label."
    )
    confidence: bool = Field(description="Whether each verdict asks for a confidence.")
    reason: bool = Field(description="Whether each item asks for a free-text reason.")
    items: list[ItemView]
    forms: list[list[str]] = Field(
        default_factory=list,
        description="Item ids each judge group sees, in order; empty when every judge sees "
        "every item.",
    )

    def item(self, item_id: str) -> ItemView:
        """The item with this id; :class:`InputError` when there is none."""
        return by_id(self.items, item_id, kind="item", where="single-item task")

    def question_for(self, judged: Judged) -> str:
        """The verdict question about one speaker."""
        return judged.question or self.question.replace("{speaker}", judged.label)

    def form_items(self) -> list[list[ItemView]]:
        """Each form's items in order (one form of every item when there are no forms)."""
        forms = self.forms or [[item.id for item in self.items]]
        return [[self.item(item_id) for item_id in form] for form in forms]


class SingleAnswer(BaseModel):
    """One judge's answer to one item, human or LLM alike, as imported or judged."""

    model_config = ConfigDict(extra="forbid")

    version: int = ANSWERS_VERSION
    task: str
    judge_id: str
    judge_type: Literal["human", "llm"] = "human"
    judge_model: str | None = Field(default=None, description="provider/model of an LLM judge.")
    judge_kind: str | None = Field(default=None, description="LLM: 'zero-shot' or 'one-shot'.")
    item: str
    verdicts: dict[str, Verdict | None] = Field(
        description="By judged speaker key; None when the speaker was left unanswered."
    )
    confidence: dict[str, int] = Field(default_factory=dict)
    reason: str | None = None
    topic: str | None = Field(default=None, description="The topic option code chosen.")
    seconds: float | None = None
    exclusion_reason: str | None = Field(
        default=None, description="Why the answer cannot be used (LLM: non-compliant...)."
    )
    where: str = Field(default="", description="File and line or row it came from.")


SINGLE_ANSWERS = TableKind(SingleAnswer, ANSWERS_VERSION, "answer", ANSWERS_FORMAT)
"""What single-item answer files hold."""


def read_single_answers(path: str | Path) -> list[SingleAnswer]:
    """The answers in a file ``sdtt single import`` or ``sdtt single judge`` wrote."""
    return read_records(path, SINGLE_ANSWERS)


CHAT_TITLE = "Conversation"
IMAGE_STYLE = "display:block;max-width:100%;max-height:60vh;margin:0 0 12px 0;"


def item_html(item: ItemView) -> str:
    """The item as one escaped HTML fragment: image, labelled parts, chat."""
    parts: list[str] = ["<div>"]
    if item.image is not None:
        parts.append(f'<img src="{escape_html(item.image)}" alt="" style="{IMAGE_STYLE}">')
    for part in item.parts:
        parts.append(
            '<p style="margin:0 0 8px 0;font-size:17px;">'
            f"<b>{escape_html(part.label)}:</b> "
            f'<span style="overflow-wrap:anywhere;">{escape_html(part.text)}</span></p>'
        )
    if item.lines:
        parts.append(chat_html(CHAT_TITLE, item.lines))
    parts.append("</div>")
    return "".join(parts)


def confidence_labels() -> list[tuple[int, str]]:
    """Each confidence value with its label (the ends described)."""
    return scale_points(*CONFIDENCE, CONFIDENCE_ENDS)


_VERDICT_CODES: dict[str, Verdict] = {code: code for code, _ in VERDICTS}


def _verdict(value: Any, where: str, name: str) -> Verdict | None:
    if value in (None, ""):
        return None
    verdict = _VERDICT_CODES.get(str(value).strip().lower())
    if verdict is None:
        raise InputError(
            f"{where}: answer {value!r} to {name} is neither 'human' nor 'machine'.",
            field=name,
            hint="Import answers with the task folder they were exported from.",
        )
    return verdict


def _confidence(value: Any, where: str, name: str) -> int | None:
    if value in (None, ""):
        return None
    try:
        number = int(str(value))
    except ValueError:
        number = CONFIDENCE[0] - 1
    if not CONFIDENCE[0] <= number <= CONFIDENCE[1]:
        raise InputError(
            f"{where}: confidence {value!r} in {name} is not a whole number from "
            f"{CONFIDENCE[0]} to {CONFIDENCE[1]}.",
            field=name,
        )
    return number


def item_answer(
    task: SingleTask,
    item: ItemView,
    judge_id: str,
    given: dict[str, Any],
    *,
    seconds: float | None,
    where: str,
) -> SingleAnswer:
    """One item's answer from its questions' raw values, checked."""
    verdicts: dict[str, Verdict | None] = {}
    confidence: dict[str, int] = {}
    for index, judged in enumerate(item.judged, start=1):
        verdicts[judged.key] = _verdict(given.get(item.verdict_name(index)), where, judged.key)
        level = _confidence(given.get(item.confidence_name(index)), where, judged.key)
        if level is not None:
            confidence[judged.key] = level
    topic = given.get(item.topic_name)
    known = item.topic is not None and item.topic.choice_for(str(topic)) is not None
    if topic not in (None, "") and item.topic is not None and not known:
        raise InputError(
            f"{where}: topic answer {topic!r} is not an option of item {item.id}.",
            field=item.topic_name,
        )
    reason = given.get(item.reason_name)
    return SingleAnswer(
        task=task.id,
        judge_id=judge_id,
        item=item.id,
        verdicts=verdicts,
        confidence=confidence,
        reason=str(reason).strip() or None if reason not in (None, "") else None,
        topic=None if topic in (None, "") else str(topic),
        seconds=seconds,
        where=where,
    )


def item_shown(item: ItemView, given: dict[str, Any]) -> bool:
    """Whether a response names any question of ``item`` (an item a judge was not shown
    gives no answer)."""
    numbers = range(1, len(item.judged) + 1)
    names = [item.verdict_name(i) for i in numbers] + [item.confidence_name(i) for i in numbers]
    return any(name in given for name in [*names, item.topic_name, item.reason_name])
