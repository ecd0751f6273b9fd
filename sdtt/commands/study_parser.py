"""The parser of ``sdtt study``; the command runs in :mod:`sdtt.commands.study`."""

from __future__ import annotations

import argparse
from pathlib import Path

from sdtt.commands import lazy_command
from sdtt.commands.common import add_actions, add_out_argument


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``sdtt study run|status|bundle|verify|prereg``."""
    actions = add_actions(
        subparsers,
        "study",
        dest="action",
        description=(
            "A whole offline study from one spec file (TOML): personas x models x modes x "
            "(N, X) x topics, the interrogator, the judges, the analyses and the report. "
            "'run' makes what is missing, 'status' shows the design, 'bundle' and 'verify' "
            "make it checkable, 'prereg' writes a preregistration."
        ),
    )
    run = actions.add_parser(
        "run",
        help="make every missing piece, in order (resumes; stops at a human step)",
        description=(
            "Make every missing piece of the study in dependency order, skipping what "
            "exists; after a kill, run it again: no paid call is made twice. Stops at a "
            "step people must do, saying what to do next, and before a call that could "
            "pass the spec's budget."
        ),
    )
    run.add_argument("spec", type=Path, help="the study spec (TOML)")
    run.add_argument("--quiet", action="store_true", help="no live progress display")
    run.set_defaults(func=lazy_command("sdtt.commands.study", "run_study"))
    status = actions.add_parser("status", help="the design grid: done, running, missing")
    status.add_argument("spec", type=Path, help="the study spec (TOML)")
    status.set_defaults(func=lazy_command("sdtt.commands.study", "run_status"))
    bundle = actions.add_parser(
        "bundle", help="write the study with a manifest of hashes and versions"
    )
    bundle.add_argument("spec", type=Path, help="the study spec (TOML)")
    add_out_argument(
        bundle,
        folder=True,
        help="folder to write the bundle into, or a name ending in .tar.gz for one archive "
        "(default: OUT-bundle.tar.gz beside the study's folder)",
    )
    bundle.add_argument(
        "--sign",
        type=Path,
        metavar="KEY",
        help="sign the manifest with this Ed25519 private key (an OpenSSH key such as "
        "~/.ssh/id_ed25519, or PEM; an encrypted one reads its passphrase from "
        "$SDTT_KEY_PASSPHRASE); the signature is manifest.json.sig, checkable with "
        "ssh-keygen -Y verify -n sdtt-bundle",
    )
    bundle.add_argument(
        "--prereg",
        type=Path,
        metavar="FILE",
        help="put this preregistration (from sdtt study prereg) in the bundle: the manifest, "
        "and so the signature, names its hash and the spec hash it was stamped with "
        "(default: the study's prereg.md, if there is one)",
    )
    bundle.set_defaults(func=lazy_command("sdtt.commands.study", "run_bundle"))
    verify = actions.add_parser(
        "verify", help="check a bundle's hashes and recompute its report's figures"
    )
    verify.add_argument("bundle", type=Path, help="a bundle folder or .tar.gz")
    verify.add_argument("--prereg", type=Path, help="check the bundle against this preregistration")
    verify.add_argument(
        "--signer",
        metavar="KEY.pub|SHA256:...",
        help="fail unless the bundle is signed by this key (a public key file or its "
        "fingerprint as ssh-keygen -l shows it)",
    )
    verify.add_argument(
        "--rerun",
        action="store_true",
        help="also run the whole study again from the bundle's recorded answers (the replay "
        "provider: offline, no cost) and compare every file byte for byte",
    )
    verify.set_defaults(func=lazy_command("sdtt.commands.study", "run_verify"))
    prereg = actions.add_parser("prereg", help="write a preregistration from the spec")
    prereg.add_argument("spec", type=Path, help="the study spec (TOML)")
    add_out_argument(prereg, folder=False, help="file to write (default OUT/prereg.md)")
    prereg.set_defaults(func=lazy_command("sdtt.commands.study", "run_prereg"))
