"""Persona importers: one module per source format, usable from Python or the command line.

In a notebook::

    from sdtt.personas.importers import ImportOptions, import_whatsapp

    result = import_whatsapp("chat.txt", ImportOptions(me="Ann"))
    print(result.report)          # counts, warnings, what was left out
    persona = result.persona      # save it with sdtt.personas.store.save_persona

Every chat-export importer takes the file and an :class:`ImportOptions` and returns an
:class:`ImportResult` (the persona and an :class:`ImportReport`); nothing is printed or
written. ``sdtt persona import FORMAT ...`` builds the options from its flags, prints the
report and writes the files. The names below are loaded on first use, so importing this
package stays cheap.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from sdtt.personas.importers.build import ImportResult
    from sdtt.personas.importers.chitchat import ChitchatOptions, CorpusImport, import_chitchat
    from sdtt.personas.importers.discord import import_discord
    from sdtt.personas.importers.file_importer import FileImporter
    from sdtt.personas.importers.import_report import ImportReport
    from sdtt.personas.importers.messenger import import_messenger
    from sdtt.personas.importers.options import (
        Columns,
        ImportOptions,
        parse_columns,
        parse_gap,
        parse_timezone,
    )
    from sdtt.personas.importers.slack import import_slack
    from sdtt.personas.importers.tabular import import_csv, import_jsonl
    from sdtt.personas.importers.telegram import import_telegram
    from sdtt.personas.importers.whatsapp import import_whatsapp

IMPORTERS: dict[str, str] = {
    "chitchat": "sdtt.personas.importers.chitchat",
    "whatsapp": "sdtt.personas.importers.whatsapp",
    "telegram": "sdtt.personas.importers.telegram",
    "discord": "sdtt.personas.importers.discord",
    "slack": "sdtt.personas.importers.slack",
    "messenger": "sdtt.personas.importers.messenger",
    "instagram": "sdtt.personas.importers.instagram",
    "csv": "sdtt.personas.importers.table_csv",
    "jsonl": "sdtt.personas.importers.table_jsonl",
}
"""Format name -> module defining ``IMPORTER``."""

CORPUS_FORMATS = frozenset({"chitchat"})
"""Formats that read a packaged corpus rather than a file the user gives."""

_LAZY = {
    "ImportOptions": "options",
    "Columns": "options",
    "parse_columns": "options",
    "parse_gap": "options",
    "parse_timezone": "options",
    "ImportResult": "build",
    "ImportReport": "import_report",
    "FileImporter": "file_importer",
    "import_whatsapp": "whatsapp",
    "import_telegram": "telegram",
    "import_discord": "discord",
    "import_slack": "slack",
    "import_messenger": "messenger",
    "import_csv": "tabular",
    "import_jsonl": "tabular",
    "import_chitchat": "chitchat",
    "ChitchatOptions": "chitchat",
    "CorpusImport": "chitchat",
}

__all__ = [
    "CORPUS_FORMATS",
    "IMPORTERS",
    "ChitchatOptions",
    "Columns",
    "CorpusImport",
    "FileImporter",
    "ImportOptions",
    "ImportReport",
    "ImportResult",
    "Importer",
    "get_importer",
    "import_chat",
    "import_chitchat",
    "import_csv",
    "import_discord",
    "import_jsonl",
    "import_messenger",
    "import_slack",
    "import_telegram",
    "import_whatsapp",
    "parse_columns",
    "parse_gap",
    "parse_timezone",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Importer(Protocol):
    """Builds personas from one kind of source."""

    name: str
    """The FORMAT word on the command line."""
    help: str
    """One line for ``sdtt persona import --help``."""


def get_importer(name: str) -> Importer:
    """The importer for format ``name`` (a :class:`FileImporter` unless a corpus format)."""
    module = importlib.import_module(IMPORTERS[name])
    importer: Importer = module.IMPORTER
    return importer


def import_chat(fmt: str, path: str | Path, options: ImportOptions) -> ImportResult:
    """A persona from the chat export ``path`` in format ``fmt`` (``"whatsapp"``...)."""
    from sdtt.errors import InputError
    from sdtt.personas.importers.file_importer import FileImporter

    if fmt not in IMPORTERS or fmt in CORPUS_FORMATS:
        known = ", ".join(name for name in IMPORTERS if name not in CORPUS_FORMATS)
        raise InputError(f"{fmt!r} is not a chat-export format.", hint=f"Use one of: {known}.")
    importer = get_importer(fmt)
    assert isinstance(importer, FileImporter)
    return importer.run(path, options)
