"""``sdtt study bundle``: one folder (or ``.tar.gz``) holding everything a study was.

The bundle holds the spec (``spec.toml``), the study's files (``study/``: pseudo-dialogue
chains, chats and their event logs, questionnaire and answer key, survey export,
judgements, the rating task and its cohorts' ratings, the cost ledger with every prompt
as rendered and every answer, the report and ``figures.json``), the persona files, and
``manifest.json``: the SHA-256 of every file, the model strings and the versions the
providers reported, the seeds, and the versions of sdtt, Python and every installed
distribution.

Every file of ``study/`` is a function of the spec, the seed and the models' answers
(paths are relative to the study, nothing is read off a clock), so a rerun writes the
same bytes, except the files :func:`reproducible` names as not: the run log (when each
call was made and how long it took) and a batch judge's job ledger (the provider's job
ids). The manifest hashes them too, and marks them ``"reproducible": false``.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import platform
import shutil
import tarfile
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from sdtt import __version__
from sdtt.errors import InputError
from sdtt.files import write_text_atomic
from sdtt.judges.batched import LEDGER_SUFFIX as BATCH_LEDGER_SUFFIX
from sdtt.personas.store import locate_persona
from sdtt.study import signing
from sdtt.study.ledger import LEDGER_FILE, RUN_LOG_FILE, read_ledger
from sdtt.study.prereg import stamped_hash
from sdtt.study.signing import SIGNATURE_FILE, load_signing_key
from sdtt.study.spec import Study
from sdtt.study.steps import DONE_FOLDER

MANIFEST = "manifest.json"
SPEC_FILE = "spec.toml"
STUDY_FOLDER = "study"
PERSONA_FOLDER = "personas"
PREREG_FILE = "prereg.md"
"""A preregistration given to ``sdtt study bundle --prereg`` (also the name ``sdtt study
prereg`` gives it inside the study)."""
BUNDLE_VERSION = 1


_LEFT_OUT = (DONE_FOLDER, "*.partial", "*.lock")
"""What a study folder holds that is no part of the study: step markers, cut-short
writes and locks."""


def reproducible(relative: str) -> bool:
    """Whether a rerun of the study writes this file (relative to the study) again byte
    for byte: all but the run log and batch judges' job ledgers."""
    name = relative.rsplit("/", 1)[-1]
    return name != RUN_LOG_FILE and not name.endswith(BATCH_LEDGER_SUFFIX)


def study_files(out: Path) -> dict[str, Path]:
    """Every file of the study folder ``out`` a bundle holds, by its path relative to it."""
    found: dict[str, Path] = {}
    for path in sorted(out.rglob("*")):
        relative = path.relative_to(out)
        skipped = any(
            fnmatch.fnmatch(part, pattern) for part in relative.parts for pattern in _LEFT_OUT
        )
        if path.is_file() and not skipped:
            found[relative.as_posix()] = path
    return found


def sha256_of(path: Path) -> str:
    """The SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _kind(relative: str) -> str:
    """What a bundled file is, for readers of the manifest."""
    parts = relative.split("/")
    if relative == SPEC_FILE:
        return "spec"
    if parts[0] == PERSONA_FOLDER:
        return "persona"
    if parts[-1] == PREREG_FILE:
        return "preregistration"
    name = parts[-1]
    inner = parts[1] if len(parts) > 1 else ""
    kinds = {
        "pseudo": "chain",
        "questionnaire": "answer key" if name == "answer-key.json" else "questionnaire",
        "judgements": "judgements",
        "survey": "survey export",
        "align": "rating task and cohort ratings",
        "report": "report",
        "results": "results as data (tidy rows)",
    }
    if inner == "chats":
        return "event log" if name.endswith(".events.jsonl") else "chat"
    if name == LEDGER_FILE:
        return "ledger (calls, rendered prompts, answers)"
    if name == RUN_LOG_FILE:
        return "run log (when each call was made, how long it took): not reproducible"
    return kinds.get(inner, "other")


def packages() -> dict[str, str]:
    """Every installed distribution and its version."""
    found: dict[str, str] = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name:
            found[name] = dist.version
    return dict(sorted(found.items(), key=lambda item: item[0].lower()))


def _models(study: Study) -> dict[str, list[str]]:
    """Each model string and the model versions its provider reported answering."""
    reported: dict[str, set[str]] = {}
    for record in read_ledger(study.out / LEDGER_FILE):
        reported.setdefault(record["model"], set()).add(record.get("reported_model") or "")
    return {model: sorted(v for v in versions if v) for model, versions in sorted(reported.items())}


def _seeds(study: Study) -> dict[str, int]:
    spec = study.spec
    seeds = {"study": spec.study.seed, "questionnaire": spec.questionnaire.seed}
    seeds.update({f"judge {name}": judge.seed for name, judge in spec.judges.items()})
    return seeds


def write_bundle(
    study: Study, dest: Path, *, sign: Path | None = None, prereg: Path | None = None
) -> Path:
    """Copy the study into ``dest`` (a folder, or an archive when it ends in
    ``.tar.gz``) with its manifest; returns what was written. ``prereg`` (else the
    study's ``prereg.md``, if any) is named in the manifest with the spec hash it was
    stamped with; ``sign``: the Ed25519 private key that signs the manifest
    (:mod:`sdtt.study.signing`)."""
    if not study.out.is_dir():
        raise InputError("the study has not been run yet.", path=study.out)
    key = load_signing_key(sign) if sign is not None else None
    stamped = stamped_hash(prereg) if prereg is not None else None
    archive = dest.name.endswith(".tar.gz")
    folder = dest.with_name(dest.name.removesuffix(".tar.gz")) if archive else dest
    if folder.exists() and any(folder.iterdir()):
        raise InputError("already exists and is not empty.", path=folder, hint="Give a new --out.")
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(study.path, folder / SPEC_FILE)
    shutil.copytree(study.out, folder / STUDY_FOLDER, ignore=shutil.ignore_patterns(*_LEFT_OUT))
    if prereg is not None:
        shutil.copyfile(prereg, folder / PREREG_FILE)
    personas = folder / PERSONA_FOLDER
    personas.mkdir()
    for name in study.spec.design.personas:
        source = locate_persona(name)
        shutil.copyfile(source, personas / source.name)
    files = {
        path.relative_to(folder).as_posix(): path
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.name not in (MANIFEST, SIGNATURE_FILE)
    }
    manifest: dict[str, Any] = {
        "version": BUNDLE_VERSION,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "study": study.spec.study.name,
        "spec_sha256": study.sha256,
        "files": {
            name: {
                "sha256": sha256_of(path),
                "bytes": path.stat().st_size,
                "kind": _kind(name),
                "reproducible": reproducible(name),
            }
            for name, path in files.items()
        },
        "models": _models(study),
        "seeds": _seeds(study),
        "sdtt": __version__,
        "python": platform.python_version(),
        "packages": packages(),
    }
    registered = PREREG_FILE if prereg is not None else f"{STUDY_FOLDER}/{PREREG_FILE}"
    if (folder / registered).is_file():
        manifest["prereg"] = {
            "file": registered,
            "sha256": sha256_of(folder / registered),
            "spec_sha256": stamped or stamped_hash(folder / registered),
        }
    text = json.dumps(manifest, indent=1, ensure_ascii=False) + "\n"
    write_text_atomic(folder / MANIFEST, text)
    if key is not None:
        write_text_atomic(folder / SIGNATURE_FILE, signing.sign(key, text.encode("utf-8")))
    if not archive:
        return folder
    with tarfile.open(dest, "w:gz") as tar:
        tar.add(folder, arcname=folder.name)
    shutil.rmtree(folder)
    return dest
