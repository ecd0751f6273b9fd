"""Answers written as they come, failed calls last (``sdtt judge``, ``judge --reveal``,
``align judge``).

A record of a failed call is held back and written after the others, and only when some
call worked: a run whose every call failed leaves the file as it was, ready for a rerun
that asks again.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

from pydantic import BaseModel

from sdtt.commands.common import EXIT_NOTHING_USABLE
from sdtt.commands.console import CliConsole
from sdtt.jsonl import JsonlWriter
from sdtt.redact import shown

Answer = TypeVar("Answer", bound=BaseModel)


class FailuresLast(Generic[Answer]):
    """Writes each answer at once, holding back those ``is_error`` marks as failed calls."""

    def __init__(self, writer: JsonlWriter, is_error: Callable[[Answer], bool]) -> None:
        self.writer = writer
        self.is_error = is_error
        self.made: list[Answer] = []
        """Every answer recorded, in order."""
        self.errors: list[Answer] = []
        """The failed calls held back."""

    def record(self, answer: Answer) -> None:
        """Take one answer (the ``on_...`` callback of a judge run)."""
        self.made.append(answer)
        if self.is_error(answer):
            self.errors.append(answer)
        else:
            self.writer.write(answer)

    @property
    def every_failed(self) -> bool:
        """Some answers came, and every one is a failed call."""
        return bool(self.made) and len(self.errors) == len(self.made)

    def write_held(self) -> None:
        """Write the held-back failures (a rerun then asks them again)."""
        for answer in self.errors:
            self.writer.write(answer)

    def nothing_written(self, out: Path, *, existed: bool) -> int:
        """End a run whose every call failed: ``out`` stays as it was (removed if this
        run made it), one error line gives the distinct reasons; the exit status."""
        if not existed:
            out.unlink(missing_ok=True)
        reasons = dict.fromkeys(
            (getattr(answer, "exclusion_reason", None) or "").removeprefix("model_error: ")
            for answer in self.errors
        )
        CliConsole(stderr=True, highlight=False).print(
            f"[bold red]error:[/] every judge call failed, so nothing was written to "
            f"{shown(str(out))}. The calls failed with: {shown(' | '.join(reasons))}"
        )
        return EXIT_NOTHING_USABLE
