"""The response records of the single-item tasks (word association, image captioning).

One record is one response to one stimulus: a cue word's association, or an image's
caption, with the truth (who wrote it) and where it came from. Machine responses, human
responses imported from a CSV file and responses imported from the Kreiman lab's released
files all become these records, so single-item questionnaires, SVM judges and scoring
take them alike. A record that post-processing disqualified is kept with its
``exclusion_reason`` (counted and reported, never shown to a judge or used).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from sdtt.dialogue.record_files import TableKind, read_records, write_records
from sdtt.errors import InputError

RESPONSE_VERSION = 1
"""Format version of response records; bump on breaking changes."""

Task = Literal["wordassoc", "caption"]
Truth = Literal["human", "machine"]


class SingleResponse(BaseModel):
    """One response to one stimulus, and who wrote it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = Field(default=RESPONSE_VERSION, description="Record format version.")
    task: Task = Field(description="'wordassoc' (cue -> association) or 'caption' (image).")
    id: str = Field(description="Opaque response id (a hash of task, stimulus, text, agent).")
    stimulus: str = Field(description="The cue word, or the image's file name.")
    response: str = Field(description="The association (after post-processing) or caption.")
    truth: Truth = Field(description="Who wrote it: 'human' or 'machine'. Never shown.")
    agent: str = Field(
        default="",
        description="Machine: its provider/model (or the label of an imported model); "
        "human: a participant id when known. Never shown to judges.",
    )
    raw: str | None = Field(
        default=None, description="The text as written, when post-processing changed it."
    )
    exclusion_reason: str | None = Field(
        default=None, description="Why post-processing disqualified it; None when usable."
    )
    catch: bool = Field(
        default=False,
        description="An attention check (the papers' catch trial): obviously machine-made, "
        "so a judge who reads it says machine. Shown to judges, never used as a response.",
    )
    origin: str = Field(description="Where it came from: 'FILE:LINE', or 'model' when generated.")
    meta: dict[str, Any] = Field(
        default_factory=dict, description="Provenance: seed, attempts, imported fields."
    )

    @property
    def usable(self) -> bool:
        """Whether it may be shown to judges (catch items included)."""
        return self.exclusion_reason is None

    @property
    def judged(self) -> bool:
        """Whether it is a real response judges and the SVM and LLM judges are scored on."""
        return self.usable and not self.catch


def judged_of_one_task(
    records: Sequence[SingleResponse], judge: str
) -> tuple[Task, list[SingleResponse]]:
    """The task and the judged records (usable, no catch items) a judge is scored on; an
    :class:`InputError` naming ``judge`` when they are not all of one task."""
    judged = [r for r in records if r.judged]
    tasks = {r.task for r in judged}
    if len(tasks) != 1:
        raise InputError(
            f"{judge} needs the responses of one task (found {sorted(tasks) or 'none'}).",
            hint="Judge word associations and captions separately.",
        )
    return tasks.pop(), judged


def response_id(task: str, stimulus: str, text: str, agent: str, extra: str = "") -> str:
    """A stable opaque id: the same response imported twice gets the same id."""
    digest = hashlib.sha256("\x1f".join((task, stimulus, text, agent, extra)).encode()).hexdigest()
    return f"r{digest[:12]}"


RESPONSES = TableKind(SingleResponse, RESPONSE_VERSION, "response", "single-item responses")
"""What response files hold."""


def write_responses(path: str | Path, responses: Iterable[SingleResponse]) -> int:
    """Write response records to a JSONL file (replaced only when complete)."""
    return write_records(path, responses)


def read_responses(path: str | Path) -> list[SingleResponse]:
    """Read a response file, each bad line named in its error."""
    return read_records(path, RESPONSES)
