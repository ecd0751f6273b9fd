"""Transcript files: conversations as JSONL records.

A file holds one or more conversations. Each starts with a header record
``{"type": "transcript", "version": 1, "id": ..., "topic": ..., "condition": {...} | null,
"meta": {...}}`` (the condition: :mod:`sdtt.dialogue.condition`) and its
messages follow as ``{"type": "message", "conversation": <id>, "side": "user"|"response",
"text": ..., "time": <ISO 8601 with zone>}``. Other record types (a persona header,
events) may sit in the same file; readers skip types they do not know.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar, overload

from pydantic import BaseModel, TypeAdapter, ValidationError

from sdtt.dialogue.message import SCHEMA_VERSION, Message, Transcript
from sdtt.errors import InputError
from sdtt.files import replacing
from sdtt.jsonl import JsonlWriter, read_jsonl

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


def transcript_header(transcript: Transcript) -> dict[str, Any]:
    """The header record that opens a conversation in a file."""
    header = transcript.model_dump(mode="json", exclude={"messages"})
    return {"type": "transcript", **header}


def message_record(conversation: str, message: Message) -> dict[str, Any]:
    """The record of one message of conversation ``conversation``."""
    return {"type": "message", "conversation": conversation, **message.model_dump(mode="json")}


def validation_problem(error: ValidationError) -> tuple[str, str]:
    """The first problem of a pydantic error as ``(field, explanation)``."""
    first = error.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or "(record)"
    return field, first["msg"].removeprefix("Value error, ")


@overload
def validate_record(
    model: type[M],
    fields: object,
    path: str | Path,
    line: int | None = None,
    *,
    hint: str | None = None,
    field_prefix: str = "",
) -> M: ...


@overload
def validate_record(
    model: TypeAdapter[T],
    fields: object,
    path: str | Path,
    line: int | None = None,
    *,
    hint: str | None = None,
    field_prefix: str = "",
) -> T: ...


def validate_record(
    model: type[BaseModel] | TypeAdapter[Any],
    fields: object,
    path: str | Path,
    line: int | None = None,
    *,
    hint: str | None = None,
    field_prefix: str = "",
) -> Any:
    """``fields`` validated as ``model`` (a pydantic model or a ``TypeAdapter``).

    A problem raises :class:`InputError` naming the file, the line (when given) and the
    field (after ``field_prefix``), without the pydantic traceback.
    """
    try:
        if isinstance(model, TypeAdapter):
            return model.validate_python(fields)
        return model.model_validate(fields)
    except ValidationError as error:
        field, problem = validation_problem(error)
        raise InputError(
            problem + ".", path=path, line=line, field=field_prefix + field, hint=hint
        ) from None


def check_version(
    record: Mapping[str, Any],
    newest: int,
    path: str | Path,
    line: int | None,
    *,
    what: str = "format version",
) -> None:
    """Refuse a record whose ``version`` (absent means ``newest``) this sdtt cannot read."""
    version = record.get("version", newest)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        known = str(newest) if newest == 1 else f"1 to {newest}"
        raise InputError(
            f"{version!r} is not a {what} this sdtt reads ({known}).",
            path=path,
            line=line,
            field="version",
            hint="The file was not written by sdtt, or was edited by hand.",
        )
    if version > newest:
        raise InputError(
            f"was written by a newer sdtt ({what} {version!r}).",
            path=path,
            line=line,
            field="version",
            hint="Upgrade sdtt to read it.",
        )


class TranscriptWriter:
    """Writes a conversation as it happens: the header once, then each message."""

    def __init__(self, path: str | Path, transcript: Transcript, *, fsync: bool = False) -> None:
        self.path = Path(path)
        self.transcript_id = transcript.id
        is_new = not self.path.exists() or self.path.stat().st_size == 0
        self._writer = JsonlWriter(self.path, fsync=fsync)
        if is_new:
            self._writer.write(transcript_header(transcript))
            for message in transcript.messages:
                self.add(message)

    def add(self, message: Message) -> None:
        """Append one message (flushed at once)."""
        self._writer.write(message_record(self.transcript_id, message))

    def close(self) -> None:
        """Close the file."""
        self._writer.close()


def write_transcripts(path: str | Path, transcripts: Iterable[Transcript]) -> None:
    """Write whole conversations to a new file (replacing any file at ``path``)."""
    with replacing(Path(path)) as partial, JsonlWriter(partial) as writer:
        for transcript in transcripts:
            writer.write(transcript_header(transcript))
            for message in transcript.messages:
                writer.write(message_record(transcript.id, message))


def transcripts_from_records(
    records: Iterable[tuple[int, dict[str, Any]]], path: str | Path
) -> list[Transcript]:
    """Assemble conversations from numbered records; errors name the file and line."""
    transcripts: dict[str, Transcript] = {}
    for line, record in records:
        kind = record.get("type")
        if kind == "transcript":
            check_version(record, SCHEMA_VERSION, path, line)
            fields = {key: value for key, value in record.items() if key != "type"}
            transcript = validate_record(Transcript, fields, path, line)
            if transcript.id in transcripts:
                raise InputError(
                    f"conversation id {transcript.id!r} is used twice.",
                    path=path,
                    line=line,
                    field="id",
                )
            transcripts[transcript.id] = transcript
        elif kind == "message":
            conversation = record.get("conversation")
            if conversation not in transcripts:
                raise InputError(
                    f"message belongs to conversation {conversation!r}, "
                    "which has no 'transcript' record before it.",
                    path=path,
                    line=line,
                    field="conversation",
                )
            fields = {k: v for k, v in record.items() if k not in ("type", "conversation")}
            message = validate_record(Message, fields, path, line)
            transcripts[str(conversation)].messages.append(message)
    return list(transcripts.values())


def read_transcripts(path: str | Path) -> list[Transcript]:
    """Read every conversation in a transcript file."""
    return transcripts_from_records(read_jsonl(path), path)
