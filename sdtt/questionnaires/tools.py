"""The survey tools sdtt writes questionnaires for: one :class:`SurveyTool` record each.

A record says everything the rest of sdtt asks of a tool: the file its export writes and
how, how its answer files are read back, whether its single file carries a judge design
itself, whether it can do reveal mode, how it fields a rating task (``sdtt align``).
``sdtt questionnaire export``, ``sdtt responses import`` and ``sdtt align export/import``
take their ``--format`` choices and help text from :data:`TOOLS`; reveal mode, the
belief-trace importer, the rating tasks and the single-item tasks (``sdtt single``) ask
it what a tool can do. Adding a tool is an exporter, a reader and one entry here
(ARCHITECTURE.md, "Where to add").

==============  =====================================================================
``surveyjs``    SurveyJS survey JSON; reveal mode, rating and single-item tasks; its results
``qualtrics``   a Qualtrics ``.qsf`` that hands out a judge design itself; response CSV
``jspsych``     a jsPsych page (design, reveal mode, rating and single-item tasks); its CSV
``limesurvey``  a LimeSurvey tab-separated import file; response CSV
``html``        a printable page (no answers come back)
``markdown``    printable Markdown (no answers come back)
``csv``         a long CSV for other tools (rating tasks too); judge_id,question,answer
==============  =====================================================================
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sdtt.questionnaires.exporters import csv as csv_exporter
from sdtt.questionnaires.exporters import (
    jspsych,
    limesurvey,
    printable,
    qualtrics,
    rating,
    reveal,
    single,
    surveyjs,
)
from sdtt.questionnaires.exporters.reveal import RevealNotSupported
from sdtt.questionnaires.questionnaire import Questionnaire
from sdtt.questionnaires.rating_task import RatingTask
from sdtt.questionnaires.readers.common import JudgeAnswers
from sdtt.questionnaires.readers.generic import read_generic
from sdtt.questionnaires.readers.jspsych import read_jspsych
from sdtt.questionnaires.readers.limesurvey import read_limesurvey
from sdtt.questionnaires.readers.qualtrics import read_qualtrics
from sdtt.questionnaires.readers.rating import (
    RatingAnswer,
    read_csv_ratings,
    read_jspsych_ratings,
    read_surveyjs_ratings,
)
from sdtt.questionnaires.readers.single import read_jspsych_single, read_surveyjs_single
from sdtt.questionnaires.readers.surveyjs import read_surveyjs
from sdtt.questionnaires.single_task import SingleAnswer, SingleTask


@dataclass(frozen=True)
class ExportOptions:
    """Settings some exporters use."""

    data_url: str | None = None
    """jsPsych: where the page POSTs its CSV at the end (None: download only)."""
    reveal: bool = False
    """Reveal mode: pairs shown turn by turn with a belief slider (only tools with a
    :attr:`SurveyTool.reveal` export; see :mod:`sdtt.questionnaires.exporters.reveal`)."""


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


TOOLS: dict[str, SurveyTool] = {
    tool.name: tool
    for tool in (
        SurveyTool(
            "surveyjs",
            "SurveyJS survey JSON",
            surveyjs.FILENAME,
            lambda q, o: surveyjs.export(q),
            read=read_surveyjs,
            answers="SurveyJS result JSON (object, array or JSON Lines)",
            reveal=RevealExport(reveal.SURVEYJS_FILENAME, lambda q, o: reveal.export_surveyjs(q)),
            rating=RatingFormat(rating.surveyjs_files, read_surveyjs_ratings),
            single=SingleFormat(lambda t, o: single.surveyjs_files(t), read_surveyjs_single),
        ),
        SurveyTool(
            "qualtrics",
            "Qualtrics survey file (.qsf)",
            qualtrics.FILENAME,
            lambda q, o: qualtrics.export(q),
            read=read_qualtrics,
            answers="Qualtrics response CSV with its three header rows",
            design_native=True,
            draws_blind=True,
        ),
        SurveyTool(
            "jspsych",
            "self-contained jsPsych page",
            jspsych.FILENAME,
            lambda q, o: jspsych.export(q, data_url=o.data_url),
            read=read_jspsych,
            answers="CSV written by the jsPsych export",
            design_native=True,
            reveal=RevealExport(
                reveal.JSPSYCH_FILENAME,
                lambda q, o: reveal.export_jspsych(q, data_url=o.data_url),
            ),
            rating=RatingFormat(rating.jspsych_files, read_jspsych_ratings),
            single=SingleFormat(
                lambda t, o: single.jspsych_files(t, o.data_url), read_jspsych_single
            ),
        ),
        SurveyTool(
            "limesurvey",
            "LimeSurvey tab-separated import file",
            limesurvey.FILENAME,
            lambda q, o: limesurvey.export(q),
            read=read_limesurvey,
            answers="LimeSurvey response CSV with question-code headings",
        ),
        SurveyTool(
            "html",
            "printable HTML page",
            printable.HTML_FILENAME,
            lambda q, o: printable.export_html(q),
        ),
        SurveyTool(
            "markdown",
            "printable Markdown",
            printable.MARKDOWN_FILENAME,
            lambda q, o: printable.export_markdown(q),
        ),
        SurveyTool(
            "csv",
            "long CSV table for other tools",
            csv_exporter.FILENAME,
            lambda q, o: csv_exporter.export(q),
            read=read_generic,
            answers="long CSV judge_id,question,answer[,seconds] from any other tool",
            rating=RatingFormat(rating.csv_files, read_csv_ratings),
        ),
    )
}
"""Every survey tool by name, in the order help texts list them."""


def either(names: list[str], last: str = "or") -> str:
    """Tool names for a help text: ``surveyjs, jspsych or csv``."""
    if len(names) < 2:
        return "".join(names)
    return f"{', '.join(names[:-1])} {last} {names[-1]}"


def readable_tools() -> list[SurveyTool]:
    """The tools whose answer files can be imported."""
    return [tool for tool in TOOLS.values() if tool.read is not None]


def reveal_tools() -> list[str]:
    """The names of the tools that can do reveal mode."""
    return [tool.name for tool in TOOLS.values() if tool.reveal is not None]


def rating_tools() -> list[str]:
    """The names of the tools that can field a rating task."""
    return [tool.name for tool in TOOLS.values() if tool.rating is not None]


def single_tools() -> list[str]:
    """The names of the tools that can field a single-item task."""
    return [tool.name for tool in TOOLS.values() if tool.single is not None]


def reveal_export(format_name: str) -> RevealExport:
    """The reveal-mode export of a tool; :class:`RevealNotSupported` (saying which tools
    can) when it has none."""
    tool = TOOLS.get(format_name)
    if tool is None or tool.reveal is None:
        raise RevealNotSupported(
            f"reveal mode is not supported by this tool ({format_name}).",
            hint="Export reveal mode to " + " or ".join(reveal_tools()) + ".",
        )
    return tool.reveal


def reader(format_name: str) -> Reader:
    """How answer files of a tool are read (KeyError for a tool without a reader, which
    the commands' ``--format`` choices rule out)."""
    read = TOOLS[format_name].read
    if read is None:
        raise KeyError(format_name)
    return read
