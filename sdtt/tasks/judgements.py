"""The tidy judgement table: one record per judge and pair, whoever the judge is.

Human answers imported from a survey tool and LLM judges write the same record, so the
analysis reads one table. A record keeps everything needed to score it (the choice and
whether it was correct), to filter it (catch pairs, exclusions with their reason) and to
group it (X, the bot conversation's condition). Exclusions are kept in the table and
marked, never dropped, so every analysis can say how many judgements it left out and why.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from sdtt.dialogue.plain_check import PlainCheck
from sdtt.dialogue.record_files import (
    TableKind,
    append_records,
    iter_record_fields,
    iter_records,
    write_records,
)
from sdtt.dialogue.shown import AnswerNotes, Shown, ShownTurnCounts, migrate_answer

if TYPE_CHECKING:
    from sdtt.dialogue.record_blocks import BlockReader

JUDGEMENT_VERSION = 1
"""Format version of judgement records; bump on breaking changes."""

JudgeType = Literal["human", "llm"]
Choice = Literal["A", "B"]
PairKind = Literal["test", "catch"]


class Judgement(ShownTurnCounts, BaseModel):
    """One judge's decision on one pair of conversations, or on one conversation's witness
    (a live two-party verdict: ``witness`` and ``verdict`` set, no ``choice``)."""

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
    choice: Choice | None = Field(
        description=(
            "'A': User B of conversation 1 is the AI; 'B': User B of conversation 2 is the "
            "AI. None when the judge gave no answer."
        )
    )
    bot_position: Literal[1, 2] | None = Field(
        default=None,
        description="Which conversation really had the bot; None for a single-witness judgement.",
    )
    correct: bool | None = Field(
        description="True when the judge found the bot conversation (single witness: judged "
        "the witness rightly); None without an answer."
    )
    witness: Literal["bot", "human"] | None = Field(
        default=None,
        description="Single-witness judgement (a live two-party verdict on one conversation): "
        "what the witness really was. None for a judgement of a pair.",
    )
    verdict: Literal["human", "ai"] | None = Field(
        default=None,
        description="Single-witness judgement: what the judge said the witness was.",
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
    shown: Shown = Field(
        default_factory=Shown,
        description="What the judge was shown, from the answer key: the bot's condition, "
        "the conversations' ids, the live turns shown (live_from..live_to), view, order, "
        "judge kind, topic. The analysis groups by it.",
    )
    notes: AnswerNotes | None = Field(
        default=None, description="What the record says about the answer (raw answers...)."
    )

    VALIDATED_TOGETHER: ClassVar[tuple[str, ...]] = (
        "excluded",
        "exclusion_reason",
        "judge_type",
        "judge_model",
        "witness",
        "bot_position",
        "choice",
        "verdict",
        "correct",
    )
    """The fields the validators below read (see :mod:`sdtt.dialogue.plain_check`)."""

    @model_validator(mode="before")
    @classmethod
    def _older_form(cls, data: Any) -> Any:
        # Records written before kept a `condition` mapping (and X, N, N + X on top).
        return migrate_answer(data)

    @model_validator(mode="after")
    def _reason_with_exclusion(self) -> Self:
        if self.excluded and not self.exclusion_reason:
            raise ValueError("an excluded judgement needs an exclusion_reason")
        if not self.excluded and self.exclusion_reason:
            raise ValueError("exclusion_reason is set but excluded is false")
        if self.judge_type == "human" and self.judge_model is not None:
            raise ValueError("a human judgement has no judge_model")
        if self.witness is None and self.bot_position is None:
            raise ValueError("a judgement of a pair needs bot_position (1 or 2)")
        if self.witness is not None and (self.choice is not None or self.bot_position):
            raise ValueError("a single-witness judgement has a verdict, not a choice or position")
        if self.witness is not None and (self.verdict is None) != (self.correct is None):
            raise ValueError("a single-witness judgement's correct follows from its verdict")
        return self


def reason_category(reason: str | None) -> str:
    """The short form of an exclusion reason: the part before ':' (``non_compliant``)."""
    return (reason or "unknown").split(":")[0].strip() or "unknown"


@dataclass
class ExclusionTally:
    """What is kept out of every pass rate, counted the same way by every command."""

    excluded: Counter[str] = field(default_factory=Counter)
    """Excluded test-pair judgements by reason category."""
    catch: int = 0
    """Judgements of catch pairs: quality checks, never part of a pass rate."""

    def line(self) -> str:
        """One line for a terminal, identical in ``responses import`` and ``score``."""
        total = sum(self.excluded.values())
        reasons = ", ".join(f"{reason}: {n}" for reason, n in sorted(self.excluded.items()))
        shown = f" ({reasons})" if reasons else ""
        return (
            f"left out of pass rates: {total} excluded test judgement(s){shown}; "
            f"{self.catch} catch-pair judgement(s), never counted"
        )


def tally_exclusions(rows: Iterable[tuple[str, bool, str | None]]) -> ExclusionTally:
    """Count ``(pair_kind, excluded, exclusion_reason)`` rows into an :class:`ExclusionTally`."""
    tally = ExclusionTally()
    for kind, excluded, reason in rows:
        if kind == "catch":
            tally.catch += 1
        elif excluded:
            tally.excluded[reason_category(reason)] += 1
    return tally


def write_judgements(path: str | Path, judgements: Iterable[Judgement]) -> int:
    """Write judgements to a new JSONL file (replacing ``path``); returns how many."""
    return write_records(path, judgements)


def append_judgements(path: str | Path, judgements: Iterable[Judgement]) -> int:
    """Append judgements to a JSONL file, each flushed as written; returns how many."""
    return append_records(path, judgements)


JUDGEMENTS = TableKind(Judgement, JUDGEMENT_VERSION, "judgement", "judgement format")
"""What judgement files hold."""


def iter_judgements(
    path: str | Path, *, progress: Callable[[int], None] | None = None
) -> Iterator[Judgement]:
    """The judgements of a file one at a time, as it is read (for a file too large to
    hold as objects); the errors of :func:`read_judgements`. ``progress`` is called
    with the bytes read so far."""
    return iter_records(path, JUDGEMENTS, progress=progress)


def iter_judgement_fields(
    path: str | Path, *, progress: Callable[[int], None] | None = None
) -> Iterator[dict[str, Any]]:
    """The judgements of a file as dicts of their fields (``model_dump``), validated as
    :func:`read_judgements` does, for files of millions (see
    :func:`~sdtt.dialogue.record_files.iter_record_fields`)."""
    return iter_record_fields(
        path, JUDGEMENTS, PlainCheck(Judgement, Judgement.VALIDATED_TOGETHER), progress=progress
    )


def judgement_blocks(groups: Sequence[tuple[str, ...]]) -> BlockReader:
    """A reader of judgement files a block at a time, into columns (see
    :mod:`sdtt.dialogue.record_blocks`), with the distinct values of each of ``groups``;
    what it accepts, and the errors it gives, are those of :func:`iter_judgement_fields`."""
    # Imported here: Arrow takes a while to load, and most commands never read this way.
    from sdtt.dialogue.record_blocks import BlockReader

    return BlockReader(PlainCheck(Judgement, Judgement.VALIDATED_TOGETHER), groups, JUDGEMENTS)


def read_judgements(path: str | Path) -> list[Judgement]:
    """Read a judgement file as it is; a bad record raises :class:`InputError` with its line.

    Analyses should use :func:`load_judgements`, which also drops repeated records.
    """
    return list(iter_judgements(path))


JudgementKey = tuple[str, str, str, str | None]
"""What one judgement answers: study, judge id, pair id and the order the pair was shown
in (``None`` for judges that saw it once)."""


class RepeatedJudgementWarning(UserWarning):
    """Judgement files held the same answer more than once; the repeats were left out."""


def judgement_key(judgement: Judgement) -> JudgementKey:
    """The (study, judge, pair, order) a judgement answers; two records with one key
    are the same answer given twice."""
    return (judgement.study, judgement.judge_id, judgement.pair_id, judgement.shown.order)


def is_model_error(judgement: Judgement) -> bool:
    """True when a provider failure, not the judge, produced this (excluded) record."""
    return judgement.excluded and (judgement.exclusion_reason or "").startswith("model_error")


def settled_keys(judgements: Iterable[Judgement]) -> set[JudgementKey]:
    """Keys of the answers a resumed run must not ask again (model errors are retried)."""
    return {judgement_key(j) for j in judgements if not is_model_error(j)}


@dataclass
class Deduplicated:
    """Judgements with repeats left out, and what was left out."""

    judgements: list[Judgement]
    repeated: list[Judgement] = field(default_factory=list)
    """Later copies of an answer already used (same judge, pair and order)."""
    retried: list[Judgement] = field(default_factory=list)
    """Model-error records that a later run answered again."""


def deduplicate(judgements: Sequence[Judgement]) -> Deduplicated:
    """Keep one used answer per (study, judge, pair, order), in file order.

    Of several included records with one key the first is kept. Excluded records never
    count, so they stay (they are reported as exclusions), except model-error records
    that a later record of the same key replaced: the run was resumed and asked again.
    """
    last_index = {judgement_key(j): index for index, j in enumerate(judgements)}
    used: set[JudgementKey] = set()
    result = Deduplicated([])
    for index, judgement in enumerate(judgements):
        key = judgement_key(judgement)
        if is_model_error(judgement) and last_index[key] > index:
            result.retried.append(judgement)
        elif judgement.excluded:
            result.judgements.append(judgement)
        elif key in used:
            result.repeated.append(judgement)
        else:
            used.add(key)
            result.judgements.append(judgement)
    return result


def load_judgements(paths: Sequence[str | Path]) -> list[Judgement]:
    """Read judgement files for analysis, leaving out repeated answers.

    A rerun that appended the same answers again (same judge, pair and order) would
    otherwise count twice and narrow every interval; the repeats are dropped with a
    :class:`RepeatedJudgementWarning` that names them.
    """
    judgements: list[Judgement] = []
    for path in paths:
        judgements += read_judgements(path)
    found = deduplicate(judgements)
    if found.repeated:
        first = found.repeated[0]
        order = first.shown.order
        warn_repeated(len(found.repeated), paths, first.judge_id, first.pair_id, order)
    return found.judgements


def warn_repeated(
    count: int, paths: Sequence[str | Path], judge: str, pair: str, order: object = None
) -> None:
    """Say that ``count`` repeated judgements were left out, naming the first (and the
    order it was shown in, when it has one)."""
    where = ", ".join(str(path) for path in paths)
    warnings.warn(
        f"{count} repeated judgement(s) in {where} left out: the same "
        f"judge, pair and order was recorded more than once (first: judge "
        f"{judge!r}, pair {pair!r}"
        + (f", order {order!r}" if order is not None else "")
        + "). The first record of each is used.",
        RepeatedJudgementWarning,
        stacklevel=3,
    )
