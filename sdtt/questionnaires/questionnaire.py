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
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from sdtt.dialogue.store import check_version, validate_record
from sdtt.errors import InputError
from sdtt.files import loads_json
from sdtt.questionnaires.study import QualitySpec

QUESTIONNAIRE_VERSION = 1
QUESTIONNAIRE_FILE = "questionnaire.json"
KEY_FILE = "answer-key.json"

Speaker = Literal["A", "B"]

JUDGEMENT_TEXT = "User A is a person in both chats. In which chat is User B the AI?"
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

    @property
    def view_name(self) -> str:
        """Name of the element that shows the two chats."""
        return self.id + VIEW_SUFFIX

    @property
    def time_name(self) -> str:
        """Name of the timing element (tools that time pages separately)."""
        return self.id + TIME_SUFFIX


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

    def item(self, pair_id: str) -> PairItem | None:
        """The pair with id ``pair_id``."""
        return next((item for item in self.items if item.id == pair_id), None)

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
    meta: dict[str, Any] = Field(default_factory=dict)


class KeyItem(BaseModel):
    """The truth about one pair."""

    model_config = ConfigDict(extra="forbid")

    pair_id: str
    kind: Literal["test", "catch"]
    x_turns: int
    bot_position: Literal[1, 2]
    correct_choice: Literal["A", "B"]
    topic: str | None = None
    topic_value: str | None = Field(default=None, description="Code of the right topic option.")
    bot: SourceInfo
    human: SourceInfo
    notes: list[str] = Field(default_factory=list)

    def condition(self) -> dict[str, Any]:
        """What an analysis groups this pair's judgements by."""
        return {
            "bot_conversation": self.bot.id,
            "human_conversation": self.human.id,
            "bot_meta": self.bot.meta,
        }


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
    q_path.write_text(text, encoding="utf-8")
    k_path.write_text(
        json.dumps(key.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    return [q_path, k_path]


def _read_json(path: Path, what: str) -> Any:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError(
            f"{what} not found.",
            path=path,
            hint="Build the study first with 'sdtt questionnaire build'.",
        ) from None
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"cannot read the {what} ({error}).", path=path) from None
    try:
        return loads_json(text)
    except json.JSONDecodeError as error:
        raise InputError(
            f"is not valid JSON ({error.msg}).", path=path, line=error.lineno
        ) from None


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
