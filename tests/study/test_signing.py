"""Signed bundles: ``sdtt study bundle --sign KEY`` and what ``verify`` says of them,
checked against OpenSSH's own ``ssh-keygen`` (fingerprints, ``-Y sign``, ``-Y verify``)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
)

from sdtt.cli import main
from sdtt.study.bundle import MANIFEST, sha256_of
from tests.study.conftest import Reference

SSH_KEYGEN = shutil.which("ssh-keygen")
needs_ssh = pytest.mark.skipif(SSH_KEYGEN is None, reason="OpenSSH's ssh-keygen is not installed")


def _words(text: str) -> str:
    return " ".join(text.split())


def _ssh_key(folder: Path, name: str) -> Path:
    assert SSH_KEYGEN is not None
    key = folder / name
    subprocess.run(
        [SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-C", "me@lab", "-f", str(key)], check=True
    )
    return key


def _ssh_fingerprint(public: Path) -> str:
    assert SSH_KEYGEN is not None
    shown = subprocess.run([SSH_KEYGEN, "-l", "-f", str(public)], capture_output=True, text=True)
    return shown.stdout.split()[1]


def _rehash(bundle: Path, name: str) -> None:
    manifest = json.loads((bundle / MANIFEST).read_text("utf-8"))
    manifest["files"][name]["sha256"] = sha256_of(bundle / name)
    (bundle / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", "utf-8")


def _forge(bundle: Path) -> None:
    """Edit a recorded answer and make the manifest agree, as a careful forger would."""
    ledger = bundle / "study/ledger.jsonl"
    ledger.write_text(ledger.read_text("utf-8").replace('"text": "', '"text": "so ', 1), "utf-8")
    _rehash(bundle, "study/ledger.jsonl")


@pytest.fixture
def spec(reference: Reference) -> Path:
    return reference.out.parent / "study.toml"


@needs_ssh
def test_a_bundle_signed_with_an_ssh_key_names_its_signer_and_fails_once_forged(
    spec: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = _ssh_key(tmp_path, "id_ed25519")
    bundle = tmp_path / "bundle"
    assert main(["study", "bundle", str(spec), "--out", str(bundle), "--sign", str(key)]) == 0
    capsys.readouterr()
    assert main(["study", "verify", str(bundle), "--signer", f"{key}.pub"]) == 0
    out = _words(capsys.readouterr().out)
    assert f"signed by {_ssh_fingerprint(Path(f'{key}.pub'))} (ssh-ed25519)" in out

    # OpenSSH itself checks the signature over the manifest.
    allowed = tmp_path / "allowed_signers"
    allowed.write_text("me@lab " + Path(f"{key}.pub").read_text("utf-8"), "utf-8")
    assert SSH_KEYGEN is not None
    check = ["-Y", "verify", "-f", str(allowed), "-I", "me@lab", "-n", "sdtt-bundle"]
    checked = subprocess.run(
        [SSH_KEYGEN, *check, "-s", str(bundle / "manifest.json.sig")],
        input=(bundle / MANIFEST).read_bytes(),
        capture_output=True,
    )
    assert checked.returncode == 0, checked.stderr

    _forge(bundle)
    assert main(["study", "verify", str(bundle)]) == 1
    out = _words(capsys.readouterr().out)
    assert "manifest.json.sig: the signature does not match the manifest" in out


def test_a_forged_unsigned_bundle_passes_but_says_it_is_unsigned(
    spec: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = tmp_path / "bundle"
    assert main(["study", "bundle", str(spec), "--out", str(bundle)]) == 0
    _forge(bundle)
    capsys.readouterr()
    assert main(["study", "verify", str(bundle)]) == 0
    assert "unsigned: nothing says who made this bundle" in _words(capsys.readouterr().out)
    fingerprint = "SHA256:" + "A" * 43
    assert main(["study", "verify", str(bundle), "--signer", fingerprint]) == 1
    assert f"unsigned, but a signature by {fingerprint} was asked for" in _words(
        capsys.readouterr().out
    )


def test_a_bundle_signed_again_by_another_key_fails_a_verify_that_names_the_signer(
    spec: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A PEM key from cryptography: no OpenSSH needed.
    def pem(name: str) -> tuple[Path, Ed25519PrivateKey]:
        key = Ed25519PrivateKey.generate()
        path = tmp_path / name
        path.write_bytes(key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()))
        return path, key

    (mine, _), (theirs, _) = pem("mine.pem"), pem("theirs.pem")
    bundle = tmp_path / "bundle"
    assert main(["study", "bundle", str(spec), "--out", str(bundle), "--sign", str(mine)]) == 0
    capsys.readouterr()
    assert main(["study", "verify", str(bundle)]) == 0
    my_print = _words(capsys.readouterr().out).split("signed by ")[1].split()[0]
    forged = tmp_path / "forged"
    assert main(["study", "bundle", str(spec), "--out", str(forged), "--sign", str(theirs)]) == 0
    capsys.readouterr()
    assert main(["study", "verify", str(forged), "--signer", my_print]) == 1
    assert f"not by {my_print} as asked" in _words(capsys.readouterr().out)


def test_the_preregistration_is_stamped_into_the_signed_manifest(
    spec: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = tmp_path / "key.pem"
    key.write_bytes(
        Ed25519PrivateKey.generate().private_bytes(
            Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()
        )
    )
    prereg = tmp_path / "prereg.md"
    assert main(["study", "prereg", str(spec), "--out", str(prereg)]) == 0
    bundle = tmp_path / "bundle"
    args = ["study", "bundle", str(spec), "--out", str(bundle), "--sign", str(key)]
    assert main([*args, "--prereg", str(prereg)]) == 0
    manifest = json.loads((bundle / MANIFEST).read_text("utf-8"))
    assert manifest["prereg"]["sha256"] == sha256_of(prereg)
    assert manifest["prereg"]["spec_sha256"] == manifest["spec_sha256"]
    capsys.readouterr()
    assert main(["study", "verify", str(bundle), "--prereg", str(prereg)]) == 0
    assert "and the preregistration prereg.md (stamped with spec" in _words(capsys.readouterr().out)
    # Another document stamped with the same spec is not the one registered.
    other = tmp_path / "other.md"
    other.write_text(prereg.read_text("utf-8") + "\nAmended after the data came in.\n", "utf-8")
    assert main(["study", "verify", str(bundle), "--prereg", str(other)]) == 1
    assert "is not the preregistration the manifest names" in _words(capsys.readouterr().out)


@needs_ssh
def test_a_signature_made_by_ssh_keygen_verifies(
    spec: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = _ssh_key(tmp_path, "lab_key")
    bundle = tmp_path / "bundle"
    assert main(["study", "bundle", str(spec), "--out", str(bundle)]) == 0
    assert SSH_KEYGEN is not None
    subprocess.run(
        [
            SSH_KEYGEN,
            "-q",
            "-Y",
            "sign",
            "-f",
            str(key),
            "-n",
            "sdtt-bundle",
            str(bundle / MANIFEST),
        ],
        check=True,
        capture_output=True,
    )
    capsys.readouterr()
    assert main(["study", "verify", str(bundle)]) == 0
    assert f"signed by {_ssh_fingerprint(Path(f'{key}.pub'))}" in _words(capsys.readouterr().out)


def test_a_key_that_is_not_ed25519_is_one_clear_error(
    spec: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = tmp_path / "not-a-key"
    key.write_text("hello\n", "utf-8")
    bundle = tmp_path / "bundle"
    assert main(["study", "bundle", str(spec), "--out", str(bundle), "--sign", str(key)]) == 2
    err = _words(capsys.readouterr().err)
    assert "not-a-key: is not a private key that can be read" in err
    assert "ssh-keygen -t ed25519" in err
    assert not bundle.exists()
