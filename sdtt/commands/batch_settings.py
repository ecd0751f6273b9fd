"""What ``--batch`` of ``sdtt judge``, ``judge --reveal`` and ``align judge`` share."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from sdtt.errors import InputError
from sdtt.judges.batch import BatchSettings, ledger_path
from sdtt.models.batch import batch_provider
from sdtt.redact import shown


def batch_settings(args: argparse.Namespace, out: Path, console: Console) -> BatchSettings | None:
    """``--batch``'s settings for the judge writing ``out`` (None without ``--batch``),
    checked before anything is written: every model needs a batch API."""
    if not args.batch:
        return None
    for name in args.model if isinstance(args.model, list) else [args.model]:
        batch_provider(name)
    if args.batch_retries < 0:
        raise InputError("--batch-retries must be 0 or more.", field="--batch-retries")
    if args.poll < 0:
        raise InputError("--poll must be 0 or more seconds.", field="--poll")

    def notify(text: str) -> None:
        console.print(f"[dim]{shown(text)}[/]")

    return BatchSettings(
        ledger_path(out), poll_interval=args.poll, retries=args.batch_retries, notify=notify
    )
