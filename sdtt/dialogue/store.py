"""Transcript files: conversations as JSONL records.

A file holds one or more conversations. Each starts with a header record
``{"type": "transcript", "version": 1, "id": ..., "topic": ..., "meta": {...}}`` and its
messages follow as ``{"type": "message", "conversation": <id>, "side": "user"|"response",
"text": ..., "time": <ISO 8601 with zone>}``. Other record types (a persona header,
events) may sit in the same file; readers skip types they do not know.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from sdtt.dialogue.jsonl import JsonlWriter, read_jsonl
from sdtt.dialogue.message import SCHEMA_VERSION, Message, Transcript
from sdtt.errors import InputError


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
    path = Path(path)
    partial = path.with_name(path.name + ".partial")
    partial.unlink(missing_ok=True)
    with JsonlWriter(partial) as writer:
        for transcript in transcripts:
            writer.write(transcript_header(transcript))
            for message in transcript.messages:
                writer.write(message_record(transcript.id, message))
    partial.replace(path)


def transcripts_from_records(
    records: Iterable[tuple[int, dict[str, Any]]], path: str | Path
) -> list[Transcript]:
    """Assemble conversations from numbered records; errors name the file and line."""
    transcripts: dict[str, Transcript] = {}
    for line, record in records:
        kind = record.get("type")
        if kind == "transcript":
            version = record.get("version", SCHEMA_VERSION)
            if not isinstance(version, int) or version > SCHEMA_VERSION:
                raise InputError(
                    f"was written by a newer sdtt (format version {version!r}).",
                    path=path,
                    line=line,
                    field="version",
                    hint="Upgrade sdtt to read it.",
                )
            fields = {key: value for key, value in record.items() if key != "type"}
            try:
                transcript = Transcript.model_validate(fields)
            except ValidationError as error:
                field, problem = validation_problem(error)
                raise InputError(problem + ".", path=path, line=line, field=field) from None
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
            try:
                message = Message.model_validate(fields)
            except ValidationError as error:
                field, problem = validation_problem(error)
                raise InputError(problem + ".", path=path, line=line, field=field) from None
            transcripts[str(conversation)].messages.append(message)
    return list(transcripts.values())


def read_transcripts(path: str | Path) -> list[Transcript]:
    """Read every conversation in a transcript file."""
    return transcripts_from_records(read_jsonl(path), path)
