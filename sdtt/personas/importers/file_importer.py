"""The shared shape of the chat-export importers: read the file, parse it, build the persona."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from pathlib import Path

from sdtt.personas.conversations import ChatMessage
from sdtt.personas.importers.build import (
    ChatOutline,
    ImportResult,
    ParsedChat,
    PreparedImport,
    StreamedImport,
    build_persona,
)
from sdtt.personas.importers.options import Flag, ImportOptions
from sdtt.personas.importers.reading import MAX_FILE_BYTES, JsonStreamFailed, read_bytes


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

    def export_digest(self, path: Path) -> str | None:
        """The hash :meth:`load` gives ``path``, found without parsing it (the file's bytes);
        ``None`` when that takes more than hashing one regular file (a folder, a pipe, an
        unreadable file: :meth:`load` says what is wrong with it)."""
        try:
            if not path.is_file():
                return None
            with path.open("rb") as handle:
                return hashlib.file_digest(handle, "sha256").hexdigest()
        except OSError:
            return None

    def streamed_digest(self, path: Path) -> str | None:
        """The export's hash when it is a regular file to stream, read a part at a time;
        ``None`` for what is read whole (a pipe, an unreadable or too large file: reading
        it so says what is wrong)."""
        try:
            if not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
                return None
            with path.open("rb") as handle:
                return hashlib.file_digest(handle, "sha256").hexdigest()
        except OSError:
            return None  # reading it whole says what is wrong

    def run(self, path: str | Path, options: ImportOptions) -> ImportResult:
        """Read, parse and build the persona; nothing is printed or written."""
        path = Path(path)
        chat, digest = self.load(path, options)
        return build_persona(chat, options, fmt=self.name, path=path, digest=digest)

    def prepare(self, path: Path, options: ImportOptions) -> PreparedImport:
        """The import ready to be written (see :class:`PreparedImport`); a format that
        can read its export twice returns a
        :class:`~sdtt.personas.importers.build.StreamedImport`, whose memory does not
        grow with the export."""
        return PreparedImport(self.run(path, options))

    def streamed(
        self,
        outline: ChatOutline,
        messages: Callable[[], Iterable[ChatMessage]],
        path: Path,
        options: ImportOptions,
        digest: str,
    ) -> StreamedImport:
        """The streamed import of an export read once for ``outline``, whose ``messages``
        are read again as the persona is built (a whole read, should the export change
        between the two)."""
        return StreamedImport(
            outline,
            messages,
            lambda: self.run(path, options),
            options,
            fmt=self.name,
            path=path,
            digest=digest,
        )


class StreamedJsonImporter(FileImporter):
    """An importer of one JSON file that reads it a part at a time (:meth:`stream`), so a
    large export costs the messages kept; a pipe, or a file the streaming parser reads
    otherwise than :func:`~sdtt.personas.importers.reading.load_json` (it raises
    :class:`JsonStreamFailed`), is read whole and given to :meth:`parse`."""

    def stream(self, path: Path, options: ImportOptions) -> ParsedChat:
        """Read the export from its file, a part at a time."""
        raise NotImplementedError

    def first_reading(
        self, path: Path, options: ImportOptions
    ) -> tuple[ChatOutline, Callable[[], Iterable[ChatMessage]]]:
        """The outline of the export (see :meth:`ChatOutline.read`) and a way to read its
        messages again, each read from the file a part at a time. Raises
        :class:`JsonStreamFailed` where the file must be read whole."""
        raise NotImplementedError

    def prepare(self, path: Path, options: ImportOptions) -> PreparedImport:
        """Read the export once for its senders and times; the persona is built as the
        messages are read again (see :class:`StreamedImport`)."""
        digest = self.streamed_digest(path)
        if digest is None:
            return super().prepare(path, options)
        try:
            outline, messages = self.first_reading(path, options)
        except JsonStreamFailed:
            return super().prepare(path, options)
        return self.streamed(outline, messages, path, options, digest)

    def load(self, path: Path, options: ImportOptions) -> tuple[ParsedChat, str]:
        """Stream the export when it is a regular file, else read it whole."""
        digest = self.streamed_digest(path)
        if digest is None:
            return super().load(path, options)
        try:
            return self.stream(path, options), digest
        except JsonStreamFailed:
            return super().load(path, options)
