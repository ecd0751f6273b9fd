"""What every survey tool's answer readers share: answers per judge, option matching,
scoring, exclusions, and reading text and long tables.

Each tool's reader reads its own file format into :class:`JudgeAnswers` (one per
respondent, answers keyed by sdtt's question names, as option codes or labels). Then
:func:`score` compares them with the answer key and applies the study's exclusion rules.
Exclusions are marked on the records with their reason; no record is dropped.

Long answer tables (a CSV whose header names the columns, then one answer a row: the long
CSV any tool can write, the CSVs the jsPsych pages save) are read by :func:`read_table`:
column names are matched without regard to case or surrounding spaces, cells come back
stripped, blank rows are skipped, and every error names the file, line and column.
"""

from __future__ import annotations

import csv
import html
import io
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sdtt.errors import InputError
from sdtt.files import checked_text, read_file_bytes
from sdtt.spreadsheet import restore_cell
from sdtt.tasks.judgements import Judgement
from sdtt.tasks.questionnaire import AnswerKey, PairItem, Question, Questionnaire
from sdtt.tasks.rating_task import RatingAnswer, RatingTask


@dataclass
class JudgeAnswers:
    """One respondent's answers as read from a tool's file."""

    judge_id: str
    answers: dict[str, str] = field(default_factory=dict)
    """Question name to the raw answer (an option code or label, or free text)."""
    seconds: dict[str, float] = field(default_factory=dict)
    """Pair id to seconds spent on the pair, where the tool records it."""
    flags: list[str] = field(default_factory=list)
    """Reasons to exclude everything this respondent answered (e.g. a preview response)."""
    where: str = ""
    """Location for error messages, e.g. ``responses.csv:5``."""
    numeric_choices: bool = False
    """Answers may be option positions (1, 2, ...) instead of codes or labels."""


@dataclass
class ImportResult:
    """Judgements read from a file, and a summary of what happened."""

    judgements: list[Judgement]
    judges: int
    excluded_judges: Counter[str]

    @property
    def excluded(self) -> int:
        """Judgements marked as excluded."""
        return sum(1 for j in self.judgements if j.excluded)


def _fold(text: str) -> str:
    return " ".join(html.unescape(text).casefold().split())


def resolve_choice(question: Question, raw: str, *, numeric: bool, where: str) -> str | None:
    """The option code an answer means: a code, a label, or (``numeric``) a position."""
    raw = raw.strip()
    if not raw:
        return None
    choices = question.choices or []
    for choice in choices:
        if raw == choice.value:
            return choice.value
    folded = _fold(raw)
    for choice in choices:
        if folded == _fold(choice.label):
            return choice.value
    if numeric and raw.isdigit() and 1 <= int(raw) <= len(choices):
        return choices[int(raw) - 1].value
    options = ", ".join(c.value for c in choices)
    raise InputError(
        f"answer {raw[:60]!r} to question {question.name!r} is none of its options ({options}).",
        path=where or None,
        hint="Was this file exported from this questionnaire? Check that the export used "
        "option codes, option texts or (Qualtrics) numeric values.",
    )


def _answered(respondent: JudgeAnswers, item: PairItem) -> bool:
    names = [item.id] if item.topic is None else [item.id, item.topic.name]
    return any(respondent.answers.get(name, "").strip() for name in names)


def _shown_views(
    questionnaire: Questionnaire, key: AnswerKey, respondent: JudgeAnswers
) -> set[str]:
    """The design views a respondent was shown: those of the one form that holds all they
    answered (so a skipped pair counts as "no answer"), else just those they answered
    (when the tool picked the pairs itself, as Qualtrics' randomizers do)."""
    answered = {
        item.id
        for item in questionnaire.items
        if item.id in key.items and key.items[item.id].pair is not None
        if _answered(respondent, item)
    }
    forms = [set(form.items) for form in questionnaire.forms if answered <= set(form.items)]
    return forms[0] if answered and len(forms) == 1 else answered


def _label(question: Question, code: str | None) -> str | None:
    if code is None:
        return None
    choice = question.choice_for(code)
    return None if choice is None else choice.label


def score(
    questionnaire: Questionnaire,
    key: AnswerKey,
    respondents: Sequence[JudgeAnswers],
    *,
    source: str,
    known_judges: Iterable[str] = (),
) -> ImportResult:
    """Turn respondents' answers into judgements, one per respondent and pair."""
    missing = [item.id for item in questionnaire.items if item.id not in key.items]
    if missing:
        raise InputError(
            f"the answer key has no entry for pair(s) {', '.join(missing)}.",
            hint="Use the answer key written together with this questionnaire.",
        )
    seen = set(known_judges)
    judgements: list[Judgement] = []
    excluded_judges: Counter[str] = Counter()
    for respondent in respondents:
        where = respondent.where
        numeric = respondent.numeric_choices
        demographics: dict[str, str] = {}
        for question in questionnaire.demographics:
            raw = respondent.answers.get(question.name, "").strip()
            if not raw:
                continue
            if question.choices is None:
                demographics[question.name] = raw
            else:
                code = resolve_choice(question, raw, numeric=numeric, where=where)
                demographics[question.name] = _label(question, code) or raw
        strategy = None
        if questionnaire.strategy is not None:
            strategy = respondent.answers.get(questionnaire.strategy.name, "").strip() or None

        rows = []
        catch_errors = 0
        topic_errors = 0
        shown = _shown_views(questionnaire, key, respondent)
        for item in questionnaire.items:
            truth = key.items[item.id]
            if truth.pair is not None and item.id not in shown:
                # Under a judge design each judge sees only their form's pairs.
                continue
            choice = resolve_choice(
                item.judgement, respondent.answers.get(item.id, ""), numeric=numeric, where=where
            )
            correct = None if choice is None else choice == truth.correct_choice
            topic_answer = None
            topic_correct = None
            if item.topic is not None:
                code = resolve_choice(
                    item.topic,
                    respondent.answers.get(item.topic.name, ""),
                    numeric=numeric,
                    where=where,
                )
                topic_answer = _label(item.topic, code)
                topic_correct = code is not None and code == truth.topic_value
                if not topic_correct:
                    topic_errors += 1
            if truth.kind == "catch" and correct is not True:
                catch_errors += 1
            rows.append((item, truth, choice, correct, topic_answer, topic_correct))

        # (category for the summary, text for the record)
        reasons = [(flag, flag) for flag in respondent.flags]
        if respondent.judge_id in seen:
            reasons.append(
                ("repeat participation", "repeat participation (this judge id answered before)")
            )
        seen.add(respondent.judge_id)
        if catch_errors > key.quality.max_catch_errors:
            reasons.append(
                (
                    "failed catch pairs",
                    f"failed {catch_errors} catch pair(s) (at most "
                    f"{key.quality.max_catch_errors} allowed)",
                )
            )
        if topic_errors > key.quality.max_topic_errors:
            reasons.append(
                (
                    "failed topic checks",
                    f"{topic_errors} wrong or missing topic answer(s) (at most "
                    f"{key.quality.max_topic_errors} allowed)",
                )
            )
        for category, _ in reasons:
            excluded_judges[category] += 1
        for item, truth, choice, correct, topic_answer, topic_correct in rows:
            record_reasons = [text for _, text in reasons]
            if choice is None:
                record_reasons.append("no answer")
            judgements.append(
                Judgement(
                    study=key.study,
                    judge_id=respondent.judge_id,
                    judge_type="human",
                    pair_id=truth.pair or item.id,
                    pair_kind=truth.kind,
                    choice="A" if choice == "A" else "B" if choice == "B" else None,
                    bot_position=truth.bot_position,
                    correct=correct,
                    response_time_s=respondent.seconds.get(item.id),
                    topic_answer=topic_answer,
                    topic_correct=topic_correct,
                    demographics=demographics,
                    strategy=strategy,
                    excluded=bool(record_reasons),
                    exclusion_reason="; ".join(record_reasons) or None,
                    source=source,
                    shown=truth.shown(),
                )
            )
    return ImportResult(
        judgements=judgements, judges=len(respondents), excluded_judges=excluded_judges
    )


def read_text(path: str | Path) -> str:
    """A response file's text (UTF-8, with or without BOM; UTF-16 as Excel saves it);
    an empty file, or one holding NULs, is an :class:`InputError`."""
    path = Path(path)
    raw = read_file_bytes(path)
    for encoding in ("utf-8-sig", "utf-16"):
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError:
            continue
        if encoding == "utf-16" and not raw.startswith((b"\xff\xfe", b"\xfe\xff")):
            continue
        return checked_text(text, path, what="responses")
    raise InputError("is not UTF-8 text.", path=path, hint="Export the responses as UTF-8.")


def read_csv_rows(path: str | Path, *, delimiters: str = ",;\t") -> list[list[str]]:
    """All rows of a CSV file, the delimiter guessed from the first line.

    Cells that sdtt (or a careful tool) marked with an apostrophe so that spreadsheets do
    not run them as formulas come back without the mark (:func:`restore_cell`).
    """
    text = read_text(path)
    first = next(iter(text.splitlines()), "")
    delimiter = max(delimiters, key=first.count) if first else ","
    # newline="" lets the csv module see every line ending (CR-only files included).
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        return [[restore_cell(cell) for cell in row] for row in reader]
    except csv.Error as error:
        raise InputError(
            f"is not valid CSV ({error}).",
            path=path,
            line=reader.line_num or None,
            hint="Export the responses from the survey tool again.",
        ) from None


@dataclass(frozen=True)
class Row:
    """One non-blank row of a long table, its cells by (lower-case) column name."""

    path: Path
    line: int
    cells: Mapping[str, str]

    def __getitem__(self, column: str) -> str:
        """The stripped cell of ``column`` ("" when the table or the row lacks it)."""
        return self.cells.get(column, "")

    @property
    def where(self) -> str:
        """``file:line``, as records name where an answer came from."""
        return f"{self.path}:{self.line}"

    def error(
        self, message: str, *, field: str | None = None, hint: str | None = None
    ) -> InputError:
        """An error about this row."""
        return InputError(message, path=self.path, line=self.line, field=field, hint=hint)

    def judge_id(self) -> str:
        """The row's judge id, which must not be empty."""
        if not self["judge_id"]:
            raise self.error("judge_id is empty.", field="judge_id")
        return self["judge_id"]

    def number(self, column: str, *, what: str, field: str) -> float | None:
        """The number in ``column`` (None when the cell is empty); ``what`` and ``field``
        name it in the error for a cell that is not a number."""
        text = self[column]
        if not text:
            return None
        try:
            return float(text)
        except ValueError:
            raise self.error(f"{what} {text!r} is not a number.", field=field) from None


def read_table(
    path: Path, columns: Sequence[str], *, hint: str, delimiters: str = ",;\t"
) -> list[Row]:
    """The rows of the long table at ``path``, which must have ``columns``; ``hint`` says
    what to do when it lacks some."""
    rows = read_csv_rows(path, delimiters=delimiters)
    if not rows:
        raise InputError("is empty.", path=path)
    header = [name.strip().lower() for name in rows[0]]
    missing = [name for name in columns if name not in header]
    if missing:
        raise InputError(f"lacks the column(s) {', '.join(missing)}.", path=path, line=1, hint=hint)
    column = {name: index for index, name in enumerate(header)}
    return [
        Row(
            path,
            line,
            {name: row[index].strip() for name, index in column.items() if index < len(row)},
        )
        for line, row in enumerate(rows[1:], start=2)
        if any(cell.strip() for cell in row)
    ]


def rating_answers(
    rows: Iterable[Row], task: RatingTask, *, seconds: str, per_second: float = 1.0
) -> list[RatingAnswer]:
    """The answers in long-table rows of a rating task: ``question`` names the pair and
    ``answer`` holds the rating (a blank answer gives none); column ``seconds``, counted
    ``per_second`` to a second, is the time spent."""
    pair_ids = {p.id for p in task.pairs}
    answers: list[RatingAnswer] = []
    for row in rows:
        judge_id, question = row.judge_id(), row["question"]
        if question not in pair_ids:
            raise row.error(f"pair {question!r} is not in this rating task.", field="question")
        answer = row["answer"]
        if not answer:
            continue
        spent = row.number(seconds, what="time", field="seconds")
        if spent is not None:
            spent /= per_second
        answers.append((judge_id, question, answer, spent, row.where))
    return answers
