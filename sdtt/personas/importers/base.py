"""The shared shape of the chat-export importers: read the file, parse it, build the persona."""

from __future__ import annotations

import hashlib
from pathlib import Path

from sdtt.personas.importers.build import ImportResult, ParsedChat, build_persona
from sdtt.personas.importers.options import Flag, ImportOptions
from sdtt.personas.importers.reading import read_bytes


class FileImporter:
    """Base of the chat-export importers.

    Subclasses set ``name``, ``help``, ``file_help`` and their own ``flags`` and implement
    :meth:`parse`; a format read from several files overrides :meth:`load`.
    """

    name: str = ""
    """The FORMAT word on the command line."""
    help: str = ""
    """One line for ``sdtt persona import --help``."""
    file_help: str = "The exported chat file."
    """Help for the FILE argument."""
    flags: tuple[Flag, ...] = ()
    """Options of this format's own, each setting an :class:`ImportOptions` field."""

    def parse(self, data: bytes, path: Path, options: ImportOptions) -> ParsedChat:
        """Read the export's bytes into a :class:`ParsedChat`."""
        raise NotImplementedError

    def load(self, path: Path, options: ImportOptions) -> tuple[ParsedChat, str]:
        """Read and parse the input; also return a hash of it (for the default name)."""
        data = read_bytes(path)
        return self.parse(data, path, options), hashlib.sha256(data).hexdigest()

    def run(self, path: str | Path, options: ImportOptions) -> ImportResult:
        """Read, parse and build the persona; nothing is printed or written."""
        path = Path(path)
        chat, digest = self.load(path, options)
        return build_persona(chat, options, fmt=self.name, path=path, digest=digest)
