"""From items to a fielded single-item study: the task judges see and the key they never see.

:func:`build_study` gives every item an opaque id, turns it into an
:class:`~sdtt.tasks.single_task.ItemView` (numbered lines, no times, no
names), adds the topic check (the item's topic among five, as in the papers), and hands
out forms with :func:`sdtt.tasks.design.item_forms`. The study folder holds
``single-task.json`` (what judges and LLM judges receive) and ``single-key.json`` (the
truth per item, the right topic, the source, cut and class); exporters read the task
only.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sdtt.dialogue.render import fold_text
from sdtt.dialogue.store import validation_problem
from sdtt.errors import InputError
from sdtt.files import parse_json, read_text_file, write_text_atomic
from sdtt.questionnaires.leaks import find_terms, meta_terms, unique_terms
from sdtt.seeds import seeded_rng
from sdtt.single.items import SingleItem
from sdtt.tasks.design import item_forms
from sdtt.tasks.ids import OpaqueIds, by_id
from sdtt.tasks.layout import SPEAKER_LABELS
from sdtt.tasks.questionnaire import Choice, Line, Question
from sdtt.tasks.single_task import ItemView, Judged, SingleTask, Verdict

KEY_VERSION = 1
TASK_FILE = "single-task.json"
KEY_FILE = "single-key.json"
TOPIC_CHOICES = 5
DOMAINS = (
    "fashion",
    "politics",
    "books",
    "sports",
    "general entertainment",
    "music",
    "science",
    "technology",
    "food",
    "movies",
)
"""The papers' ten conversation domains: topic-check distractors when items have fewer
topics of their own."""
TITLE = "Human or machine?"
INTRO = (
    "You will read a series of short texts, one at a time. Most are conversations between "
    "two speakers, A and B, sometimes only their first few messages. Each speaker is either "
    "a person or a computer program.\n\n"
    "For each speaker, say whether you think a human or a machine wrote their messages. "
    "Then say what the conversation was mostly about. There are no trick questions about "
    "spelling or grammar: go with your impression."
)
PARTS_INTRO = (
    "You will see a series of short items, one at a time, such as a word and another word "
    "someone associated with it, or a picture and its description. Each was written by a "
    "person or by a computer program.\n\n"
    "For each item, say whether you think a human or a machine wrote the part asked about. "
    "Go with your impression."
)
"""The introduction when no item is a chat."""
END_TEXT = "Thank you! Your answers have been recorded."
QUESTION = "Is {speaker} a human or a machine?"
PART_QUESTION = "Was {part} written by a human or a machine?"
TOPIC_QUESTION = "What was this conversation mostly about?"


@dataclass(frozen=True)
class StudySettings:
    """How a single-item study is built."""

    forms: int = 1
    per_form: int = 20
    catch_per_form: int = 0
    confidence: bool = False
    reason: bool = False
    topic_check: bool = True
    seed: int = 0


class KeyEntry(BaseModel):
    """The truth about one item of the task."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="The opaque id judges see.")
    item: str = Field(description="The item's readable id.")
    source: str
    cut: int | None
    klass: str
    truth: dict[str, Verdict]
    topic: str | None = Field(default=None, description="The right topic option code.")
    catch: str | None = None
    meta: dict[str, object] = Field(default_factory=dict)


class SingleKey(BaseModel):
    """The answer key of a single-item task (never shown to judges)."""

    model_config = ConfigDict(extra="forbid")

    version: int = KEY_VERSION
    task: str
    items: list[KeyEntry]
    settings: dict[str, object] = Field(default_factory=dict)

    def entry(self, item_id: str) -> KeyEntry:
        """The key of item ``item_id``; :class:`InputError` when there is none."""
        return by_id(self.items, item_id, kind="item", where="study's key")


def _judged(item: SingleItem, key: str) -> Judged:
    if item.lines and key in ("A", "B"):
        return Judged(key=key, label=SPEAKER_LABELS["A" if key == "A" else "B"])
    # A part (an association, a caption): "this caption", asked whether it was written by one.
    label = f"this {key.lower()}"
    return Judged(key=key, label=label, question=PART_QUESTION.replace("{part}", label))


def _topic_question(
    name: str, topic: str, pool: Sequence[str], rng: random.Random
) -> tuple[Question, str]:
    others = [t for t in pool if t.lower() != topic.lower()]
    shown = [topic, *rng.sample(others, min(TOPIC_CHOICES - 1, len(others)))]
    rng.shuffle(shown)
    choices = [Choice(value=f"t{n}", label=text) for n, text in enumerate(shown, start=1)]
    right = next(c.value for c in choices if c.label == topic)
    return Question(name=name, text=TOPIC_QUESTION, choices=choices), right


def _view(item: SingleItem, item_id: str, topic: Question | None) -> ItemView:
    return ItemView(
        id=item_id,
        lines=[
            Line(number=n, speaker=s.speaker, text=fold_text(s.text))
            for n, s in enumerate(item.lines, start=1)
        ],
        parts=item.parts,
        image=item.image,
        judged=[_judged(item, key) for key in item.judged],
        topic=topic,
    )


def build_study(
    items: Sequence[SingleItem],
    settings: StudySettings,
    *,
    catch: Sequence[SingleItem] = (),
    task_id: str | None = None,
) -> tuple[SingleTask, SingleKey]:
    """The task and its key: every item (and catch item) under an opaque id, forms handed
    out by the balanced design."""
    if not items:
        raise InputError("there are no items to build a study from.", field="items")
    ids = [item.id for item in [*items, *catch]]
    if len(set(ids)) != len(ids):
        raise InputError("two items share an id.", field="id", hint="Give every item its own id.")
    rng = seeded_rng(settings.seed, "single-task")
    opaque = OpaqueIds(rng)
    pool = sorted({item.topic for item in items if item.topic})
    if len(pool) < TOPIC_CHOICES:
        pool = sorted({*pool, *DOMAINS})
    views: list[ItemView] = []
    entries: list[KeyEntry] = []
    by_readable: dict[str, str] = {}
    for item in [*items, *catch]:
        item_id = opaque.new("s")
        by_readable[item.id] = item_id
        topic_question, right = None, None
        if settings.topic_check and item.topic and item.lines:
            topic_question, right = _topic_question(f"{item_id}topic", item.topic, pool, rng)
        views.append(_view(item, item_id, topic_question))
        entries.append(
            KeyEntry(
                id=item_id,
                item=item.id,
                source=item.source,
                cut=item.cut,
                klass=item.klass,
                truth=dict(item.truth),
                topic=right,
                catch=item.catch,
                meta=dict(item.meta),
            )
        )
    forms = item_forms(
        items,
        forms=settings.forms,
        per_form=settings.per_form,
        catch=catch,
        catch_per_form=settings.catch_per_form,
        seed=settings.seed,
    )
    task_id = task_id or f"single-{opaque.new('t')}"
    task = SingleTask(
        id=task_id,
        title=TITLE,
        intro=INTRO if any(item.lines for item in items) else PARTS_INTRO,
        end_text=END_TEXT,
        question=QUESTION,
        confidence=settings.confidence,
        reason=settings.reason,
        items=views,
        forms=[[by_readable[item_id] for item_id in form] for form in forms],
    )
    key = SingleKey(
        task=task_id,
        items=entries,
        settings={
            "forms": settings.forms,
            "per_form": settings.per_form,
            "catch_per_form": settings.catch_per_form,
            "confidence": settings.confidence,
            "reason": settings.reason,
            "topic_check": settings.topic_check,
            "seed": settings.seed,
        },
    )
    return task, key


def chat_leaks(items: Sequence[SingleItem], *, limit: int = 5) -> list[str]:
    """Warnings for item text that names the item's model or persona (shown as written:
    someone may well have typed "are you a bot?"), at most ``limit`` and a count."""
    warnings: list[str] = []
    for item in items:
        terms = unique_terms(meta_terms(item.meta))
        texts = [s.text for s in item.lines] + [part.text for part in item.parts]
        for term in sorted({t for text in texts for t in find_terms(text, terms)}):
            warnings.append(f"item {item.id}: its text mentions {term!r}; judges will see it.")
    if len(warnings) > limit:
        warnings = [*warnings[:limit], f"... and {len(warnings) - limit} more such items."]
    return warnings


def save_study(folder: Path, task: SingleTask, key: SingleKey) -> None:
    """Write the task and its key into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    write_text_atomic(folder / TASK_FILE, task.model_dump_json(indent=2) + "\n")
    write_text_atomic(folder / KEY_FILE, key.model_dump_json(indent=2) + "\n")


def _load(path: Path, model: type[SingleTask] | type[SingleKey]) -> SingleTask | SingleKey:
    if not path.exists():
        raise InputError(
            "does not exist.", path=path, hint="Build the study first: sdtt single build."
        )
    data = parse_json(read_text_file(path, what=path.name), path)
    try:
        return model.model_validate(data)
    except ValidationError as error:
        field, problem = validation_problem(error)
        raise InputError(problem, path=path, field=field) from None


def load_task(folder: Path) -> SingleTask:
    """The task of a built study."""
    task = _load(folder / TASK_FILE, SingleTask)
    assert isinstance(task, SingleTask)
    return task


def load_key(folder: Path) -> SingleKey:
    """The key of a built study."""
    key = _load(folder / KEY_FILE, SingleKey)
    assert isinstance(key, SingleKey)
    return key
