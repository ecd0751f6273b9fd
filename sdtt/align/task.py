"""The rating task: items drawn from chats, the pairs to rate and the forms judges get.

Two files come out of a build, like a questionnaire study: ``rating-task.json`` holds
everything a judge receives (opaque ids, chat lines, the question and scale) and nothing
else; ``rating-key.json`` says, for the researcher, where each item came from and whether
its side B was a bot or a person.
"""

from __future__ import annotations

import functools
import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from sdtt.dialogue.condition import Condition, migrate_record
from sdtt.dialogue.message import Message, Transcript, segment_turns
from sdtt.dialogue.store import check_version, read_transcripts, validate_record
from sdtt.errors import InputError
from sdtt.files import parse_json, write_text_atomic
from sdtt.questionnaires.leaks import GENERIC_TERMS, find_terms, source_terms, unique_terms
from sdtt.seeds import seeded_rng
from sdtt.tasks.design import rating_forms
from sdtt.tasks.ids import OpaqueIds
from sdtt.tasks.questionnaire import Line, SourceInfo, load_key, sha256_text
from sdtt.tasks.rating_spec import RatingSource, RatingSpec, Side
from sdtt.tasks.rating_task import TASK_VERSION, RatingItem, RatingPair, RatingTask
from sdtt.tasks.study import StudySpec

TASK_FILE = "rating-task.json"
KEY_FILE = "rating-key.json"


class ItemKey(BaseModel):
    """The truth about one item (researcher-only)."""

    model_config = ConfigDict(extra="forbid")

    side: Side
    conversation: str
    source: str
    condition: Condition | None = Field(
        default=None, description="What its conversation was run as (None: a human chat)."
    )
    meta: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _old_meta(cls, data: Any) -> Any:
        # Keys written before `condition` existed kept it as loose keys of `meta`.
        return migrate_record(data)


class RatingKey(BaseModel):
    """Where each item came from; never shown to judges."""

    model_config = ConfigDict(extra="forbid")

    version: int = TASK_VERSION
    task: str = Field(description="Researcher-side task name (the study's name).")
    task_id: str
    task_sha256: str = ""
    items: dict[str, ItemKey]


@dataclass
class RatingBuild:
    """What a build made, with warnings about chat text naming a model or persona."""

    task: RatingTask
    key: RatingKey
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Candidate:
    lines: tuple[tuple[str, str], ...]
    side: Side
    conversation: str
    source: str
    transcript: Transcript


def _units(messages: Sequence[Message], spec: RatingSpec) -> list[list[tuple[str, str]]]:
    """The candidate items of one conversation as ``(speaker, text)`` lines."""
    turns = segment_turns(messages)
    if spec.unit == "message":
        return [[("B", m.text)] for t in turns for m in t.response if m.text.strip()]
    if spec.unit == "burst":
        return [[("B", m.text) for m in t.response] for t in turns if t.response]
    complete = [t for t in turns if t.response]
    units = []
    for start in range(0, len(complete) - spec.excerpt_turns + 1, spec.excerpt_turns):
        chunk = complete[start : start + spec.excerpt_turns]
        lines = [("A" if m.side == "user" else "B", m.text) for t in chunk for m in t.messages]
        units.append(lines)
    return units


def _resolve(path: str, base: Path) -> Path:
    candidate = Path(path)
    if not candidate.is_absolute() and not candidate.exists():
        candidate = base / candidate
    return candidate


def _read_source(path: str, base: Path, where: str) -> list[Transcript]:
    file, _, wanted = path.partition("#")
    resolved = _resolve(file, base)
    if not resolved.exists():
        raise InputError(f"{where}: transcript file {file!r} not found.", field="rating.sources")
    transcripts = read_transcripts(resolved)
    if wanted:
        transcripts = [t for t in transcripts if t.id == wanted]
        if not transcripts:
            raise InputError(
                f"{where}: {file!r} has no conversation {wanted!r}.", field="rating.sources"
            )
    return transcripts


@functools.cache
def _corpus() -> Any:
    from sdtt.personas.corpus import load_corpus

    return load_corpus()


def _corpus_transcript(info: SourceInfo) -> Transcript | None:
    """A corpus conversation of a built study (its key holds no file for those)."""
    from sdtt.personas.corpus import SOURCE_NAME

    senders = info.meta.get("senders")
    if info.meta.get("source") != SOURCE_NAME or not isinstance(senders, dict):
        return None
    wanted = info.meta.get("conversation_id", info.id)
    for conversation in _corpus().raw_conversations:
        if conversation.id == wanted:
            transcript: Transcript = conversation.transcript(senders.get("response"))
            return transcript
    return None


def _source_pools(
    source: RatingSource, base: Path, where: str
) -> list[tuple[Side, str, list[Transcript]]]:
    """``(side, label, conversations)`` pools of one source."""
    if source.path is not None:
        assert source.side is not None
        return [(source.side, source.path, _read_source(source.path, base, where))]
    assert source.study is not None
    key = load_key(_resolve(source.study, base))
    pools: dict[Side, list[Transcript]] = {"bot": [], "human": []}
    seen: set[tuple[str, str]] = set()
    for entry in key.items.values():
        if entry.kind != "test":
            continue
        for side, info in (("bot", entry.bot), ("human", entry.human)):
            if (side, info.id) in seen:
                continue
            seen.add((side, info.id))
            if info.path is not None:
                found = _read_source(f"{info.path}#{info.id}", base, where)
            else:
                corpus = _corpus_transcript(info)
                found = [] if corpus is None else [corpus]
            pools["bot" if side == "bot" else "human"] += found
    return [(side, f"{source.study}:{side}", found) for side, found in pools.items() if found]


def _researcher_texts(spec: RatingSpec) -> list[tuple[str, str]]:
    return [
        ("rating.title", spec.title),
        ("rating.intro", spec.intro),
        ("rating.end_text", spec.end_text),
        ("rating.question", spec.question),
        ("rating.min_label", spec.min_label),
        ("rating.max_label", spec.max_label),
    ]


def build_rating_task(study: StudySpec, base: Path) -> RatingBuild:
    """Draw items from the sources of ``study.rating`` and lay out pairs and forms.

    ``base`` is the folder relative source paths are read from (the spec's). Names of
    models, personas or conversations in researcher-written text are an error; in chat
    text, a warning (chats are shown as they are).
    """
    spec = study.rating
    if spec is None:
        raise InputError(
            "the study spec has no [rating] section.",
            hint="Add one (see 'Judge alignment' in the README).",
        )
    rng = seeded_rng(study.seed, "rating")
    candidates: list[_Candidate] = []
    terms: list[str] = []
    for number, source in enumerate(spec.sources, start=1):
        where = f"rating source {number}"
        for side, label, transcripts in _source_pools(source, base, where):
            pool: list[_Candidate] = []
            for transcript in transcripts:
                terms += [*source_terms(transcript.condition, transcript.meta), transcript.id]
                for lines in _units(transcript.messages, spec):
                    pool.append(_Candidate(tuple(lines), side, transcript.id, label, transcript))
            if not pool:
                raise InputError(
                    f"{where} ({label}) has no {spec.unit} to draw items from.",
                    field="rating.sources",
                )
            candidates += rng.sample(pool, min(spec.items_per_source, len(pool)))
    unique: dict[tuple[tuple[str, str], ...], _Candidate] = {}
    for candidate in candidates:
        unique.setdefault(candidate.lines, candidate)
    chosen = list(unique.values())
    if len(chosen) < 3:
        raise InputError(
            f"only {len(chosen)} distinct item(s) were drawn; a rating task needs at least 3.",
            field="rating.items_per_source",
            hint="Raise items_per_source or add sources.",
        )
    rng.shuffle(chosen)
    ids = OpaqueIds(rng)
    specific = unique_terms(terms)
    errors = []
    for where, said in _researcher_texts(spec):
        errors += [
            f"{where} contains {t!r}, which judges must not see."
            for t in find_terms(said, specific)
        ]
    if errors:
        raise InputError(" ".join(errors), hint="Reword it so judges learn nothing of the setup.")
    warnings = [
        f"{where} contains {t!r}; it may tell judges what is tested."
        for where, said in _researcher_texts(spec)
        for t in find_terms(said, GENERIC_TERMS)
    ]
    items: list[RatingItem] = []
    keys: dict[str, ItemKey] = {}
    for candidate in chosen:
        item_id = ids.new("i")
        shown = [
            Line(number=n, speaker="A" if speaker == "A" else "B", text=text)
            for n, (speaker, text) in enumerate(candidate.lines, start=1)
        ]
        items.append(RatingItem(id=item_id, lines=shown))
        keys[item_id] = ItemKey(
            side=candidate.side,
            conversation=candidate.conversation,
            source=candidate.source,
            condition=candidate.transcript.condition,
            meta=dict(candidate.transcript.meta),
        )
        for line in shown:
            warnings += [
                f"item {item_id} line {line.number} (chat text) mentions {t!r}; judges will see it."
                for t in find_terms(line.text, specific)
            ]
    pairs = []
    for index, (a, b) in enumerate(itertools.combinations(items, 2)):
        # Which item comes first alternates, so neither side is always on top.
        first, second = (a, b) if index % 2 == 0 else (b, a)
        pairs.append(RatingPair(id=ids.new("r"), first=first.id, second=second.id))
    rng.shuffle(pairs)
    forms: list[list[str]] = []
    if spec.pairs_per_judge is not None:
        forms = rating_forms(
            [p.id for p in pairs], spec.pairs_per_judge, spec.ratings_per_pair, rng
        )
    task = RatingTask(
        id=ids.new("t"),
        title=spec.title,
        intro=spec.intro,
        end_text=spec.end_text,
        question=spec.question,
        scale_min=spec.scale_min,
        scale_max=spec.scale_max,
        min_label=spec.min_label,
        max_label=spec.max_label,
        items=items,
        pairs=pairs,
        forms=forms,
    )
    key = RatingKey(task=study.name, task_id=task.id, items=keys)
    return RatingBuild(task, key, warnings)


def task_json(task: RatingTask) -> str:
    """The task file's text."""
    return json.dumps(task.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"


def save_rating_task(folder: Path, task: RatingTask, key: RatingKey) -> list[Path]:
    """Write ``rating-task.json`` and ``rating-key.json`` into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    text = task_json(task)
    key = key.model_copy(update={"task_sha256": sha256_text(text)})
    write_text_atomic(folder / TASK_FILE, text)
    write_text_atomic(
        folder / KEY_FILE,
        json.dumps(key.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n",
    )
    return [folder / TASK_FILE, folder / KEY_FILE]


def _read(path: Path, what: str) -> Any:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError(
            f"{what} not found.", path=path, hint="Build it first with 'sdtt align build'."
        ) from None
    data = parse_json(text, path)
    if isinstance(data, dict):
        check_version(data, TASK_VERSION, path, None, what=f"{what} version")
    return data


def load_rating_task(folder: Path) -> RatingTask:
    """Read ``rating-task.json`` from a task folder (or the file itself)."""
    path = folder / TASK_FILE if folder.is_dir() else folder
    return validate_record(RatingTask, _read(path, "rating task"), path)


def load_rating_key(folder: Path, task: RatingTask | None = None) -> RatingKey:
    """Read ``rating-key.json``; with ``task``, check that they belong together."""
    path = folder / KEY_FILE
    key = validate_record(RatingKey, _read(path, "rating key"), path)
    if task is not None and key.task_id != task.id:
        raise InputError(
            f"belongs to rating task {key.task_id!r}, not {task.id!r}.",
            path=path,
            hint="Use the key written by the same 'sdtt align build'.",
        )
    return key
