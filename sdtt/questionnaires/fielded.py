"""Which judgement files a study's answer key has scored, so it is never replaced.

Answers are scored against the answer key when they are imported (or judged by an LLM).
Rebuilding the study would write a new key with new pair ids and positions, and every
answer collected with the old questionnaire would then be rejected or, worse, scored
against the wrong truth. Each command that scores answers with a key notes it in
``STUDY/scored-with-this-key.jsonl``; ``sdtt questionnaire build`` refuses to replace a
key listed there, even with ``--force``.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sdtt.errors import InputError
from sdtt.jsonl import JsonlWriter, read_jsonl
from sdtt.tasks.judgements import Judgement
from sdtt.tasks.questionnaire import KEY_FILE, QUESTIONNAIRE_FILE, AnswerKey

USES_FILE = "scored-with-this-key.jsonl"
"""The study folder's list of judgement files scored with its answer key."""


def study_folder(study: str | Path) -> Path:
    """The folder of a study given as its folder or as one of its files."""
    path = Path(study)
    return path if path.is_dir() else path.parent


def note_scored(study: str | Path, judgements: str | Path, *, command: str) -> None:
    """Note in the study folder that ``command`` scored ``judgements`` with its key."""
    with JsonlWriter(study_folder(study) / USES_FILE) as writer:
        writer.write(
            {
                "type": "scored",
                "judgements": str(Path(judgements).resolve()),
                "command": command,
                "at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
            }
        )


def scored_uses(study: str | Path) -> list[dict[str, Any]]:
    """The notes of :func:`note_scored` for a study (none when it was never fielded)."""
    path = study_folder(study) / USES_FILE
    if not path.exists():
        return []
    return [record for _, record in read_jsonl(path) if record.get("type") == "scored"]


def check_replaceable(folder: str | Path, *, force: bool) -> None:
    """Refuse to build a study into ``folder`` when that would replace one.

    An existing study needs ``force``; a study whose key scored answers is never
    replaced, since those answers could no longer be read.
    """
    folder = Path(folder)
    existing = [name for name in (QUESTIONNAIRE_FILE, KEY_FILE) if (folder / name).exists()]
    if not existing:
        return
    uses = scored_uses(folder)
    if uses:
        last = uses[-1]
        raise InputError(
            f"holds a study whose answer key scored {len(uses)} judgement file(s) "
            f"(last: {last.get('judgements')} by '{last.get('command')}', {last.get('at')}); "
            "a new build would replace the key and make those answers unreadable.",
            path=folder,
            hint="Build into a new --out folder and keep this one as it is (--force does "
            f"not override this; see {USES_FILE} there).",
        )
    if not force:
        raise InputError(
            f"already holds a study ({', '.join(existing)}).",
            path=folder,
            hint="Pass --force to replace it, or --out to build elsewhere.",
        )


def check_same_build(earlier: Iterable[Judgement], key: AnswerKey, path: str | Path) -> None:
    """Refuse to add answers scored with ``key`` to a file holding another build's.

    A rebuilt study keeps its name but gets new pair ids; answers to both builds in one
    file would be scored together as if they were one questionnaire. Answers to other
    studies (pooled on purpose) are fine.
    """
    foreign = {j.pair_id for j in earlier if j.study == key.study and j.pair_id not in key.items}
    if foreign:
        raise InputError(
            f"holds answers to another build of study '{key.study}' ({len(foreign)} pair "
            f"id(s) its answer key does not have, e.g. {min(foreign)}); adding this build's "
            "would mix two questionnaires in one file.",
            path=path,
            hint="Write this build's answers to another --out.",
        )
