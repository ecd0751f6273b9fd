"""Persona files: read, write, find by name, list.

A persona file is JSONL (format in ``personas/README.md``): a ``persona`` header record
with the :class:`PersonaInfo` fields, then each conversation as a ``transcript`` record
followed by its ``message`` records, the persona on side ``"response"``. Names resolve
against ``./personas/`` first, then against the examples shipped inside the package, so
commands work from any directory.
"""

from __future__ import annotations

import itertools
import os
import shutil
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from sdtt.dialogue.message import RESPONSE, SCHEMA_VERSION, Transcript
from sdtt.dialogue.store import (
    transcript_header,
    transcripts_from_records,
    validate_record,
)
from sdtt.errors import InputError, naming
from sdtt.files import replacing
from sdtt.jsonl import encode_record, read_jsonl
from sdtt.personas.persona import Persona, PersonaInfo
from sdtt.personas.timing import TimingProfile

SUFFIX = ".jsonl"
LOCAL_DIR = Path("personas")
"""Where users keep personas, relative to the current directory."""
SHIPPED_DIR = Path(__file__).resolve().parent.parent / "data" / "personas"
"""The example personas shipped inside the package."""
DEFAULT_PERSONA = "chitchat-32b20fa3"
"""The shipped example used when a command is given no persona."""
FORMAT_HINT = "See personas/README.md for the persona file format."
RECORD_TYPES = ("persona", "transcript", "message")


def persona_header(info: PersonaInfo) -> dict[str, Any]:
    """The record that opens a persona file."""
    return {"type": "persona", **info.model_dump(mode="json")}


_WRITE_CHUNK = 1 << 20
"""Bytes of records gathered before one write: a long persona is millions of records."""


def _message_lines(conversation: Transcript) -> Iterator[bytes]:
    # The message record of sdtt.dialogue.store.message_record, byte for byte: its own
    # fields after the type and conversation, in the compact JSON both encoders write,
    # without building a dict per message.
    opening = encode_record({"type": "message", "conversation": conversation.id})[:-2] + b","
    for message in conversation.messages:
        yield opening + message.model_dump_json().encode("utf-8")[1:] + b"\n"


class _Chunks:
    """Records gathered into writes of about :data:`_WRITE_CHUNK` bytes."""

    def __init__(self, handle: BinaryIO) -> None:
        self._handle = handle
        self._chunk: list[bytes] = []
        self._size = 0

    def add(self, lines: Iterable[bytes]) -> None:
        for line in lines:
            self._chunk.append(line)
            self._size += len(line)
            if self._size >= _WRITE_CHUNK:
                self.flush()

    def flush(self) -> None:
        self._handle.write(b"".join(self._chunk))
        self._chunk, self._size = [], 0


def _conversation_lines(conversation: Transcript) -> Iterator[bytes]:
    return itertools.chain(
        (encode_record(transcript_header(conversation)),), _message_lines(conversation)
    )


def save_persona(persona: Persona, path: str | Path) -> Path:
    """Write ``persona`` to ``path`` (replacing it) and return the path.

    The file is written next to its destination and renamed into place, so an
    interrupted write never leaves a half persona behind.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)  # as the JSONL writer did before
    with replacing(path) as partial, partial.open("wb") as handle:
        chunks = _Chunks(handle)
        chunks.add((encode_record(persona_header(persona.info)),))
        for conversation in persona.conversations:
            chunks.add(_conversation_lines(conversation))
        chunks.flush()
    return path


class PersonaWriter:
    """Writes a persona file a conversation at a time (:meth:`add`), for a persona too
    large to hold: its header, which says what the whole history holds, is given last
    (:meth:`finish`) and the file is only then renamed into place, like
    :func:`save_persona`'s. Use it as a context manager: leaving it without
    :meth:`finish` (an error) leaves the old file and removes what was written.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        # The conversations go under the name save_persona writes to (the long part of
        # the write), then after the header into the file renamed into place.
        self._body = self.path.with_name(self.path.name + ".partial")
        self._moved = self.path.with_name(self.path.name + ".body.partial")
        self._handle: BinaryIO | None = None
        self._chunks: _Chunks | None = None

    def __enter__(self) -> PersonaWriter:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._moved.unlink(missing_ok=True)
        self._handle = self._body.open("wb")
        self._chunks = _Chunks(self._handle)
        return self

    def add(self, conversation: Transcript) -> None:
        """Write one conversation (its ``transcript`` record and its messages)."""
        assert self._chunks is not None, "PersonaWriter is used in a with block"
        self._failing(self._chunks.add, _conversation_lines(conversation))

    def finish(self, info: PersonaInfo) -> Path:
        """Write the header before the conversations and rename the file into place."""
        assert self._handle is not None and self._chunks is not None
        self._failing(self._chunks.flush)
        self._handle.close()
        os.replace(self._body, self._moved)
        with replacing(self.path) as partial, partial.open("wb") as handle:
            handle.write(encode_record(persona_header(info)))
            with self._moved.open("rb") as body:
                shutil.copyfileobj(body, handle, _WRITE_CHUNK)
        self._moved.unlink()
        return self.path

    def _failing(self, write: Callable[..., None], *args: Any) -> None:
        try:
            write(*args)
        except OSError as error:
            raise naming(error, self.path, instead_of=self._body) from None

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        if self._handle is not None:
            self._handle.close()
        for leftover in (self._body, self._moved):
            with suppress(OSError):
                leftover.unlink()


def _info_from_record(record: dict[str, Any], path: Path, line: int) -> PersonaInfo:
    if "version" not in record:
        raise InputError(
            f"is missing; this sdtt reads persona files of version {SCHEMA_VERSION}.",
            path=path,
            line=line,
            field="version",
        )
    version = record["version"]
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InputError(
            f"{version!r} is not a format version (a whole number such as {SCHEMA_VERSION}).",
            path=path,
            line=line,
            field="version",
        )
    if version > SCHEMA_VERSION:
        raise InputError(
            f"the file has format version {version}, newer than this sdtt "
            f"understands ({SCHEMA_VERSION}).",
            path=path,
            line=line,
            field="version",
            hint="Upgrade sdtt to read it.",
        )
    fields = {key: value for key, value in record.items() if key != "type"}
    info = validate_record(PersonaInfo, fields, path, line)
    if info.timing is not None:
        validate_record(TimingProfile, info.timing, path, line, field_prefix="timing.")
    return info


def _header(
    records: Iterable[tuple[int, dict[str, Any]]], path: Path
) -> tuple[PersonaInfo, list[tuple[int, dict[str, Any]]]]:
    """The persona header and the records after it, checking their types."""
    info: PersonaInfo | None = None
    rest: list[tuple[int, dict[str, Any]]] = []
    for line, record in records:
        kind = record.get("type")
        if kind not in RECORD_TYPES:
            expected = ", ".join(f"'{name}'" for name in RECORD_TYPES)
            problem = "is missing" if kind is None else f"{kind!r} is not a record type"
            raise InputError(
                f"{problem}; persona files hold {expected} records.",
                path=path,
                line=line,
                field="type",
            )
        if info is None:
            if kind != "persona":
                raise InputError(
                    f"the first record is a {kind!r} record, but a persona file must start "
                    "with its 'persona' header (name, source, license, attribution...).",
                    path=path,
                    line=line,
                    hint=FORMAT_HINT,
                )
            info = _info_from_record(record, path, line)
        elif kind == "persona":
            raise InputError(
                "a second 'persona' header; a persona file holds exactly one, on its first line.",
                path=path,
                line=line,
                field="type",
            )
        else:
            rest.append((line, record))
    if info is None:
        raise InputError(
            "is empty; a persona file starts with a 'persona' header record.",
            path=path,
            hint=FORMAT_HINT,
        )
    return info, rest


def _refuse_cut_persona(path: Path) -> Callable[[int], None]:
    # Persona files are written whole and renamed into place, so a cut-off last record
    # means a damaged copy, not an interrupted run: using the rest would quietly change
    # the persona.
    def refuse(line: int) -> None:
        raise InputError(
            "the last record is cut off, so the persona file is incomplete.",
            path=path,
            line=line,
            hint="Copy or import the persona again.",
        )

    return refuse


def load_persona(path: str | Path) -> Persona:
    """Read and check a persona file. Every problem is an :class:`InputError` with its place."""
    path = Path(path)
    if path.is_dir():
        raise InputError("is a folder, not a persona file.", path=path)
    info, records = _header(read_jsonl(path, on_partial_tail=_refuse_cut_persona(path)), path)
    conversations = transcripts_from_records(records, path)
    if not conversations:
        raise InputError(
            "has no conversations: the persona header must be followed by at least one "
            "'transcript' record and its 'message' records.",
            path=path,
            hint=FORMAT_HINT,
        )
    if not any(m.side == RESPONSE for c in conversations for m in c.messages):
        raise InputError(
            "has no messages by the persona: none of its messages has side 'response' "
            "(the persona's side; 'user' is the chat partner).",
            path=path,
            hint='Check that the persona\'s own messages are marked "side": "response".',
        )
    ids = {conversation.id for conversation in conversations}
    unknown = [name for name in info.held_out if name not in ids]
    if unknown or (info.held_out and ids <= set(info.held_out)):
        raise InputError(
            f"held_out names {', '.join(map(repr, unknown))}, not conversations of the file."
            if unknown
            else "held_out holds every conversation: none is left for the prompt.",
            path=path,
            field="held_out",
            hint="List ids of the file's 'transcript' records, leaving one or more out, or "
            "make the file again with 'sdtt persona hold-out'.",
        )
    return Persona(info=info, conversations=conversations)


def read_persona_info(path: str | Path) -> PersonaInfo:
    """Only the header of a persona file (fast: reads up to the first record)."""
    path = Path(path)
    for line, record in read_jsonl(path):
        info, _ = _header([(line, record)], path)
        return info
    raise InputError(
        "is empty; a persona file starts with a 'persona' header record.",
        path=path,
        hint=FORMAT_HINT,
    )


def persona_dirs() -> list[tuple[str, Path]]:
    """The folders searched for personas, in order, with a label for each."""
    return [("local", LOCAL_DIR), ("shipped", SHIPPED_DIR)]


def _looks_like_path(text: str) -> bool:
    return text.endswith(SUFFIX) or "/" in text or "\\" in text


def locate_persona(
    name_or_path: str | Path, dirs: Sequence[tuple[str, Path]] | None = None
) -> Path:
    """The file of a persona given by name (``chitchat-32b20fa3``) or by path."""
    text = str(name_or_path)
    candidate = Path(text)
    if candidate.exists() and not candidate.is_dir():  # a device or pipe is refused on reading
        return candidate
    if isinstance(name_or_path, Path) or _looks_like_path(text):
        raise InputError("persona file not found.", path=candidate)
    dirs = persona_dirs() if dirs is None else dirs
    for _, folder in dirs:
        path = folder / f"{text}{SUFFIX}"
        if path.is_file():
            return path
    # A file may be named differently from the persona it holds.
    for _, folder in dirs:
        for path in sorted(folder.glob(f"*{SUFFIX}")):
            try:
                if read_persona_info(path).name == text:
                    return path
            except InputError:
                continue
    known = sorted(entry.name for entry in list_personas(dirs) if entry.persona is not None)
    searched = " or ".join(f"{label} ({folder})" for label, folder in dirs)
    raise InputError(
        f"no persona named {text!r} in {searched}.",
        hint=(f"Known personas: {', '.join(known)}. " if known else "")
        + "Run 'sdtt persona list', or give the path of a persona file.",
    )


def find_persona(
    name_or_path: str | Path, dirs: Sequence[tuple[str, Path]] | None = None
) -> Persona:
    """Load a persona given by name or path (see :func:`locate_persona`)."""
    return load_persona(locate_persona(name_or_path, dirs))


@dataclass(frozen=True)
class PersonaEntry:
    """One persona file found by :func:`list_personas`; ``error`` is set if it is broken."""

    name: str
    path: Path
    origin: str
    persona: Persona | None = None
    error: str | None = None


def list_personas(dirs: Sequence[tuple[str, Path]] | None = None) -> list[PersonaEntry]:
    """Every persona in the searched folders, sorted by name.

    A persona in ``./personas`` hides a shipped one of the same name. A broken file is
    listed with its error instead of stopping the listing.
    """
    entries: dict[str, PersonaEntry] = {}
    for origin, folder in persona_dirs() if dirs is None else dirs:
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob(f"*{SUFFIX}")):
            try:
                persona = load_persona(path)
            except InputError as error:
                entry = PersonaEntry(name=path.stem, path=path, origin=origin, error=str(error))
            else:
                entry = PersonaEntry(name=persona.name, path=path, origin=origin, persona=persona)
            entries.setdefault(entry.name, entry)
    return sorted(entries.values(), key=lambda entry: entry.name)
