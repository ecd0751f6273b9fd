"""Signed bundles: ``manifest.json.sig`` beside the manifest, in OpenSSH's signature
format (``ssh-keygen -Y sign``, namespace ``sdtt-bundle``), made with an Ed25519 key.

The signature covers the manifest's bytes, and so every file's hash, the models, the
seeds and the preregistration the manifest names (its hash and the spec hash it was
stamped with). A researcher signs with the key they already have
(``sdtt study bundle SPEC --sign ~/.ssh/id_ed25519``; a PEM Ed25519 key works too); anyone
checks it with ``sdtt study verify``, or with OpenSSH alone::

    ssh-keygen -Y verify -f allowed_signers -I NAME -n sdtt-bundle \\
        -s manifest.json.sig < manifest.json

The format (PROTOCOL.sshsig in OpenSSH's sources): the armoured blob holds the magic
``SSHSIG``, version 1, the public key, the namespace, a reserved string, the hash
algorithm and the signature of ``SSHSIG`` + namespace + reserved + algorithm + the
message's hash. The keys are read and the signatures made by ``cryptography``.
"""

from __future__ import annotations

import base64
import hashlib
import os
import struct
import textwrap
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    PublicFormat,
    load_pem_private_key,
    load_ssh_private_key,
    load_ssh_public_key,
)

from sdtt.errors import InputError
from sdtt.files import read_file_bytes

SIGNATURE_FILE = "manifest.json.sig"
NAMESPACE = b"sdtt-bundle"
PASSPHRASE_ENV = "SDTT_KEY_PASSPHRASE"
"""Where the passphrase of an encrypted key is read from (never from a file or a flag)."""
_MAGIC = b"SSHSIG"
_KEY_TYPE = b"ssh-ed25519"
_BEGIN = "-----BEGIN SSH SIGNATURE-----"
_END = "-----END SSH SIGNATURE-----"
_HASHES = {b"sha512": hashlib.sha512, b"sha256": hashlib.sha256}
KEY_HINT = "Give an Ed25519 private key: an OpenSSH key (ssh-keygen -t ed25519) or a PEM one."


class BadSignature(Exception):
    """A signature file that is malformed or does not sign the message."""


def _string(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def _read_strings(data: bytes, count: int) -> tuple[list[bytes], bytes]:
    found = []
    for _ in range(count):
        if len(data) < 4:
            raise BadSignature("the signature is cut short")
        (size,) = struct.unpack(">I", data[:4])
        if len(data) < 4 + size:
            raise BadSignature("the signature is cut short")
        found.append(data[4 : 4 + size])
        data = data[4 + size :]
    return found, data


def load_signing_key(path: Path) -> Ed25519PrivateKey:
    """The Ed25519 private key in ``path`` (OpenSSH or PEM); the passphrase of an
    encrypted one comes from ``$SDTT_KEY_PASSPHRASE``."""
    data = read_file_bytes(path, what="signing key")
    passphrase = os.environ.get(PASSPHRASE_ENV)
    password = passphrase.encode("utf-8") if passphrase else None
    key: object
    try:
        if b"OPENSSH PRIVATE KEY" in data:
            key = load_ssh_private_key(data, password)
        else:
            key = load_pem_private_key(data, password)
    except TypeError:
        if password is None:
            raise InputError(
                "is protected by a passphrase.",
                path=path,
                hint=f"Set {PASSPHRASE_ENV} to it for this command.",
            ) from None
        raise InputError("is not encrypted: unset the passphrase.", path=path) from None
    except (ValueError, UnsupportedAlgorithm):
        raise InputError(
            "is not a private key that can be read (or its passphrase is wrong).",
            path=path,
            hint=KEY_HINT,
        ) from None
    if not isinstance(key, Ed25519PrivateKey):
        raise InputError(f"holds a {type(key).__name__} key.", path=path, hint=KEY_HINT)
    return key


def _public_blob(key: Ed25519PublicKey) -> bytes:
    line = key.public_bytes(Encoding.OpenSSH, PublicFormat.OpenSSH)
    return base64.b64decode(line.split()[1])


def fingerprint(blob: bytes) -> str:
    """A public key's fingerprint as ``ssh-keygen -l`` shows it (``SHA256:...``)."""
    digest = base64.b64encode(hashlib.sha256(blob).digest()).decode("ascii")
    return "SHA256:" + digest.rstrip("=")


def public_key_fingerprint(text: str) -> str:
    """The fingerprint of an OpenSSH public key line (``ssh-ed25519 AAAA... comment``)."""
    try:
        key = load_ssh_public_key(text.strip().encode("utf-8"))
    except (ValueError, UnsupportedAlgorithm) as error:
        raise ValueError(f"not an OpenSSH public key ({error})") from None
    if not isinstance(key, Ed25519PublicKey):
        raise ValueError("not an Ed25519 public key")
    return fingerprint(_public_blob(key))


def _signed_data(message: bytes, algorithm: bytes) -> bytes:
    digest = _HASHES[algorithm](message).digest()
    return _MAGIC + _string(NAMESPACE) + _string(b"") + _string(algorithm) + _string(digest)


def sign(key: Ed25519PrivateKey, message: bytes) -> str:
    """An armoured OpenSSH signature of ``message`` (namespace ``sdtt-bundle``)."""
    signature = key.sign(_signed_data(message, b"sha512"))
    blob = b"".join(
        [
            _MAGIC,
            struct.pack(">I", 1),
            _string(_public_blob(key.public_key())),
            _string(NAMESPACE),
            _string(b""),
            _string(b"sha512"),
            _string(_string(_KEY_TYPE) + _string(signature)),
        ]
    )
    body = "\n".join(textwrap.wrap(base64.b64encode(blob).decode("ascii"), 70))
    return f"{_BEGIN}\n{body}\n{_END}\n"


@dataclass(frozen=True)
class Signer:
    """Who signed: the public key's fingerprint and type."""

    fingerprint: str
    key_type: str = _KEY_TYPE.decode()


def check(armoured: str, message: bytes) -> Signer:
    """The signer of ``message``; :class:`BadSignature` when ``armoured`` is malformed,
    of another namespace, or does not sign these bytes."""
    text = armoured.strip()
    if not (text.startswith(_BEGIN) and text.endswith(_END)):
        raise BadSignature("not an SSH signature (no BEGIN/END SSH SIGNATURE lines)")
    try:
        blob = base64.b64decode("".join(text[len(_BEGIN) : -len(_END)].split()), validate=True)
    except ValueError:
        raise BadSignature("the signature is not base64") from None
    if not blob.startswith(_MAGIC) or blob[6:10] != struct.pack(">I", 1):
        raise BadSignature("not an SSHSIG version 1 signature")
    (public, namespace, _reserved, algorithm, signature), _ = _read_strings(blob[10:], 5)
    if namespace != NAMESPACE:
        raise BadSignature(f"signed for {namespace.decode(errors='replace')!r}, not a bundle")
    if algorithm not in _HASHES:
        raise BadSignature(f"unknown hash {algorithm.decode(errors='replace')!r}")
    (key_type, raw), _ = _read_strings(public, 2)
    (sig_type, raw_signature), _ = _read_strings(signature, 2)
    if key_type != _KEY_TYPE or sig_type != _KEY_TYPE or len(raw) != 32:
        raise BadSignature(f"a {key_type.decode(errors='replace')} key; sdtt checks Ed25519")
    try:
        Ed25519PublicKey.from_public_bytes(raw).verify(
            raw_signature, _signed_data(message, algorithm)
        )
    except InvalidSignature:
        raise BadSignature(
            "the signature does not match the manifest: the bundle changed after it was signed"
        ) from None
    return Signer(fingerprint(public))
