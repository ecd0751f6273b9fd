"""The parser of ``sdtt captions``; the command runs in :mod:`sdtt.commands.captions`."""

from __future__ import annotations

import argparse
from pathlib import Path

from sdtt.commands import lazy_command
from sdtt.commands.common import add_actions
from sdtt.commands.single_flags import (
    add_judging_actions,
    add_model_arguments,
    add_write_arguments,
)

MODULE = "sdtt.commands.captions"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``sdtt captions generate|import|catch|preview|items|llm-judge|svm``."""
    actions = add_actions(
        subparsers,
        "captions",
        dest="captions_command",
        description=(
            "The image-captioning task of the Kreiman lab's Turing-like tests: a judge sees an "
            "image and one caption and says whether a human or a machine wrote it. Captions are "
            "written as response records (.jsonl)."
        ),
    )

    generate = actions.add_parser(
        "generate",
        help="ask a vision-capable model for one caption per image",
        description=(
            "Show a vision-capable model (OpenAI or Anthropic; mock/short offline) each image "
            "of a folder (.jpg, .png, .gif, .webp) with the papers' instructions to human "
            "captioners, and record its caption. A model that cannot take images is refused."
        ),
    )
    add_model_arguments(generate, "openai/gpt-4o-mini or mock/short")
    generate.add_argument("--images", type=Path, required=True, help="folder of the images")
    add_write_arguments(generate, "machine captions")
    generate.set_defaults(func=lazy_command(MODULE, "run_generate"))

    importing = actions.add_parser(
        "import",
        help="import human captions from CSV",
        description=(
            "Read human captions from a CSV file with the columns image (the file name) and "
            "caption (optional: participant)."
        ),
    )
    importing.add_argument("file", type=Path, metavar="FILE", help="CSV of human captions")
    importing.add_argument(
        "--images", type=Path, help="folder of the images: rows naming another image are refused"
    )
    add_write_arguments(importing, "human captions")
    importing.set_defaults(func=lazy_command(MODULE, "run_import"))

    add_judging_actions(actions, "caption", MODULE)
