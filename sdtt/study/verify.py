"""``sdtt study verify BUNDLE``: check every hash, and compute every figure again.

Each file listed in the manifest must be there with its hash (and no unlisted file
beside them); the spec must be the one the manifest names. Then the report's figures
are computed again from the bundle's raw records (judgements, questionnaire and answer
key, ledger) and compared, number by number, with the bundled ``figures.json``. With a
preregistration, the bundle's spec must be the registered one.
"""

from __future__ import annotations

import json
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sdtt.errors import InputError, SdttError
from sdtt.files import read_file_bytes
from sdtt.study.bundle import MANIFEST, SPEC_FILE, STUDY_FOLDER, sha256_of
from sdtt.study.figures import FIGURES_FILE, compute_report, figures_of
from sdtt.study.ledger import LEDGER_FILE, Ledger
from sdtt.study.prereg import stamped_hash
from sdtt.study.signing import SIGNATURE_FILE, BadSignature, Signer, check
from sdtt.study.spec import read_spec
from sdtt.study.steps import REPORT_FOLDER


@dataclass
class Verification:
    """What verifying a bundle found; ``ok`` when nothing."""

    files: int = 0
    problems: list[str] = field(default_factory=list)
    figures_checked: int = 0
    prereg_hash: str | None = None
    signer: Signer | None = None
    """Who signed the manifest (None: unsigned, or the signature is bad)."""
    signed: bool = False
    """Whether the bundle holds a signature at all (good or bad)."""
    registered: dict[str, Any] | None = None
    """The preregistration the manifest names: file, its hash, the spec hash it stamps."""

    @property
    def ok(self) -> bool:
        """Whether every hash and every figure matched."""
        return not self.problems


@contextmanager
def opened_bundle(bundle: Path) -> Iterator[Path]:
    """The bundle's folder: ``bundle`` itself, or a ``.tar.gz`` unpacked for the block."""
    if not bundle.exists():
        raise InputError(
            "bundle not found.",
            path=bundle,
            hint="Give the folder or .tar.gz written by 'sdtt study bundle SPEC -o BUNDLE'.",
        )
    if not (bundle.is_file() and bundle.name.endswith(".tar.gz")):
        yield bundle
        return
    with tempfile.TemporaryDirectory() as tmp:
        try:
            with tarfile.open(bundle) as tar:
                tar.extractall(tmp, filter="data")
        except (tarfile.TarError, OSError) as error:
            raise InputError(f"cannot be unpacked ({error}).", path=bundle) from None
        inner = [p for p in Path(tmp).iterdir() if p.is_dir()]
        if len(inner) != 1:
            raise InputError("holds no single bundle folder.", path=bundle)
        yield inner[0]


def read_manifest(bundle: Path) -> dict[str, Any]:
    """The manifest of a bundle folder."""
    manifest_path = bundle / MANIFEST
    try:
        manifest = json.loads(read_file_bytes(manifest_path, what="bundle manifest"))
    except json.JSONDecodeError as error:
        raise InputError(f"is not valid JSON ({error}).", path=manifest_path) from None
    if not isinstance(manifest, dict):
        raise InputError("must hold a JSON object.", path=manifest_path)
    return manifest


def verify_bundle(
    bundle: Path, *, prereg: Path | None = None, signer: str | None = None
) -> Verification:
    """Check ``bundle`` (a folder or a ``.tar.gz``): its signature, every hash, and its
    figures computed again. ``signer``: the fingerprint (``SHA256:...``) the signature
    must be made by (an unsigned bundle then fails too)."""
    with opened_bundle(bundle) as folder:
        result = _verify(folder, prereg)
    if signer is not None:
        if result.signer is None and not result.signed:
            result.problems.append(f"unsigned, but a signature by {signer} was asked for")
        elif result.signer is not None and result.signer.fingerprint != signer:
            result.problems.append(
                f"signed by {result.signer.fingerprint}, not by {signer} as asked"
            )
    return result


def _check_signature(bundle: Path, manifest: dict[str, Any], result: Verification) -> None:
    path = bundle / SIGNATURE_FILE
    if not path.exists():
        return
    result.signed = True
    try:
        result.signer = check(path.read_text("utf-8", "replace"), (bundle / MANIFEST).read_bytes())
    except BadSignature as error:
        result.problems.append(f"{SIGNATURE_FILE}: {error}")
    registered = manifest.get("prereg")
    if isinstance(registered, dict):
        result.registered = registered
        if registered.get("spec_sha256") != manifest.get("spec_sha256"):
            result.problems.append(
                f"the preregistration {registered.get('file')} was stamped with another "
                "spec than the bundle's: the design changed after registration"
            )


def _verify(bundle: Path, prereg: Path | None) -> Verification:
    manifest = read_manifest(bundle)
    result = Verification()
    _check_signature(bundle, manifest, result)
    _check_hashes(bundle, manifest, result)
    spec_path = bundle / SPEC_FILE
    if spec_path.exists() and sha256_of(spec_path) != manifest.get("spec_sha256"):
        result.problems.append(f"{SPEC_FILE}: not the spec the manifest names")
    named = manifest.get("prereg")
    if prereg is not None and isinstance(named, dict) and sha256_of(prereg) != named.get("sha256"):
        result.problems.append(
            f"{prereg} is not the preregistration the manifest names ({named.get('file')})"
        )
    if prereg is not None:
        registered = stamped_hash(prereg)
        result.prereg_hash = registered
        if registered != manifest.get("spec_sha256"):
            result.problems.append(
                f"the bundle's spec ({str(manifest.get('spec_sha256'))[:12]}) is not the "
                f"preregistered one ({registered[:12]}): the design changed after registration"
            )
    try:
        _check_figures(bundle, result)
    except SdttError as error:
        # A record too broken to read is one more difference, after the hashes found.
        result.problems.append(f"the figures could not be computed again: {error}")
    return result


def _check_hashes(bundle: Path, manifest: dict[str, Any], result: Verification) -> None:
    listed: dict[str, Any] = manifest.get("files", {})
    for name, entry in sorted(listed.items()):
        path = bundle / name
        if not path.is_file():
            result.problems.append(f"{name}: missing")
            continue
        result.files += 1
        if sha256_of(path) != entry["sha256"]:
            result.problems.append(f"{name}: its hash differs from the manifest (the file changed)")
    for path in sorted(bundle.rglob("*")):
        name = path.relative_to(bundle).as_posix()
        if path.is_file() and name not in (MANIFEST, SIGNATURE_FILE) and name not in listed:
            result.problems.append(f"{name}: not in the manifest")


def _check_figures(bundle: Path, result: Verification) -> None:
    """Compute the report again from the raw records and compare every cell."""
    figures_path = bundle / STUDY_FOLDER / REPORT_FOLDER / FIGURES_FILE
    if not figures_path.exists():
        result.problems.append(f"{STUDY_FOLDER}/{REPORT_FOLDER}/{FIGURES_FILE}: missing")
        return
    stored = json.loads(figures_path.read_text(encoding="utf-8"))
    study = read_spec(bundle / SPEC_FILE, out=bundle / STUDY_FOLDER)
    ledger = Ledger(study.out / LEDGER_FILE, budget=study.spec.study.budget)
    with tempfile.TemporaryDirectory() as tmp:
        again = figures_of(compute_report(study, ledger, Path(tmp)))
    result.figures_checked = sum(
        len(row) for section in again["sections"] for row in section["rows"]
    ) + len(again["headline"])
    result.problems += figure_differences(stored, again)


def figure_differences(stored: dict[str, Any], again: dict[str, Any]) -> list[str]:
    """Every figure of ``stored`` that ``again`` computes otherwise, one line each."""
    found = []
    for index, (was, now) in enumerate(zip(stored["headline"], again["headline"], strict=False)):
        if was != now:
            found.append(f"headline line {index + 1}: report says {was!r}, records give {now!r}")
    if len(stored["headline"]) != len(again["headline"]):
        found.append("the headline has another number of lines")
    old = {s["title"]: s for s in stored["sections"]}
    new = {s["title"]: s for s in again["sections"]}
    for title in old.keys() - new.keys():
        found.append(f"table {title!r}: in the report, not computed from the records")
    for title in new.keys() - old.keys():
        found.append(f"table {title!r}: computed from the records, not in the report")
    for title in [t for t in old if t in new]:
        header = old[title]["header"]
        was_rows, now_rows = old[title]["rows"], new[title]["rows"]
        if len(was_rows) != len(now_rows):
            found.append(
                f"table {title!r}: {len(was_rows)} rows in the report, "
                f"{len(now_rows)} from the records"
            )
        for r, (was_row, now_row) in enumerate(zip(was_rows, now_rows, strict=False), start=1):
            for c, (was, now) in enumerate(zip(was_row, now_row, strict=False)):
                if was != now:
                    column = header[c] if c < len(header) else str(c + 1)
                    found.append(
                        f"table {title!r} row {r} ({was_row[0]}) {column}: report says "
                        f"{was!r}, records give {now!r}"
                    )
    return found
