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
is skipped. Their later Prolific runs add the conversation's true class (``trueLabel``)
and whether it was a catch trial (``isCatch``: a machine-made conversation built to be
spotted); both are kept, so labels need not be rebuilt by hand and catch trials can be
scored apart.

Their Prolific release (``Conversations/Participants results - datasets/
new_results_prolific.csv``, ``prolific_may30.csv``) is psiTurk's *participants* table:
a header line and one row per participant, 18 columns (``uniqueid``, ``assignmentid``,
``workerid``, ``hitid``, ``ipaddress``, ``browser``, ``platform``, ``language``,
``cond``, ``counterbalance``, ``codeversion``, ``beginhit``, ``beginexp``, ``endhit``,
``bonus``, ``status``, ``mode``, ``datastring``), the trials inside the ``datastring``
JSON (``{"data": [{"trialdata": {...}}], "questiondata": {...}}``). The same table in
psiTurk's SQLite database (``participants_*.db``) is read too.
"""

from __future__ import annotations

import csv
import json
import sqlite3
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sdtt.errors import InputError
from sdtt.single.csvrows import csv_cells
from sdtt.single.theirdata.jsonfile import load_json, need_object
from sdtt.single.theirdata.pages import CLASSES, Speaker


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
    true_label: str | None = None
    """The conversation's class as their task recorded it (``trueLabel``), when it did."""
    is_catch: bool = False
    """A catch trial (``isCatch``): left out of detectability, scored apart."""
    folder: str = ""
    """The folder of the conversation shown (``static/dataset``, ``static/dataset/catch``,
    ``Mranmey_chatgpt_dataset_woGender``): their datasets reuse conversation numbers."""


@dataclass(frozen=True)
class KreimanJudges:
    """Judges' demographics (worker -> answers) and their trials."""

    demographics: dict[str, dict[str, str]]
    trials: list[KreimanTrial]
    restarted: dict[str, int] = field(default_factory=dict)
    """Participants whose ``datastring`` holds a restarted session (their INSTRUCTIONS
    phase again after TEST trials) -> how many trials of the earlier run were left out.
    Their ``questiondata`` scores the last run only, so only the last run is kept."""


def _trial(
    worker: str, data: dict[str, Any], path: str | Path, line: int | None
) -> KreimanTrial | None:
    if data.get("phase", "TEST") != "TEST":
        return None
    conversation_id = str(data.get("conversationID", ""))
    stem = Path(conversation_id).name.removesuffix(".html")
    folder = str(Path(conversation_id).parent).strip("/").removeprefix(".")
    if not stem:
        return None  # their placeholder first trial
    said = data.get("Aclass")
    if said not in CLASSES:
        raise InputError(
            f"the class must be one of {', '.join(CLASSES)}, not {str(said)[:20]!r}.",
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

    true_label = data.get("trueLabel")
    if true_label is not None and true_label not in CLASSES:
        raise InputError(
            f"the true class must be one of {', '.join(CLASSES)}, not {str(true_label)[:20]!r}.",
            path=path,
            line=line,
            field="trueLabel",
        )
    is_catch = data.get("isCatch", False)
    if is_catch not in (True, False, "true", "false"):
        raise InputError(
            f"isCatch must be true or false, not {str(is_catch)[:20]!r}.",
            path=path,
            line=line,
            field="isCatch",
        )
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
        true_label=str(true_label) if true_label is not None else None,
        is_catch=is_catch in (True, "true"),
        folder=folder,
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


PARTICIPANT_COLUMNS = ("uniqueid", "datastring")
"""The columns of psiTurk's participants table this reader needs (it has 18)."""


def is_participants_table(path: str | Path) -> bool:
    """Whether ``path`` is psiTurk's participants table (a SQLite database, or a CSV whose
    header line names a ``datastring`` column) rather than ``trialdata.csv``."""
    if Path(path).suffix.lower() == ".db":
        return True
    try:
        with Path(path).open(encoding="utf-8-sig", newline="") as handle:
            header = next(csv.reader([handle.readline()]), [])
    except (OSError, UnicodeDecodeError):
        return False  # the reader that follows names the problem
    return "datastring" in (name.strip().lower() for name in header)


def _participant_rows(path: str | Path) -> list[tuple[int, dict[str, str]]]:
    """``(line or row number, {column: value})`` of every participant."""
    if Path(path).suffix.lower() != ".db":
        return _csv_participants(path)
    try:
        connection = sqlite3.connect(f"file:{Path(path)}?mode=ro", uri=True)
    except sqlite3.Error as error:
        raise InputError(f"cannot open the database ({error}).", path=path) from None
    try:
        tables = [
            name
            for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")
        ]
        for table in tables:
            columns = [row[1] for row in connection.execute(f'PRAGMA table_info("{table}")')]
            if all(name in columns for name in PARTICIPANT_COLUMNS):
                cursor = connection.execute(f'SELECT * FROM "{table}"')
                names = [column[0] for column in cursor.description]
                return [
                    (
                        number,
                        {k: "" if v is None else str(v) for k, v in zip(names, row, strict=True)},
                    )
                    for number, row in enumerate(cursor, start=1)
                ]
    except sqlite3.Error as error:
        raise InputError(f"cannot read the database ({error}).", path=path) from None
    finally:
        connection.close()
    raise InputError(
        f"no table with the columns {', '.join(PARTICIPANT_COLUMNS)} (found "
        f"{', '.join(tables[:8]) or 'no tables'}).",
        path=path,
        hint="Give psiTurk's participants database (its table is named in config.txt).",
    )


def _csv_participants(path: str | Path) -> list[tuple[int, dict[str, str]]]:
    # One participant's datastring holds all their trials. The limit is process-wide, so
    # it is put back: every other CSV reader keeps refusing a field over 128 KB.
    limit = csv.field_size_limit(2**31 - 1)
    try:
        return _read_csv_participants(path)
    finally:
        csv.field_size_limit(limit)


def _read_csv_participants(path: str | Path) -> list[tuple[int, dict[str, str]]]:
    rows = csv_cells(path, what="participants table")
    first = next(rows, None)
    if first is None:
        raise InputError("the file is empty.", path=path)
    header_line, header = first
    names = [name.strip().lower() for name in header]
    missing = [name for name in PARTICIPANT_COLUMNS if name not in names]
    if missing:
        raise InputError(
            f"no {', '.join(repr(m) for m in missing)} column.",
            path=path,
            line=header_line,
            hint="Give psiTurk's participants table as exported (a header line, 18 columns).",
        )
    found = []
    for line, row in rows:
        if len(row) != len(names):
            raise InputError(
                f"expected {len(names)} columns as the header names, found {len(row)}.",
                path=path,
                line=line,
                hint="Quote the datastring cell (it holds commas).",
            )
        found.append((line, dict(zip(names, row, strict=True))))
    return found


def read_participants(path: str | Path) -> tuple[KreimanJudges, int]:
    """Judges from psiTurk's participants table (CSV or SQLite): every participant's trials
    and ``questiondata`` from their ``datastring``; workers are named by ``uniqueid``.
    Also returns the number of participants with no data (an empty ``datastring``: they
    never started), who are left out."""
    demographics: dict[str, dict[str, str]] = {}
    trials: list[KreimanTrial] = []
    restarted: dict[str, int] = {}
    empty = 0
    for line, row in _participant_rows(path):
        worker = row["uniqueid"]
        if not row["datastring"].strip():
            empty += 1
            continue
        try:
            data = json.loads(row["datastring"])
        except json.JSONDecodeError as error:
            raise InputError(
                f"the participant's data is not valid JSON ({error.msg}).",
                path=path,
                line=line,
                field="datastring",
            ) from None
        entries = data.get("data") if isinstance(data, dict) else None
        if not isinstance(entries, list):
            raise InputError(
                "expected a JSON object with a 'data' list of trials.",
                path=path,
                line=line,
                field="datastring",
            )
        answers = data.get("questiondata") or {}
        if isinstance(answers, dict):
            demographics[worker] = {
                str(k): v if isinstance(v, str) else json.dumps(v) for k, v in answers.items()
            }
        run: list[KreimanTrial] = []
        for index, entry in enumerate(entries):
            where = f"datastring.data[{index}].trialdata"
            trial_data = entry.get("trialdata") if isinstance(entry, dict) else None
            if not isinstance(trial_data, dict):
                raise InputError(
                    "expected a 'trialdata' object.", path=path, line=line, field=where
                )
            if trial_data.get("phase") == "INSTRUCTIONS" and run:
                restarted[worker] = restarted.get(worker, 0) + len(run)
                run = []
            try:
                trial = _trial(worker, trial_data, path, line)
            except InputError as error:
                raise InputError(
                    error.problem, path=path, line=line, field=f"{where}.{error.field}"
                ) from None
            if trial is not None:
                run.append(trial)
        trials += run
    return KreimanJudges(demographics, trials, restarted), empty
