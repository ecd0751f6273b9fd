"""The tidy judgement table: one record per judge and pair, whoever the judge is.

Human answers imported from a survey tool and LLM judges write the same record, so the
analysis reads one table. A record keeps everything needed to score it (the choice and
whether it was correct), to filter it (catch pairs, exclusions with their reason) and to
group it (X, the bot conversation's condition). Exclusions are kept in the table and
marked, never dropped, so every analysis can say how many judgements it left out and why.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from sdtt.dialogue.jsonl import JsonlWriter, read_jsonl
from sdtt.dialogue.store import check_version, validate_record
from sdtt.errors import IncompleteFileWarning

JUDGEMENT_VERSION = 1
"""Format version of judgement records; bump on breaking changes."""

JudgeType = Literal["human", "llm"]
Choice = Literal["A", "B"]
PairKind = Literal["test", "catch"]


class Judgement(BaseModel):
    """One judge's decision on one pair of conversations."""

    model_config = ConfigDict(extra="forbid")

    version: int = Field(default=JUDGEMENT_VERSION, description="Record format version.")
    study: str = Field(description="Name of the study (from its spec) the pair belongs to.")
    judge_id: str = Field(description="Who judged: a participant id, or an LLM judge run id.")
    judge_type: JudgeType = Field(description="'human' or 'llm'.")
    judge_model: str | None = Field(
        default=None, description="provider/model of an LLM judge; None for humans."
    )
    pair_id: str = Field(description="The opaque pair id judges saw.")
    pair_kind: PairKind = Field(
        default="test",
        description="'test' for a real bot/human pair, 'catch' for a pair with an obvious answer.",
    )
    x_turns: int = Field(ge=0, description="How many final turns of each conversation were shown.")
    choice: Choice | None = Field(
        description=(
            "'A': User B of conversation 1 is the AI; 'B': User B of conversation 2 is the "
            "AI. None when the judge gave no answer."
        )
    )
    bot_position: Literal[1, 2] = Field(description="Which conversation really had the bot.")
    correct: bool | None = Field(
        description="True when the judge found the bot conversation; None without an answer."
    )
    response_time_s: float | None = Field(
        default=None, ge=0, description="Seconds the judge spent on the pair, when known."
    )
    topic_answer: str | None = Field(
        default=None, description="The topic the judge picked in the attention check."
    )
    topic_correct: bool | None = Field(
        default=None, description="Whether the attention check was passed; None if not asked."
    )
    demographics: dict[str, str] = Field(
        default_factory=dict, description="The judge's demographic answers (question: answer)."
    )
    strategy: str | None = Field(
        default=None, description="The judge's free-text answer on how they decided."
    )
    excluded: bool = Field(default=False, description="True when analyses should leave it out.")
    exclusion_reason: str | None = Field(default=None, description="Why it is excluded.")
    source: str = Field(description="Where it came from, e.g. 'qualtrics:responses.csv'.")
    condition: dict[str, Any] = Field(
        default_factory=dict,
        description=(
            "What the analysis groups by, copied from the answer key: the bot and human "
            "conversation ids and the bot conversation's metadata (model, persona, mode)."
        ),
    )

    @model_validator(mode="after")
    def _reason_with_exclusion(self) -> Self:
        if self.excluded and not self.exclusion_reason:
            raise ValueError("an excluded judgement needs an exclusion_reason")
        if not self.excluded and self.exclusion_reason:
            raise ValueError("exclusion_reason is set but excluded is false")
        if self.judge_type == "human" and self.judge_model is not None:
            raise ValueError("a human judgement has no judge_model")
        return self


def write_judgements(path: str | Path, judgements: Iterable[Judgement]) -> int:
    """Write judgements to a new JSONL file (replacing ``path``); returns how many."""
    path = Path(path)
    partial = path.with_name(path.name + ".partial")
    partial.unlink(missing_ok=True)
    count = 0
    with JsonlWriter(partial) as writer:
        for judgement in judgements:
            writer.write(judgement)
            count += 1
    partial.replace(path)
    return count


def append_judgements(path: str | Path, judgements: Iterable[Judgement]) -> int:
    """Append judgements to a JSONL file, each flushed as written; returns how many."""
    count = 0
    with JsonlWriter(path) as writer:
        for judgement in judgements:
            writer.write(judgement)
            count += 1
    return count


def read_judgements(path: str | Path) -> list[Judgement]:
    """Read a judgement file; a bad record raises :class:`InputError` with its line."""
    judgements: list[Judgement] = []

    def warn_cut(line: int) -> None:
        warnings.warn(
            IncompleteFileWarning(
                f"{path}:{line}: the last judgement is cut off and was left out; if the file "
                "was copied or downloaded, it may be incomplete: check it against the original."
            ),
            stacklevel=3,
        )

    for line, record in read_jsonl(path, on_partial_tail=warn_cut):
        check_version(record, JUDGEMENT_VERSION, path, line, what="judgement format")
        judgements.append(validate_record(Judgement, record, path, line))
    return judgements
