"""The parser of ``sdtt models``; the command runs in :mod:`sdtt.commands.models`."""

from __future__ import annotations

import argparse

from sdtt.commands import lazy_command
from sdtt.models.registry import PROVIDERS


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``sdtt models``."""
    parser = subparsers.add_parser(
        "models",
        description=(
            "List the model providers (address a model as provider/model, e.g. "
            f"{PROVIDERS['openai'].example}) and whether each can be used on this machine: "
            "SDK installed, API key set (never shown), weights present."
        ),
    )
    parser.set_defaults(func=lazy_command("sdtt.commands.models"))
