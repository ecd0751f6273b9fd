"""``sdtt wordassoc``: the word-association task (cues, machine and human associations,
catch items, a preview of the items, the LLM and SVM judges)."""

from __future__ import annotations

import argparse

import trio
from rich.console import Console

from sdtt.commands.common import check_base_url
from sdtt.commands.console import CliConsole
from sdtt.commands.single_common import check_out, save_responses
from sdtt.commands.single_common import run_items as _run_items
from sdtt.commands.single_common import run_llm_judge as _run_llm_judge
from sdtt.commands.single_common import run_preview as _run_preview
from sdtt.commands.single_common import run_svm as _run_svm
from sdtt.models.model import get_model
from sdtt.single.catch import response_catch_items
from sdtt.single.cues import CUES, read_cues
from sdtt.single.response import SingleResponse
from sdtt.single.wordassoc import machine_associations, read_human_associations


def run_cues(args: argparse.Namespace, console: Console | None = None) -> int:
    """Print the bundled cues."""
    console = console or CliConsole(highlight=False)
    for cue in CUES:
        console.print(cue)
    return 0


def run_generate(args: argparse.Namespace, console: Console | None = None) -> int:
    """Ask ``--model`` for an association to every cue and write the records."""
    console = console or CliConsole(highlight=False)
    check_base_url(args.base_url, [args.model])
    check_out(args.out, args.force)
    cues = read_cues(args.cues) if args.cues else CUES
    examples = (
        [(r.stimulus, r.response) for r in read_human_associations(args.examples) if r.usable]
        if args.examples
        else []
    )

    async def main() -> list[SingleResponse]:
        async with get_model(
            args.model, base_url=args.base_url, api_key_env=args.api_key_env
        ) as model:
            return await machine_associations(
                model, cues, seed=args.seed, examples=examples, attempts=args.attempts
            )

    records = trio.run(main)
    save_responses(console, args.out, records, f"associations of {args.model}")
    return 0


def run_import(args: argparse.Namespace, console: Console | None = None) -> int:
    """Import human associations from a CSV file."""
    console = console or CliConsole(highlight=False)
    check_out(args.out, args.force)
    cues = read_cues(args.cues) if args.cues else None
    records = read_human_associations(args.file, cues)
    save_responses(console, args.out, records, "human associations")
    return 0


def run_catch(args: argparse.Namespace, console: Console | None = None) -> int:
    """Write catch items: cues repeated as their own associations."""
    console = console or CliConsole(highlight=False)
    check_out(args.out, args.force)
    cues = read_cues(args.cues) if args.cues else CUES
    records = response_catch_items("wordassoc", cues, args.count, seed=args.seed)
    save_responses(console, args.out, records, "catch items")
    return 0


def run_preview(args: argparse.Namespace, console: Console | None = None) -> int:
    """An HTML page of the word-association items."""
    return _run_preview(args, console)


def run_items(args: argparse.Namespace, console: Console | None = None) -> int:
    """The word associations as single items for ``sdtt single build``."""
    return _run_items(args, "wordassoc", console)


def run_llm_judge(args: argparse.Namespace, console: Console | None = None) -> int:
    """The papers' zero-shot LLM judge on word associations."""
    return _run_llm_judge(args, "wordassoc", console)


def run_svm(args: argparse.Namespace, console: Console | None = None) -> int:
    """The SVM judge on word associations."""
    return _run_svm(args, "wordassoc", console)
