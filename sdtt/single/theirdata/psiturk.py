"""Their human judges' answers: psiTurk trial records and demographics.

psiTurk's downloads are ``trialdata.csv`` (no header: worker id, trial number,
timestamp, the trial's JSON) and ``questiondata.csv`` (worker id, key, value: their
pre-questionnaire's age, gender, education, country, native). Their compiled file
(``compiled_original_dataset_first_collection.json``) nests the same:
``{group: {"datastring": [{"questiondata": {...}, "data": [{"trialdata": {...}}]}]}}``.

A conversation trial (``phase`` ``TEST``) holds the conversation shown
(``conversationID``, e.g. ``static/dataset/conv22_len18.html``), its length
(``hit_len``), the judge's class for it (``Aclass``: ``HH``, ``HAI``, ``AIH``, ``AIAI``,
speaker A first), the topic chosen (the attention check), the genders guessed and the
reaction time (``rt``, ms). Their placeholder first trial (``conversationID`` ``.html``)
is skipped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sdtt.errors import InputError
from sdtt.single.csvrows import csv_cells
from sdtt.single.theirdata.conversations import CLASSES, Speaker
from sdtt.single.theirdata.jsonfile import load_json, need_object


@dataclass(frozen=True)
class KreimanTrial:
    """One judge's answer about one conversation cut."""

    worker: str
    trial: int
    conversation: str
    """The conversation file's stem, e.g. ``conv22_len18`` (a transcript's id)."""
    length: int | None
    said_class: str
    said_a: Speaker
    said_b: Speaker
    topic: str
    rt_ms: float | None
    guessed_gender: dict[str, str] = field(default_factory=dict)
    origin: str = ""


@dataclass(frozen=True)
class KreimanJudges:
    """Judges' demographics (worker -> answers) and their trials."""

    demographics: dict[str, dict[str, str]]
    trials: list[KreimanTrial]


def _trial(
    worker: str, data: dict[str, Any], path: str | Path, line: int | None
) -> KreimanTrial | None:
    if data.get("phase", "TEST") != "TEST":
        return None
    conversation_id = str(data.get("conversationID", ""))
    stem = Path(conversation_id).name.removesuffix(".html")
    if not stem:
        return None  # their placeholder first trial
    said = data.get("Aclass")
    if said not in CLASSES:
        raise InputError(
            f"the class must be one of {', '.join(CLASSES)}, not {said!r}.",
            path=path,
            line=line,
            field="Aclass",
        )
    said_a, said_b = CLASSES[str(said)]

    def number(key: str) -> float | None:
        value = data.get(key)
        if value in (None, ""):
            return None
        try:
            return float(value)
        except (TypeError, ValueError):
            raise InputError(
                f"{value!r} is not a number.", path=path, line=line, field=key
            ) from None

    length = number("hit_len")
    trial = number("trial")
    return KreimanTrial(
        worker=worker,
        trial=int(trial) if trial is not None else 0,
        conversation=stem,
        length=int(length) if length is not None else None,
        said_class=str(said),
        said_a=said_a,
        said_b=said_b,
        topic=str(data.get("topic", "")),
        rt_ms=number("rt"),
        guessed_gender={
            side: str(data[key])
            for side, key in (("A", "Agender"), ("B", "Bgender"))
            if key in data
        },
        origin=f"{Path(path).name}:{line}" if line else Path(path).name,
    )


def _csv(path: str | Path, columns: int, what: str) -> list[tuple[int, list[str]]]:
    rows = []
    for line, row in csv_cells(path, what=what):
        if len(row) != columns:
            raise InputError(
                f"expected {columns} columns, found {len(row)}.",
                path=path,
                line=line,
                hint=f"Give psiTurk's {what} as downloaded (no header line).",
            )
        rows.append((line, row))
    return rows


def read_psiturk(trialdata: str | Path, questiondata: str | Path | None = None) -> KreimanJudges:
    """Judges from psiTurk's ``trialdata.csv`` (and ``questiondata.csv``)."""
    trials = []
    for line, (worker, _index, _time, datastring) in _csv(trialdata, 4, "trialdata.csv"):
        try:
            data = json.loads(datastring)
        except json.JSONDecodeError as error:
            raise InputError(
                f"the trial is not valid JSON ({error.msg}).",
                path=trialdata,
                line=line,
                field="datastring",
            ) from None
        if not isinstance(data, dict):
            raise InputError(
                "the trial is not a JSON object.", path=trialdata, line=line, field="datastring"
            )
        trial = _trial(worker, data, trialdata, line)
        if trial is not None:
            trials.append(trial)
    demographics: dict[str, dict[str, str]] = {}
    if questiondata is not None:
        for _line, (worker, key, value) in _csv(questiondata, 3, "questiondata.csv"):
            demographics.setdefault(worker, {})[key] = value
    return KreimanJudges(demographics, trials)


def read_compiled(path: str | Path) -> KreimanJudges:
    """Judges from their compiled JSON; workers are named ``GROUP-N`` (N from 1)."""
    data, _text = load_json(path)
    groups = need_object(data, path, '{group: {"datastring": [...]}}')
    demographics: dict[str, dict[str, str]] = {}
    trials = []
    for group, body in groups.items():
        people = body.get("datastring") if isinstance(body, dict) else None
        if not isinstance(people, list):
            raise InputError("expected a 'datastring' list.", path=path, field=group)
        for number, person in enumerate(people, start=1):
            worker = f"{group}-{number}"
            where = f"{group}.datastring[{number - 1}]"
            if not isinstance(person, dict) or not isinstance(person.get("data"), list):
                raise InputError("expected an object with a 'data' list.", path=path, field=where)
            answers = person.get("questiondata") or {}
            demographics[worker] = {str(k): str(v) for k, v in answers.items()}
            for index, entry in enumerate(person["data"]):
                trial_data = entry.get("trialdata") if isinstance(entry, dict) else None
                if not isinstance(trial_data, dict):
                    raise InputError(
                        "expected a 'trialdata' object.", path=path, field=f"{where}.data[{index}]"
                    )
                try:
                    trial = _trial(worker, trial_data, path, None)
                except InputError as error:
                    raise InputError(
                        error.problem, path=path, field=f"{where}.data[{index}].{error.field}"
                    ) from None
                if trial is not None:
                    # The compiled file keeps no trial numbers: the order is the number.
                    trials.append(replace(trial, trial=trial.trial or index))
    return KreimanJudges(demographics, trials)
