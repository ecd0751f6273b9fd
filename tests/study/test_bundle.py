"""``sdtt study bundle`` and ``verify``: hashes, versions, and figures computed again."""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path

import pytest

from sdtt.cli import main
from sdtt.study.bundle import MANIFEST, sha256_of, write_bundle
from sdtt.study.prereg import prereg_text
from sdtt.study.spec import read_spec
from sdtt.study.verify import verify_bundle
from tests.study.conftest import Reference
from tests.study.helpers import write_spec


@pytest.fixture
def study_spec(reference: Reference) -> Path:
    """The spec of the finished reference study."""
    return reference.out.parent / "study.toml"


def _bundle(spec: Path, dest: Path) -> Path:
    return write_bundle(read_spec(spec), dest)


def _rehash(bundle: Path, name: str) -> None:
    """Make the manifest agree with an edited file, as a careful forger would."""
    manifest = json.loads((bundle / MANIFEST).read_text("utf-8"))
    manifest["files"][name]["sha256"] = sha256_of(bundle / name)
    (bundle / MANIFEST).write_text(json.dumps(manifest), "utf-8")


def test_the_manifest_names_every_file_model_seed_and_version(
    study_spec: Path, tmp_path: Path
) -> None:
    bundle = _bundle(study_spec, tmp_path / "b")
    manifest = json.loads((bundle / MANIFEST).read_text("utf-8"))
    kinds = {entry["kind"] for entry in manifest["files"].values()}
    assert {
        "spec",
        "persona",
        "chain",
        "chat",
        "event log",
        "questionnaire",
        "answer key",
        "judgements",
        "report",
    } <= kinds
    assert any(k.startswith("ledger") for k in kinds)  # rendered prompts and answers
    for name, entry in manifest["files"].items():
        assert sha256_of(bundle / name) == entry["sha256"]
    assert manifest["spec_sha256"] == read_spec(study_spec).sha256
    assert manifest["models"] == {"mock/chatty": ["mock/chatty"]}
    assert manifest["seeds"] == {"study": 3, "questionnaire": 1, "judge llm": 0}
    assert manifest["packages"]["pydantic"] == metadata.version("pydantic")
    assert manifest["sdtt"] == metadata.version("sdtt") or manifest["sdtt"]
    ledger = [
        json.loads(line) for line in (bundle / "study/ledger.jsonl").read_text("utf-8").splitlines()
    ]
    assert all(record["prompt"]["system"] or record["prompt"]["user"] for record in ledger)


def test_an_untouched_bundle_verifies(study_spec: Path, tmp_path: Path) -> None:
    result = verify_bundle(_bundle(study_spec, tmp_path / "b"))
    assert result.ok, result.problems
    assert result.figures_checked > 10


def test_an_altered_judgement_is_caught_by_the_recomputed_figures(
    study_spec: Path, tmp_path: Path
) -> None:
    bundle = _bundle(study_spec, tmp_path / "b")
    name = "study/judgements/llm.jsonl"
    lines = (bundle / name).read_text("utf-8").splitlines()
    for index, line in enumerate(lines):
        record = json.loads(line)
        if record.get("pair_kind") == "test" and record.get("correct") is not None:
            record["correct"] = not record["correct"]
            record["choice"] = {"A": "B", "B": "A"}[record["choice"]]
            lines[index] = json.dumps(record)
            break
    else:
        pytest.fail("no test judgement to alter")
    (bundle / name).write_text("\n".join(lines) + "\n", "utf-8")
    _rehash(bundle, name)  # the hash no longer tells: only the figures can
    result = verify_bundle(bundle)
    assert not result.ok
    assert any("report says" in p and "records give" in p for p in result.problems)
    assert not any("hash" in p for p in result.problems)


def test_an_altered_file_is_caught_by_its_hash(study_spec: Path, tmp_path: Path) -> None:
    bundle = _bundle(study_spec, tmp_path / "b.tar.gz")
    assert bundle.name == "b.tar.gz" and verify_bundle(bundle).ok
    folder = _bundle(study_spec, tmp_path / "c")
    chat = next((folder / "study/chats/cell-001").glob("*.events.jsonl"))
    chat.write_text(chat.read_text("utf-8") + "\n", "utf-8")
    (folder / "study/extra.txt").write_text("slipped in", "utf-8")
    result = verify_bundle(folder)
    name = chat.relative_to(folder).as_posix()
    assert f"{name}: its hash differs from the manifest (the file changed)" in result.problems
    assert "study/extra.txt: not in the manifest" in result.problems


def test_verify_checks_a_bundle_against_its_preregistration(
    study_spec: Path, tmp_path: Path
) -> None:
    prereg = tmp_path / "prereg.md"
    prereg.write_text(prereg_text(read_spec(study_spec)), "utf-8")
    bundle = _bundle(study_spec, tmp_path / "b")
    assert verify_bundle(bundle, prereg=prereg).ok
    other = tmp_path / "other"
    spec = write_spec(other)
    spec.write_text(spec.read_text("utf-8").replace("seed = 3", "seed = 4"), "utf-8")
    (other / "prereg.md").write_text(prereg_text(read_spec(spec)), "utf-8")
    result = verify_bundle(bundle, prereg=other / "prereg.md")
    assert any("not the preregistered one" in p for p in result.problems)


def test_the_command_line_bundles_and_verifies(
    study_spec: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dest = tmp_path / "bundle"
    assert main(["study", "bundle", str(study_spec), "--out", str(dest)]) == 0
    assert main(["study", "verify", str(dest)]) == 0
    assert "ok:" in capsys.readouterr().out
    (dest / "study/questionnaire/answer-key.json").write_text("{}", "utf-8")
    assert main(["study", "verify", str(dest)]) != 0
    assert "answer-key.json: its hash differs" in capsys.readouterr().out


def test_verify_says_the_preregistration_matched_and_names_a_missing_bundle(
    study_spec: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prereg = tmp_path / "prereg.md"
    assert main(["study", "prereg", str(study_spec), "--out", str(prereg)]) == 0
    dest = tmp_path / "bundle.tar.gz"
    assert main(["study", "bundle", str(study_spec), "--out", str(dest)]) == 0
    capsys.readouterr()
    assert main(["study", "verify", str(dest), "--prereg", str(prereg)]) == 0
    assert "the spec is the preregistered one" in capsys.readouterr().out
    assert main(["study", "verify", str(tmp_path / "nope.tar.gz")]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "nope.tar.gz: bundle not found" in err and "sdtt study bundle" in err
