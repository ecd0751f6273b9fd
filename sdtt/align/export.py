"""The rating task for survey tools: each tool's files, written through the registry.

Exports read only the task (never its key), so nothing secret reaches judges. Which
tools can field a rating task, and how, is each tool's
:attr:`sdtt.surveys.tool.SurveyTool.rating` (each tool's ``rating_files`` in its module
of :mod:`sdtt.surveys`); the other tools are refused.
"""

from __future__ import annotations

from pathlib import Path

from sdtt.errors import InputError
from sdtt.files import write_text_atomic
from sdtt.surveys.tools import TOOLS, rating_tools
from sdtt.tasks.rating_task import RatingTask


def export_task(task: RatingTask, format_name: str, folder: Path) -> list[Path]:
    """Write the task in ``format_name`` into ``folder``; returns the files written."""
    tool = TOOLS.get(format_name)
    if tool is None or tool.rating is None:
        raise InputError(
            f"unknown format {format_name!r}."
            if tool is None
            else f"format {format_name!r} is not supported for rating tasks.",
            field="--format",
            hint=f"Use one of {', '.join(rating_tools())}.",
        )
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name, text in tool.rating.write(task).items():
        write_text_atomic(folder / name, text)
        written.append(folder / name)
    return written
