"""Shared helpers for the chat-export importer tests."""

from __future__ import annotations

import argparse
import zipfile
from pathlib import Path
from typing import cast

from sdtt.commands.persona_import import add_import_arguments, options_from_args
from sdtt.dialogue.message import Message
from sdtt.personas.importers import get_importer
from sdtt.personas.importers.build import ImportResult
from sdtt.personas.importers.file_importer import FileImporter
from sdtt.personas.persona import Persona

FIXTURES = Path(__file__).parent / "fixtures"


def importer(fmt: str) -> FileImporter:
    """The registered importer for ``fmt``."""
    return cast(FileImporter, get_importer(fmt))


def parse_args(fmt: str, *argv: object) -> argparse.Namespace:
    """Parse ``argv`` with exactly the options the format adds to the CLI."""
    parser = argparse.ArgumentParser(prog=f"sdtt persona import {fmt}")
    add_import_arguments(parser, importer(fmt))
    return parser.parse_args([str(arg) for arg in argv])


def run_import(fmt: str, *argv: object) -> ImportResult:
    """Run the importer with the options the CLI would build from ``argv``, without printing."""
    args = parse_args(fmt, *argv)
    return importer(fmt).run(args.file, options_from_args(args))


def texts(persona: Persona, side: str | None = None) -> list[str]:
    """Message texts of the persona's history, optionally of one side."""
    return [m.text for m in persona.messages if side is None or m.side == side]


def find(persona: Persona, text: str) -> Message:
    """The first message with exactly ``text``."""
    return next(m for m in persona.messages if m.text == text)


def zip_folder(folder: Path, target: Path) -> Path:
    """Zip ``folder``'s files (paths relative to it) into ``target``."""
    with zipfile.ZipFile(target, "w") as archive:
        for file in sorted(folder.rglob("*")):
            if file.is_file():
                archive.write(file, file.relative_to(folder).as_posix())
    return target
