"""What ``--batch`` of ``sdtt judge``, ``judge --reveal`` and ``align judge`` share."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from sdtt.commands.common import DEFAULT_BATCH_RETRIES, DEFAULT_POLL
from sdtt.errors import InputError
from sdtt.judges.batched import BatchSettings, ledger_path
from sdtt.models.batch import batch_provider
from sdtt.redact import shown


def batch_settings(args: argparse.Namespace, out: Path, console: Console) -> BatchSettings | None:
    """``--batch``'s settings for the judge writing ``out`` (None without ``--batch``),
    checked before anything is written: every model needs a batch API."""
    if not args.batch:
        # Without --batch these would be silently ignored: say so instead of letting a
        # user believe their run is batched.
        for flag, value in (("--poll", args.poll), ("--batch-retries", args.batch_retries)):
            if value is not None:
                raise InputError(
                    f"{flag} only applies with --batch.", hint=f"Add --batch, or leave out {flag}."
                )
        return None
    for name in args.model if isinstance(args.model, list) else [args.model]:
        batch_provider(name)
    retries = DEFAULT_BATCH_RETRIES if args.batch_retries is None else args.batch_retries
    poll = DEFAULT_POLL if args.poll is None else args.poll
    if retries < 0:
        raise InputError("--batch-retries must be 0 or more.", field="--batch-retries")
    if poll < 0:
        raise InputError("--poll must be 0 or more seconds.", field="--poll")

    def notify(text: str) -> None:
        console.print(f"[dim]{shown(text)}[/]")

    return BatchSettings(ledger_path(out), poll_interval=poll, retries=retries, notify=notify)
