"""The built questionnaire (what judges receive) and its answer key (what they must not).

``build`` writes two files into a study folder:

- ``questionnaire.json``: a :class:`Questionnaire`. Every exporter reads only this file,
  so no export can contain what it does not hold: opaque ids, the rendered lines of each
  pair, the questions and their options. No transcript ids, model or persona names,
  topics' sources, or which conversation is the bot.
- ``answer-key.json``: an :class:`AnswerKey`, for the researcher only. It maps each pair
  id to the bot's position, the correct options, X and the source conversations.
  Importers need it to score answers. Never upload it to a survey tool.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from sdtt.dialogue.condition import Condition, migrate_record
from sdtt.dialogue.shown import Shown, View
from sdtt.dialogue.store import check_version, validate_record
from sdtt.errors import InputError
from sdtt.files import parse_json, read_text_file, write_text_atomic
from sdtt.tasks.study import QualitySpec

QUESTIONNAIRE_VERSION = 1

"""Which turns of the bot conversation a pair shows (see :class:`KeyItem`)."""
QUESTIONNAIRE_FILE = "questionnaire.json"
KEY_FILE = "answer-key.json"

Speaker = Literal["A", "B"]

JUDGEMENT_TEXT = "User A is a person in both chats. In which chat is User B the AI?"
JUDGEMENT_TEXT_SIMULATED = (
    "User A is not always a person: in some chats of this study a computer program plays "
    "User A. In which chat is User B the AI?"
)
"""The judgement question when a program plays User A in a chat of the study: the same
text on every pair, so it never points at one."""
USER_A_CLAIM = re.compile(
    r"\bUser A('s)?\b[^.?!]*\b(is|are)\b( always| both| also)? (a )?(person|people|human)",
    re.IGNORECASE,
)
"""A sentence saying User A is a person: false when a program plays User A."""


def judgement_text(user_a_person: bool) -> str:
    """The judgement question: it says User A is a person only when that is true."""
    return JUDGEMENT_TEXT if user_a_person else JUDGEMENT_TEXT_SIMULATED


JUDGEMENT_CHOICES: tuple[tuple[str, str], ...] = (
    ("A", "Chat 1: User B in chat 1 is the AI and User B in chat 2 is a person."),
    ("B", "Chat 2: User B in chat 1 is a person and User B in chat 2 is the AI."),
)
TOPIC_TEXT = "What were both chats of this pair about?"

# Suffixes that turn a pair id into the names of its other questions; all alphanumeric so
# the names are valid question codes in every tool.
VIEW_SUFFIX = "view"
TOPIC_SUFFIX = "topic"
TIME_SUFFIX = "time"
STRATEGY_NAME = "strategy"


class Choice(BaseModel):
    """One answer option: a stable code and the label judges read."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    value: str = Field(pattern=r"^[A-Za-z0-9]{1,5}$")
    label: str


class Question(BaseModel):
    """A question: single choice when ``choices`` is set, otherwise free text."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9]{0,19}$")
    text: str
    choices: list[Choice] | None = None
    required: bool = True
    multiline: bool = False

    @property
    def is_choice(self) -> bool:
        """True for a single-choice question."""
        return self.choices is not None

    def choice_for(self, value: str) -> Choice | None:
        """The option with code ``value``."""
        return next((c for c in self.choices or () if c.value == value), None)


class Line(BaseModel):
    """One numbered message line as judges see it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    number: int = Field(ge=1, description="Numbered across both chats of a pair.")
    speaker: Speaker
    time: str | None = Field(default=None, description="Shown timestamp, or None if hidden.")
    text: str = Field(description="The message text, raw (escaped only when rendered).")


class PairItem(BaseModel):
    """One pair: two chats (lines numbered across both), the judgement and topic questions."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z][a-z0-9]{5,11}$", description="Opaque pair id.")
    chats: tuple[list[Line], list[Line]]
    judgement: Question
    topic: Question | None = None
    pair: str | None = Field(
        default=None,
        description="Under a judge design, the id of the pair this is a view of (its two "
        "views show the same chats, swapped); None otherwise.",
    )
    user_a_person: bool = Field(
        default=True,
        description="Whether User A is a person in every chat of the study; False when a "
        "program (a simulated interrogator) plays User A in some chat, so that no text a "
        "judge reads (questions, LLM-judge prompts) says otherwise. The same on every pair.",
    )

    @property
    def view_name(self) -> str:
        """Name of the element that shows the two chats."""
        return self.id + VIEW_SUFFIX

    @property
    def time_name(self) -> str:
        """Name of the timing element (tools that time pages separately)."""
        return self.id + TIME_SUFFIX


class Form(BaseModel):
    """What one judge group sees under a judge design: some pairs, in this order."""

    model_config = ConfigDict(extra="forbid")

    number: int = Field(ge=1, description="Form number, 1 to the number of forms.")
    items: list[str] = Field(min_length=1, description="Ids of the pairs shown, in order.")


class Questionnaire(BaseModel):
    """Everything a judge receives, and nothing else."""

    model_config = ConfigDict(extra="forbid")

    version: int = QUESTIONNAIRE_VERSION
    id: str = Field(pattern=r"^[a-z][a-z0-9]{5,11}$", description="Opaque questionnaire id.")
    title: str
    intro: str
    end_text: str
    demographics: list[Question] = Field(default_factory=list)
    items: list[PairItem]
    strategy: Question | None = None
    randomise_order: bool = True
    capture_prolific: bool = True
    completion_url: str | None = None
    forms: list[Form] = Field(
        default_factory=list,
        description="Judge design: each judge gets one form's pairs; empty when every "
        "judge sees every pair.",
    )

    @model_validator(mode="after")
    def _forms_show_known_pairs(self) -> Self:
        known = {item.id for item in self.items}
        for form in self.forms:
            unknown = [item_id for item_id in form.items if item_id not in known]
            if unknown:
                raise ValueError(f"form {form.number} shows unknown pair(s) {', '.join(unknown)}")
        return self

    def item(self, pair_id: str) -> PairItem | None:
        """The pair with id ``pair_id``."""
        return next((item for item in self.items if item.id == pair_id), None)

    def form_questionnaire(self, form: Form) -> Questionnaire:
        """The questionnaire one judge group receives: only the form's pairs, in its order.

        Its pair order is the design's (balanced across forms), so tools do not shuffle it.
        """
        by_id = {item.id: item for item in self.items}
        return self.model_copy(
            update={
                "items": [by_id[item_id] for item_id in form.items],
                "forms": [],
                "randomise_order": False,
            }
        )

    def question_names(self) -> list[str]:
        """Every question and element name, in order (for uniqueness checks)."""
        names = [q.name for q in self.demographics]
        for item in self.items:
            names += [item.view_name, item.judgement.name]
            if item.topic is not None:
                names.append(item.topic.name)
        if self.strategy is not None:
            names.append(self.strategy.name)
        return names


class SourceInfo(BaseModel):
    """Where one side of a pair came from (researcher-only)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    path: str | None = None
    topic: str | None = None
    turns: int = Field(ge=0, description="Complete turns the conversation has.")
    condition: Condition | None = Field(
        default=None, description="What the conversation was run as (None: a human chat)."
    )
    meta: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _old_meta(cls, data: Any) -> Any:
        # Keys written before `condition` existed kept it as loose keys of `meta`.
        return migrate_record(data)


class KeyItem(BaseModel):
    """The truth about one pair."""

    model_config = ConfigDict(extra="forbid")

    pair_id: str
    kind: Literal["test", "catch"]
    x_turns: int = Field(description="X: live turns of the bot conversation shown.")
    view: View = Field(
        default="last",
        description="Which turns were shown: the last X, the whole live chat, or the first "
        "k (a length-curve chunk).",
    )
    pseudo_turns: int | None = Field(
        default=None,
        ge=0,
        description="N: pseudo-dialogue turns in the bot's prompt (None: unknown, older files).",
    )
    live_from: int | None = Field(
        default=None, ge=1, description="First live turn shown (1-based)."
    )
    live_to: int | None = Field(default=None, ge=1, description="Last live turn shown (1-based).")
    human_from: int | None = Field(
        default=None,
        ge=1,
        description="First turn of the human conversation shown (1-based): for a test pair "
        "the bot's live_from, so both windows sit at the same place in their chats.",
    )
    human_to: int | None = Field(
        default=None, ge=1, description="Last turn of the human conversation shown (1-based)."
    )
    total_turns: int | None = Field(
        default=None,
        ge=0,
        description="Total turn index shown: N + live_to (None when N is unknown).",
    )
    bot_position: Literal[1, 2]
    correct_choice: Literal["A", "B"]
    topic: str | None = None
    topic_value: str | None = Field(default=None, description="Code of the right topic option.")
    bot: SourceInfo
    human: SourceInfo
    notes: list[str] = Field(default_factory=list)
    pair: str | None = Field(
        default=None,
        description="Under a judge design, the pair this item shows (the id of its first "
        "view; its two views differ only in which chat is the bot's); None otherwise.",
    )

    @property
    def is_mirror(self) -> bool:
        """True for the second view of a pair (the bot on the other side)."""
        return self.pair is not None and self.pair != self.pair_id

    def shown(self) -> Shown:
        """What a judge of this pair is shown: the bot's condition, the conversations,
        the view and its live turns (and under a judge design, which view)."""
        return Shown(
            bot=self.bot.condition,
            bot_conversation=self.bot.id,
            human_conversation=self.human.id,
            view=self.view,
            live_from=self.live_from,
            live_to=self.live_to,
            design_view=self.pair_id if self.pair is not None else None,
        )


class AnswerKey(BaseModel):
    """The secret half of a build: never give it to judges or upload it to a survey tool."""

    model_config = ConfigDict(extra="forbid")

    version: int = QUESTIONNAIRE_VERSION
    study: str
    questionnaire_id: str
    questionnaire_sha256: str = Field(description="Hash of the questionnaire file it belongs to.")
    seed: int
    quality: QualitySpec
    items: dict[str, KeyItem]
    sensitive_terms: list[str] = Field(
        default_factory=list,
        description="Names that must not reach judges (models, personas, conversation ids).",
    )
    problems: list[str] = Field(
        default_factory=list, description="Pairs skipped or used despite a problem, and why."
    )


def questionnaire_json(questionnaire: Questionnaire) -> str:
    """The questionnaire file's exact text (stable, so its hash identifies it)."""
    return json.dumps(questionnaire.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"


def sha256_text(text: str) -> str:
    """Hex SHA-256 of ``text`` encoded as UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def save_study(folder: str | Path, questionnaire: Questionnaire, key: AnswerKey) -> list[Path]:
    """Write ``questionnaire.json`` and ``answer-key.json`` into ``folder``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    text = questionnaire_json(questionnaire)
    key = key.model_copy(update={"questionnaire_sha256": sha256_text(text)})
    q_path = folder / QUESTIONNAIRE_FILE
    k_path = folder / KEY_FILE
    write_text_atomic(q_path, text)
    write_text_atomic(
        k_path, json.dumps(key.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"
    )
    return [q_path, k_path]


def _read_json(path: Path, what: str) -> Any:
    if not path.exists():
        raise InputError(
            f"{what} not found.",
            path=path,
            hint="Build the study first with 'sdtt questionnaire build'.",
        )
    return parse_json(read_text_file(path, what=what), path)


def _study_file(folder_or_file: str | Path, name: str) -> Path:
    path = Path(folder_or_file)
    return path / name if path.is_dir() else path


def load_questionnaire(folder_or_file: str | Path) -> Questionnaire:
    """Read ``questionnaire.json`` from a study folder (or the file itself)."""
    path = _study_file(folder_or_file, QUESTIONNAIRE_FILE)
    data = _read_json(path, "questionnaire")
    if isinstance(data, dict):
        check_version(data, QUESTIONNAIRE_VERSION, path, None, what="questionnaire version")
    return validate_record(Questionnaire, data, path)


def load_key(folder_or_file: str | Path, questionnaire: Questionnaire | None = None) -> AnswerKey:
    """Read ``answer-key.json``; with ``questionnaire``, check that they belong together."""
    path = _study_file(folder_or_file, KEY_FILE)
    data = _read_json(path, "answer key")
    if isinstance(data, dict):
        check_version(data, QUESTIONNAIRE_VERSION, path, None, what="answer-key version")
    key = validate_record(AnswerKey, data, path)
    if questionnaire is not None and key.questionnaire_id != questionnaire.id:
        raise InputError(
            f"belongs to questionnaire {key.questionnaire_id!r}, not {questionnaire.id!r}.",
            path=path,
            hint="Use the answer key written by the same 'sdtt questionnaire build'.",
        )
    return key
