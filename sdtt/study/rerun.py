"""``sdtt study verify --rerun BUNDLE``: run the bundle's study again from its recorded
answers and compare what it writes with the bundle, byte for byte.

The study is run in a fresh folder from the bundle's ``spec.toml``, every model call
answered by the ``replay`` provider (:mod:`sdtt.models.replay`) from the bundle's cost
ledger: no network, no cost. What people made (their chats, a survey's answer files) is
copied in, as it cannot be made again, and so is a preregistration written into the
study's folder before it ran. A replayed model keeps the recorded model's name, so the
chats give each of its answers the thinking time the recorded run gave it
(:func:`~sdtt.engine.simulate.thinking_time`: a rule of the answer, not of how long it
took to come). Every file of the bundle's ``study/`` a rerun
writes again (:func:`~sdtt.study.bundle.reproducible`: all but the run log and batch job
ledgers) is then compared with the one written now; a file that differs is named with
the first fields that differ (line, field, both values).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sdtt.errors import InputError
from sdtt.models.registry import create_api
from sdtt.models.replay import PROVIDER, Recording
from sdtt.personas.store import locate_persona
from sdtt.study.bundle import (
    PERSONA_FOLDER,
    PREREG_FILE,
    SPEC_FILE,
    STUDY_FOLDER,
    reproducible,
    sha256_of,
    study_files,
)
from sdtt.study.ledger import LEDGER_FILE, read_ledger
from sdtt.study.runner import Drive, StudyRunner
from sdtt.study.spec import read_spec
from sdtt.study.steps import SURVEY_FOLDER
from sdtt.study.verify import opened_bundle

SHOWN_PER_FILE = 5
"""Differing fields named per file; the rest are counted."""


@dataclass
class Rerun:
    """What running a bundle's study again found; ``ok`` when every file matched."""

    compared: int = 0
    differences: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """What the rerun could not make the same, and why (said, not counted as differing)."""
    finished: bool = True

    @property
    def ok(self) -> bool:
        """Whether the rerun wrote every compared file byte for byte as the bundle has it."""
        return self.finished and not self.differences


def rerun_bundle(bundle: Path, *, drive: Drive) -> Rerun:
    """Run the study of ``bundle`` (a folder or ``.tar.gz``) again from its recorded
    answers and compare every reproducible file."""
    with opened_bundle(bundle) as folder, tempfile.TemporaryDirectory() as tmp:
        return _rerun(folder, Path(tmp) / STUDY_FOLDER, drive)


def _rerun(bundle: Path, out: Path, drive: Drive) -> Rerun:
    recorded = bundle / STUDY_FOLDER
    study = read_spec(bundle / SPEC_FILE, out=out)
    result = Rerun()
    out.mkdir(parents=True)
    if not study.simulated and (recorded / "chats").is_dir():
        shutil.copytree(recorded / "chats", out / "chats")
    if study.spec.survey is not None and (recorded / SURVEY_FOLDER).is_dir():
        shutil.copytree(recorded / SURVEY_FOLDER, out / SURVEY_FOLDER)
        if study.spec.survey.answers:
            result.notes.append(
                "the survey's answers were read from survey.answers beside the spec, which "
                "the bundle does not hold: put them in OUT/survey/answers to rerun it"
            )
    if (recorded / PREREG_FILE).is_file():
        # Written by sdtt study prereg, before the run: a document, not a result.
        shutil.copyfile(recorded / PREREG_FILE, out / PREREG_FILE)
    result.notes += _persona_notes(bundle, study.spec.design.personas)
    recording = Recording(read_ledger(recorded / LEDGER_FILE))

    def replayed(name: str) -> Any:
        return create_api(f"{PROVIDER}/{name}", recording=recording)

    run = StudyRunner(study, drive=drive, api_factory=replayed, replay=True).run()
    if not run.finished:
        result.finished = False
        waiting = run.waiting.label if run.waiting is not None else "the budget"
        result.differences.append(f"the rerun stopped before the end (at {waiting})")
    if recording.missed:
        result.differences.append(
            f"the rerun asked {len(recording.missed)} call(s) the ledger holds no answer to "
            f"(models: {', '.join(sorted(set(recording.missed)))})"
        )
    if recording.unused:
        result.differences.append(
            f"{recording.unused} recorded answer(s) in the ledger were never asked for"
        )
    was = {n: p for n, p in study_files(recorded).items() if reproducible(n)}
    now = {n: p for n, p in study_files(out).items() if reproducible(n)}
    for name in sorted(was.keys() | now.keys()):
        if name not in now:
            result.differences.append(f"{name}: in the bundle, not written by the rerun")
        elif name not in was:
            result.differences.append(f"{name}: written by the rerun, not in the bundle")
        else:
            result.compared += 1
            result.differences += file_differences(
                name, was[name].read_bytes(), now[name].read_bytes()
            )
    return result


def _persona_notes(bundle: Path, personas: list[str]) -> list[str]:
    """The rerun uses the personas installed here: say so when one differs."""
    notes = []
    for name in personas:
        bundled = sorted((bundle / PERSONA_FOLDER).glob("*.jsonl"))
        try:
            here = locate_persona(name)
        except InputError:  # a missing persona: the rerun itself says so
            continue
        match = [p for p in bundled if p.name == here.name]
        if match and sha256_of(match[0]) != sha256_of(here):
            notes.append(
                f"persona {name}: the installed file ({here}) differs from the bundle's; "
                "the rerun used the installed one"
            )
    return notes


def file_differences(name: str, was: bytes, now: bytes) -> list[str]:
    """How the bytes a rerun wrote differ from the bundle's: none when equal; else the
    first differing lines and fields of a JSON or JSONL file, or the sizes of another."""
    if was == now:
        return []
    found: list[str] = []
    if name.endswith(".jsonl"):
        old, new = was.decode("utf-8", "replace").splitlines(), now.decode("utf-8", "replace")
        new_lines = new.splitlines()
        if len(old) != len(new_lines):
            found.append(f"{name}: {len(old)} lines in the bundle, {len(new_lines)} now")
        for number, (a, b) in enumerate(zip(old, new_lines, strict=False), start=1):
            if a != b:
                found += [f"{name} line {number}: {d}" for d in _json_differences(a, b)]
    elif name.endswith(".json"):
        found += [f"{name}: {d}" for d in _json_differences(was.decode(), now.decode())]
    if not found:
        found.append(f"{name}: differs ({len(was)} bytes in the bundle, {len(now)} now)")
    if len(found) > SHOWN_PER_FILE:
        found = [*found[:SHOWN_PER_FILE], f"{name}: ... and {len(found) - SHOWN_PER_FILE} more"]
    return found


def _json_differences(was: str, now: str) -> list[str]:
    try:
        old, new = json.loads(was), json.loads(now)
    except json.JSONDecodeError:
        return ["not the same text"]
    found: list[str] = []
    _walk(old, new, "", found)
    return found or ["the same values, written otherwise"]


def _walk(old: Any, new: Any, where: str, found: list[str]) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(old.keys() | new.keys()):
            _walk(old.get(key), new.get(key), f"{where}.{key}" if where else str(key), found)
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for index, (a, b) in enumerate(zip(old, new, strict=True)):
            _walk(a, b, f"{where}[{index}]", found)
    elif old != new:
        found.append(f"field {where or '(whole)'}: was {_short(old)}, now {_short(new)}")


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."
