"""Answers to a single-item task (``sdtt single``) from the survey tools that field one.

- SurveyJS: result objects (the formats the questionnaire importer accepts), question
  names as :class:`~sdtt.questionnaires.single_task.ItemView` builds them.
- jsPsych: the CSV the single-item page writes: ``single`` rows carry the screen's
  answers as JSON in ``answer``, ``reason`` rows the reason.

An item a judge was not shown gives no answer; an item shown but left unanswered gives an
answer whose verdicts are None. A code that is not an option is an error naming the file
and record, so a file from another task cannot be read as this one's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sdtt.errors import InputError
from sdtt.questionnaires.exporters.surveyjs import PAGE_SUFFIX, TIMES_KEY
from sdtt.questionnaires.readers.long_csv import read_table
from sdtt.questionnaires.readers.surveyjs import ID_KEYS, read_results
from sdtt.questionnaires.single_task import (
    CONFIDENCE,
    VERDICTS,
    ItemView,
    SingleAnswer,
    SingleTask,
    Verdict,
)

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


def _answer(
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


def _shown(item: ItemView, given: dict[str, Any]) -> bool:
    numbers = range(1, len(item.judged) + 1)
    names = [item.verdict_name(i) for i in numbers] + [item.confidence_name(i) for i in numbers]
    return any(name in given for name in [*names, item.topic_name, item.reason_name])


def read_surveyjs_single(path: Path, task: SingleTask) -> list[SingleAnswer]:
    """Answers from SurveyJS result objects."""
    answers: list[SingleAnswer] = []
    for index, (where, result) in enumerate(read_results(path), start=1):
        judge_id = next(
            (str(result[k]).strip() for k in ID_KEYS if str(result.get(k, "")).strip()),
            f"{path.stem}-{index}",
        )
        times = result.get(TIMES_KEY)
        for item in task.items:
            if not _shown(item, result):
                continue
            spent = times.get(item.id + PAGE_SUFFIX) if isinstance(times, dict) else None
            seconds = float(spent) if isinstance(spent, int | float) and spent >= 0 else None
            answers.append(_answer(task, item, judge_id, result, seconds=seconds, where=where))
    return answers


def read_jspsych_single(path: Path, task: SingleTask) -> list[SingleAnswer]:
    """Answers from the CSV the jsPsych single-item page saved."""
    table = read_table(
        path,
        ("judge_id", "role", "item", "answer"),
        hint="Import the CSV the single-item page saved.",
        delimiters=",",
    )
    screens: dict[tuple[str, str], tuple[dict[str, Any], float | None, str]] = {}
    reasons: dict[tuple[str, str], str] = {}
    for row in table:
        if row["form"] and row["form"] != task.id:
            raise row.error(
                f"holds answers to task {row['form']!r}, not {task.id!r}.",
                field="form",
                hint="Import it with the task folder it was exported from.",
            )
        if row["role"] not in ("single", "reason"):
            continue
        item = task.item(row["item"]) if row["item"] else None
        if item is None:
            raise row.error("names no item.", field="item")
        key = (row.judge_id(), item.id)
        if row["role"] == "reason":
            reasons[key] = row["answer"]
            continue
        try:
            given = json.loads(row["answer"]) if row["answer"] else {}
        except json.JSONDecodeError:
            raise row.error("answer is not the JSON the page writes.", field="answer") from None
        if not isinstance(given, dict):
            raise row.error("answer is not the JSON the page writes.", field="answer")
        rt = row.number("rt", what="time", field="rt")
        screens[key] = (given, None if rt is None else rt / 1000, row.where)
    answers = []
    for (judge_id, item_id), (given, seconds, where) in screens.items():
        item = task.item(item_id)
        given = {**given, item.reason_name: reasons.get((judge_id, item_id), "")}
        answers.append(_answer(task, item, judge_id, given, seconds=seconds, where=where))
    return answers
