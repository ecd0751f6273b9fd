"""Persona importers: one module per source format, found by name.

``sdtt persona import FORMAT ...`` looks the format up in :data:`IMPORTERS`, lets the
importer add its own options, and calls it. An importer module defines ``IMPORTER``, an
object following :class:`Importer`.
"""

from __future__ import annotations

import argparse
import importlib
from typing import Protocol

from sdtt.personas.persona import Persona

IMPORTERS: dict[str, str] = {
    "chitchat": "sdtt.personas.importers.chitchat",
    "whatsapp": "sdtt.personas.importers.whatsapp",
    "telegram": "sdtt.personas.importers.telegram",
    "discord": "sdtt.personas.importers.discord",
    "slack": "sdtt.personas.importers.slack",
    "messenger": "sdtt.personas.importers.messenger",
    "csv": "sdtt.personas.importers.table_csv",
    "jsonl": "sdtt.personas.importers.table_jsonl",
}
"""Format name -> module defining ``IMPORTER``."""


class Importer(Protocol):
    """Builds personas from one kind of source."""

    name: str
    """The FORMAT word on the command line."""
    help: str
    """One line for ``sdtt persona import --help``."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add this format's own options."""
        ...

    def build(self, args: argparse.Namespace) -> list[Persona]:
        """Read the source named in ``args`` and return the personas it yields."""
        ...


def get_importer(name: str) -> Importer:
    """The importer for format ``name``."""
    module = importlib.import_module(IMPORTERS[name])
    importer: Importer = module.IMPORTER
    return importer
