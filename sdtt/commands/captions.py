"""``sdtt captions``: the image-captioning task (machine and human captions, catch items,
a preview of the items, the LLM and SVM judges)."""

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
from sdtt.models.registry import require_image_input
from sdtt.single.captions import load_images, machine_captions, read_human_captions
from sdtt.single.catch import response_catch_items
from sdtt.single.response import SingleResponse


def run_generate(args: argparse.Namespace, console: Console | None = None) -> int:
    """Caption every image of ``--images`` with ``--model`` and write the records."""
    console = console or CliConsole(highlight=False)
    require_image_input(args.model)
    check_base_url(args.base_url, [args.model])
    check_out(args.out, args.force)
    images = load_images(args.images)

    async def main() -> list[SingleResponse]:
        async with get_model(
            args.model, base_url=args.base_url, api_key_env=args.api_key_env
        ) as model:
            return await machine_captions(model, images, seed=args.seed)

    records = trio.run(main)
    save_responses(console, args.out, records, f"captions of {args.model}")
    return 0


def run_import(args: argparse.Namespace, console: Console | None = None) -> int:
    """Import human captions from a CSV file."""
    console = console or CliConsole(highlight=False)
    check_out(args.out, args.force)
    names = [image.name for image in load_images(args.images)] if args.images else None
    records = read_human_captions(args.file, names)
    save_responses(console, args.out, records, "human captions")
    return 0


def run_catch(args: argparse.Namespace, console: Console | None = None) -> int:
    """Write catch items: one word repeated four times as an image's caption."""
    console = console or CliConsole(highlight=False)
    check_out(args.out, args.force)
    names = [image.name for image in load_images(args.images)]
    records = response_catch_items("caption", names, args.count, seed=args.seed)
    save_responses(console, args.out, records, "catch items")
    return 0


def run_preview(args: argparse.Namespace, console: Console | None = None) -> int:
    """An HTML page of the caption items."""
    return _run_preview(args, console)


def run_items(args: argparse.Namespace, console: Console | None = None) -> int:
    """The captions as single items for ``sdtt single build``."""
    return _run_items(args, "caption", console)


def run_llm_judge(args: argparse.Namespace, console: Console | None = None) -> int:
    """The papers' zero-shot LLM judge on captions."""
    return _run_llm_judge(args, "caption", console)


def run_svm(args: argparse.Namespace, console: Console | None = None) -> int:
    """The SVM judge on captions."""
    return _run_svm(args, "caption", console)
