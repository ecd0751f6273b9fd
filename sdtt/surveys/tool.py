"""What a survey tool is to sdtt: one :class:`SurveyTool` record, with its parts.

A record says everything the rest of sdtt asks of a tool: the file its export writes and
how, how its answer files are read back, whether its single file carries a judge design
itself, whether it can do reveal mode, how it fields a rating task (``sdtt align``) and a
single-item task (``sdtt single``). Each tool's module in :mod:`sdtt.surveys` defines its
records as ``ENTRIES``, beside the functions they name; :mod:`sdtt.surveys.tools` lists
every tool.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sdtt.errors import InputError
from sdtt.surveys.answer_files import JudgeAnswers
from sdtt.tasks.questionnaire import Questionnaire
from sdtt.tasks.rating_task import RatingAnswer, RatingTask
from sdtt.tasks.single_task import SingleAnswer, SingleTask


class RevealNotSupported(InputError):
    """The chosen survey tool cannot show a pair turn by turn with a slider."""


@dataclass(frozen=True)
class ExportOptions:
    """Settings some exporters use."""

    data_url: str | None = None
    """jsPsych: where the page POSTs its CSV at the end (None: download only)."""
    reveal: bool = False
    """Reveal mode: pairs shown turn by turn with a belief slider (only tools with a
    :attr:`SurveyTool.reveal` export; see :mod:`sdtt.tasks.reveal_turns`)."""


Write = Callable[[Questionnaire, ExportOptions], str]
"""Writes one file's text from the questionnaire (never the answer key)."""

Reader = Callable[[Path, Questionnaire], list[JudgeAnswers]]
"""Reads one answer file into each respondent's answers."""


@dataclass(frozen=True)
class RevealExport:
    """A tool's reveal-mode file: each pair turn by turn, a belief slider after each turn."""

    filename: str
    write: Write


@dataclass(frozen=True)
class RatingFormat:
    """How a tool fields a rating task of ``sdtt align``: its files and its answers."""

    write: Callable[[RatingTask], dict[str, str]]
    """The task's files (never its key), by file name."""
    read: Callable[[Path, RatingTask], list[RatingAnswer]]
    """The answers in one response file."""


@dataclass(frozen=True)
class SingleFormat:
    """How a tool fields a single-item task of ``sdtt single``: its files and its answers."""

    write: Callable[[SingleTask, ExportOptions], dict[str, str]]
    """The task's files (never its key), by file name."""
    read: Callable[[Path, SingleTask], list[SingleAnswer]]
    """The answers in one response file."""


@dataclass(frozen=True)
class SurveyTool:
    """A survey tool: what its export is, how to write it and how its answers come back."""

    name: str
    """The ``--format`` name."""
    description: str
    """What its export is, for ``sdtt questionnaire export --help``."""
    filename: str
    """The file its export writes (one per form under a judge design)."""
    write: Write
    read: Reader | None = None
    """Reads its answer files (None: answers cannot come back from it, e.g. print)."""
    answers: str = ""
    """What its answer files are, for ``sdtt responses import --help``."""
    design_native: bool = False
    """Whether its single file hands out a judge design's forms itself (Qualtrics'
    randomizers, the jsPsych page's ``?form=N``), so it is written beside the per-form
    files rather than replaced by them."""
    draws_blind: bool = False
    """Whether that single file draws each judge's pairs at random, blind to which pairs
    share a conversation (Qualtrics' randomizer), so exporting it warns how many judges
    would read one conversation twice."""
    reveal: RevealExport | None = None
    """Its reveal-mode export (None: it cannot show a pair turn by turn with a slider)."""
    rating: RatingFormat | None = None
    """How it fields a rating task (None: ``sdtt align`` cannot use it)."""
    single: SingleFormat | None = None
    """How it fields a single-item task (None: ``sdtt single`` cannot use it)."""

    def __post_init__(self) -> None:
        if (self.read is None) != (not self.answers):
            raise ValueError(f"survey tool {self.name}: a reader needs its help text, and back")
