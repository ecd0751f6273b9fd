"""``sdtt study verify --rerun``: the bundle's study run again from its recorded answers
(the replay provider: no network, no cost), compared byte for byte."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sdtt.cli import main
from sdtt.models.base import GenerateConfig, Prompt
from sdtt.models.registry import PROVIDERS, create_api
from sdtt.models.replay import Recording, call_key
from sdtt.study.bundle import MANIFEST, sha256_of
from tests.study.conftest import Reference


def _words(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture
def bundle(reference: Reference, tmp_path: Path) -> Path:
    """The reference study, bundled from a copy in another folder."""
    elsewhere = tmp_path / "made" / "elsewhere"
    shutil.copytree(reference.out.parent, elsewhere)
    # A preregistration in the study's folder, as sdtt study prereg writes it by default.
    assert main(["study", "prereg", str(elsewhere / "study.toml")]) == 0
    dest = tmp_path / "bundle"
    assert main(["study", "bundle", str(elsewhere / "study.toml"), "--out", str(dest)]) == 0
    return dest


def test_a_bundle_made_in_another_folder_reruns_byte_identical(
    bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    archive = tmp_path / "moved.tar.gz"
    shutil.make_archive(str(archive).removesuffix(".tar.gz"), "gztar", tmp_path, bundle.name)
    capsys.readouterr()
    assert main(["study", "verify", str(archive), "--rerun"]) == 0
    out = _words(capsys.readouterr().out)
    assert "the rerun is byte-identical" in out
    manifest = json.loads((bundle / MANIFEST).read_text("utf-8"))
    compared = [n for n, e in manifest["files"].items() if n.startswith("study/")]
    reproducible = [n for n in compared if manifest["files"][n]["reproducible"]]
    assert f"{len(reproducible)} files written again match" in out
    assert manifest["files"]["study/run-log.jsonl"]["reproducible"] is False


def test_an_edited_answer_in_the_ledger_is_caught_by_the_rerun_alone(
    bundle: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A forger flips one judge's answer in the ledger and rehashes it: the judgements
    # and figures still agree with each other, so only the rerun can tell.
    ledger = bundle / "study/ledger.jsonl"
    records = [json.loads(line) for line in ledger.read_text("utf-8").splitlines()]
    judged = next(r for r in records if r["stage"] == "judges")
    judged["text"] = "A" if judged["text"].strip() == "B" else "B"
    ledger.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in records), "utf-8")
    manifest = json.loads((bundle / MANIFEST).read_text("utf-8"))
    manifest["files"]["study/ledger.jsonl"]["sha256"] = sha256_of(ledger)
    (bundle / MANIFEST).write_text(json.dumps(manifest), "utf-8")
    capsys.readouterr()
    assert main(["study", "verify", str(bundle)]) == 0
    capsys.readouterr()
    assert main(["study", "verify", str(bundle), "--rerun"]) == 1
    out = _words(capsys.readouterr().out)
    assert "rerun differs: judgements/llm.jsonl line" in out
    assert "field choice: was" in out


@pytest.mark.trio
async def test_the_replay_provider_answers_what_was_recorded_once_each() -> None:
    assert PROVIDERS["replay"].free and PROVIDERS["replay"].local
    prompt, config = Prompt(instructions="s", task="u"), GenerateConfig()
    record = {
        "key": call_key("openai/gpt-4o-mini", prompt, config),
        "model": "openai/gpt-4o-mini",
        "reported_model": "gpt-4o-mini-2024-07-18",
        "text": "hello",
        "input_tokens": 3,
        "cached_input_tokens": 0,
        "output_tokens": 1,
        "logprobs": None,
    }
    recording = Recording([record])
    api = create_api("replay/openai/gpt-4o-mini", recording=recording)
    assert api.name == "openai/gpt-4o-mini"
    output = await api.generate(prompt, config)
    assert (output.text, output.model) == ("hello", "gpt-4o-mini-2024-07-18")
    with pytest.raises(Exception, match="no recorded answer"):
        await api.generate(prompt, config)
    assert recording.missed == ["openai/gpt-4o-mini"] and recording.unused == 0
