"""What the single-item commands (``sdtt wordassoc``, ``sdtt captions``,
``sdtt import-kreiman``) share: writing records without replacing a file unasked, the
items' preview page, the responses as single items, and running the SVM and LLM judges."""

from __future__ import annotations

import argparse
import json
import math
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

import trio
from rich.console import Console
from rich.table import Table

from sdtt.analysis.metrics import Confusion
from sdtt.commands.common import check_base_url
from sdtt.commands.console import CliConsole
from sdtt.errors import ConfigError
from sdtt.files import replacing
from sdtt.models.model import get_model
from sdtt.redact import shown
from sdtt.seeds import seeded_rng
from sdtt.single.captions import load_images
from sdtt.single.items_html import response_html
from sdtt.single.response import SingleResponse, read_responses, write_responses
from sdtt.single.svm import SvmResult, svm_judge
from sdtt.single.tally import add_verdict
from sdtt.single.zeroshot import ZeroShotVerdict, zero_shot_judge
from sdtt.templates import escape_html


def check_out(out: Path, force: bool) -> None:
    """Refuse to replace an existing ``--out`` unless ``--force`` (nothing written is lost)."""
    if out.exists() and not force:
        raise ConfigError(f"{out} exists; pass --force to replace it, or choose another --out.")


def save_responses(
    console: Console, out: Path, records: Sequence[SingleResponse], what: str
) -> None:
    """Write ``records`` to ``out`` and say how many, and how many were excluded and why."""
    write_responses(out, records)
    excluded: dict[str, int] = {}
    for record in records:
        if record.exclusion_reason:
            excluded[record.exclusion_reason] = excluded.get(record.exclusion_reason, 0) + 1
    console.print(f"Wrote {len(records)} {what} to {out}.")
    if excluded:
        reasons = ", ".join(f"{count} {reason}" for reason, count in sorted(excluded.items()))
        console.print(f"Excluded by post-processing (kept, marked): {reasons}.")


def save_json_lines(out: Path, records: Iterable[Any]) -> int:
    """Write dataclass or pydantic records as JSON lines; returns how many."""
    count = 0
    with replacing(out) as partial, partial.open("w", encoding="utf-8") as handle:
        for record in records:
            data = record.model_dump(mode="json") if hasattr(record, "model_dump") else record
            if is_dataclass(data) and not isinstance(data, type):
                data = asdict(data)
            handle.write(json.dumps(data, ensure_ascii=False) + "\n")
            count += 1
    return count


def run_preview(args: argparse.Namespace, console: Console | None = None) -> int:
    """``preview``: an HTML page of the items as judges see them, in a shuffled order."""
    console = console or CliConsole(highlight=False)
    check_out(args.out, args.force)
    images = {image.name: image for image in load_images(args.images)} if args.images else None
    records = [r for path in args.files for r in read_responses(path) if r.usable]
    # Shuffled so the page does not list human and machine responses in blocks.
    seeded_rng(0, "preview").shuffle(records)
    items = [
        f'<li id="{escape_html(r.id)}">'
        + response_html(r, images=images, image_base=args.image_base)
        + "</li>"
        for r in records
    ]
    page = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        "<title>Items</title></head><body><ol>" + "\n".join(items) + "</ol></body></html>\n"
    )
    with replacing(args.out) as partial:
        partial.write_text(page, encoding="utf-8")
    console.print(f"Wrote {len(items)} items to {args.out}.")
    return 0


def run_items(args: argparse.Namespace, task: str, console: Console | None = None) -> int:
    """``items``: response files as single items (:mod:`sdtt.single.response_items`)."""
    from sdtt.single.items import write_items
    from sdtt.single.response_items import response_items, summary

    console = console or CliConsole(highlight=False)
    check_out(args.out, args.force)
    folder = getattr(args, "images", None)
    images = {image.name: image for image in load_images(folder)} if folder else None
    records = [r for path in args.files for r in read_responses(path)]
    converted = response_items(
        records, task=task, images=images, image_base=getattr(args, "image_base", None)
    )
    write_items(args.out, converted.items)
    console.print(f"Wrote {summary(converted.items)} to {args.out}.")
    if converted.excluded:
        reasons = ", ".join(f"{n} {why}" for why, n in sorted(converted.excluded.items()))
        console.print(f"Left out, disqualified by post-processing: {reasons}.")
    console.print(f"Next: sdtt single build {shown(shlex.quote(str(args.out)))} --out STUDY")
    return 0


def run_llm_judge(args: argparse.Namespace, task: str, console: Console | None = None) -> int:
    """``llm-judge``: the papers' zero-shot LLM judge on response files."""
    console = console or CliConsole(highlight=False)
    check_base_url(args.base_url, [args.model])
    if args.out is not None:
        check_out(args.out, args.force)
    records = [r for path in args.files for r in read_responses(path) if r.task == task]
    images = (
        {image.name: image for image in load_images(args.images)}
        if getattr(args, "images", None)
        else None
    )

    async def main() -> list[ZeroShotVerdict]:
        async with get_model(
            args.model, base_url=args.base_url, api_key_env=args.api_key_env
        ) as model:
            return await zero_shot_judge(model, records, images=images, seed=args.seed)

    verdicts = trio.run(main)
    tally = Confusion()
    for verdict in verdicts:
        if verdict.said is not None:
            add_verdict(tally, verdict.said, verdict.truth)
    unreadable = sum(verdict.said is None for verdict in verdicts)
    console.print(
        f"{args.model} judged {len(verdicts) - unreadable} of {len(verdicts)} responses "
        f"({unreadable} without a readable label): p(H|H) {rate_text(tally.rate('H', 'H'))}, "
        f"p(M|M) {rate_text(tally.rate('M', 'M'))}, detectability "
        f"{rate_text(tally.detectability)}."
    )
    if args.out is not None:
        count = save_json_lines(args.out, verdicts)
        console.print(f"Wrote {count} verdicts to {args.out}.")
    return 0


def run_svm(args: argparse.Namespace, task: str, console: Console | None = None) -> int:
    """``sdtt wordassoc svm`` / ``sdtt captions svm``: cross-validate the SVM judge on
    response files and print its confusion matrix and detectability."""
    console = console or CliConsole(highlight=False)
    if args.out is not None:
        check_out(args.out, args.force)
    records = [r for path in args.files for r in read_responses(path) if r.task == task]
    result = svm_judge(records, embedding=args.embedding, folds=args.folds, seed=args.seed)
    console.print(svm_table(result))
    if args.out is not None:
        count = save_json_lines(args.out, result.verdicts)
        console.print(f"Wrote {count} verdicts to {args.out}.")
    return 0


def rate_text(value: float) -> str:
    """A rate to two places, or "n/a" when no response of that kind was judged."""
    return "n/a" if math.isnan(value) else f"{value:.2f}"


def svm_table(result: SvmResult) -> Table:
    """The SVM judge's rates: overall, then per machine agent."""
    table = Table(
        title=f"SVM judge, {result.task}: {result.embedding} embedding, {result.folds} folds "
        f"over {result.stimuli} stimuli"
    )
    for column in ("responses", "p(H|H)", "p(M|M)", "detectability"):
        table.add_column(column, justify="right")
    table.add_column("machine", justify="left")
    # Per machine only when there are several: with one, its row repeats "all".
    rows = [("all", result.confusion)]
    if len(result.by_agent) > 1:
        rows += list(result.by_agent.items())
    for name, tally in rows:
        table.add_row(
            str(tally.hh + tally.mh + tally.hm + tally.mm),
            rate_text(tally.rate("H", "H")),
            rate_text(tally.rate("M", "M")),
            rate_text(tally.detectability),
            name or "(unnamed)",
        )
    return table
