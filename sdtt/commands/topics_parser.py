"""The parser of ``sdtt topics``; the command runs in :mod:`sdtt.commands.topics`."""

from __future__ import annotations

import argparse

from sdtt.commands import lazy_command
from sdtt.commands.common import add_base_url_argument, add_out_argument
from sdtt.generate.topics import DEFAULT_TOPIC_COUNT, TOPICS_DIR
from sdtt.models.registry import DEFAULT_MODEL


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``sdtt topics``."""
    parser = subparsers.add_parser(
        "topics",
        description=(
            "Ask a model for N distinct everyday topics for pseudo-dialogues (duplicates "
            "and near duplicates are dropped and the model is asked again until there are "
            "N), print them and save them as a topic file, one topic per line. Any topic "
            "file you write by hand can be used instead."
        ),
    )
    parser.add_argument(
        "--model", default=DEFAULT_MODEL, help=f"provider/model (default {DEFAULT_MODEL})"
    )
    parser.add_argument(
        "-n",
        "--count",
        type=int,
        default=DEFAULT_TOPIC_COUNT,
        help=f"how many topics (default {DEFAULT_TOPIC_COUNT})",
    )
    add_out_argument(
        parser,
        folder=False,
        help=f"file to write the topics to (default {TOPICS_DIR}/generated-<model>-<n>.txt)",
    )
    parser.add_argument("--force", action="store_true", help="replace an existing file")
    parser.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    add_base_url_argument(parser)
    parser.set_defaults(func=lazy_command("sdtt.commands.topics"))
