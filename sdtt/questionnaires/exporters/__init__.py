"""One exporter per survey tool; each turns a :class:`Questionnaire` into one file.

Exporters read only the questionnaire (never the answer key), so nothing secret can end
up in what judges receive.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sdtt.files import write_text_atomic
from sdtt.questionnaires.exporters import csv as csv_exporter
from sdtt.questionnaires.exporters import jspsych, limesurvey, printable, qualtrics, surveyjs
from sdtt.questionnaires.questionnaire import Questionnaire


@dataclass(frozen=True)
class ExportOptions:
    """Settings some exporters use."""

    data_url: str | None = None
    """jsPsych: where the page POSTs its CSV at the end (None: download only)."""


@dataclass(frozen=True)
class Exporter:
    """A named export format: its file name and how to write it."""

    name: str
    filename: str
    description: str
    write: Callable[[Questionnaire, ExportOptions], str]


EXPORTERS: dict[str, Exporter] = {
    exporter.name: exporter
    for exporter in (
        Exporter(
            "surveyjs",
            surveyjs.FILENAME,
            "SurveyJS survey JSON",
            lambda q, o: surveyjs.export(q),
        ),
        Exporter(
            "qualtrics",
            qualtrics.FILENAME,
            "Qualtrics survey file (.qsf)",
            lambda q, o: qualtrics.export(q),
        ),
        Exporter(
            "jspsych",
            jspsych.FILENAME,
            "self-contained jsPsych page",
            lambda q, o: jspsych.export(q, data_url=o.data_url),
        ),
        Exporter(
            "limesurvey",
            limesurvey.FILENAME,
            "LimeSurvey tab-separated import file",
            lambda q, o: limesurvey.export(q),
        ),
        Exporter(
            "html",
            printable.HTML_FILENAME,
            "printable HTML page",
            lambda q, o: printable.export_html(q),
        ),
        Exporter(
            "markdown",
            printable.MARKDOWN_FILENAME,
            "printable Markdown",
            lambda q, o: printable.export_markdown(q),
        ),
        Exporter(
            "csv",
            csv_exporter.FILENAME,
            "long CSV table for other tools",
            lambda q, o: csv_exporter.export(q),
        ),
    )
}


def export_text(
    questionnaire: Questionnaire, format_name: str, options: ExportOptions | None = None
) -> str:
    """The text of one export."""
    return EXPORTERS[format_name].write(questionnaire, options or ExportOptions())


def export_files(
    questionnaire: Questionnaire,
    formats: list[str],
    folder: str | Path,
    options: ExportOptions | None = None,
) -> dict[str, Path]:
    """Write the chosen exports into ``folder``; returns format name to file."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    for name in formats:
        exporter = EXPORTERS[name]
        path = folder / exporter.filename
        write_text_atomic(path, exporter.write(questionnaire, options or ExportOptions()))
        written[name] = path
    return written
