"""One exporter per survey tool; each turns a :class:`Questionnaire` into one file.

Exporters read only the questionnaire (never the answer key), so nothing secret can end
up in what judges receive. Under a judge design (``Questionnaire.forms``) every format is
also written once per form into ``form-NN/``; Qualtrics and jsPsych additionally get one
file that hands out the pairs itself (Qualtrics: nested block randomizers with even
presentation; jsPsych: the page picks a form from ``?form=N`` or at random).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sdtt.files import write_text_atomic
from sdtt.questionnaires.exporters import csv as csv_exporter
from sdtt.questionnaires.exporters import (
    jspsych,
    limesurvey,
    printable,
    qualtrics,
    reveal,
    surveyjs,
)
from sdtt.questionnaires.questionnaire import Questionnaire


@dataclass(frozen=True)
class ExportOptions:
    """Settings some exporters use."""

    data_url: str | None = None
    """jsPsych: where the page POSTs its CSV at the end (None: download only)."""
    reveal: bool = False
    """Reveal mode: pairs shown turn by turn with a belief slider (SurveyJS and jsPsych
    only; see :mod:`sdtt.questionnaires.exporters.reveal`)."""


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
            lambda q, o: reveal.export_surveyjs(q) if o.reveal else surveyjs.export(q),
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
            lambda q, o: (
                reveal.export_jspsych(q, data_url=o.data_url)
                if o.reveal
                else jspsych.export(q, data_url=o.data_url)
            ),
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
    """The text of one export; reveal mode in a tool that cannot do it raises
    :class:`~sdtt.questionnaires.exporters.reveal.RevealNotSupported`."""
    options = options or ExportOptions()
    if options.reveal:
        reveal.check_reveal_format(format_name)
    return EXPORTERS[format_name].write(questionnaire, options)


DESIGN_NATIVE = ("qualtrics", "jspsych")
"""Formats whose single file carries a judge design itself (see the module docstring)."""


def form_folder(number: int) -> str:
    """The export subfolder of one form of a judge design."""
    return f"form-{number:02d}"


def export_texts(
    questionnaire: Questionnaire, format_name: str, options: ExportOptions | None = None
) -> dict[str, str]:
    """Every file one format writes, by path relative to the export folder.

    Without a judge design: one file. With one: a file per form (``form-NN/FILE``, only
    that form's pairs, for tools that should show each judge group its own survey), plus
    for Qualtrics and jsPsych a single file that assigns the pairs itself.
    """
    options = options or ExportOptions()
    exporter = EXPORTERS[format_name]
    filename = exporter.filename
    if options.reveal:
        reveal.check_reveal_format(format_name)
        filename = reveal.REVEAL_FILENAMES[format_name]
    texts: dict[str, str] = {}
    if not questionnaire.forms or format_name in DESIGN_NATIVE:
        texts[filename] = exporter.write(questionnaire, options)
    for form in questionnaire.forms:
        texts[f"{form_folder(form.number)}/{filename}"] = exporter.write(
            questionnaire.form_questionnaire(form), options
        )
    return texts


def export_files(
    questionnaire: Questionnaire,
    formats: list[str],
    folder: str | Path,
    options: ExportOptions | None = None,
) -> dict[str, Path]:
    """Write the chosen exports into ``folder``; returns format name to file.

    With a judge design, the per-form files are keyed ``form-NN/FORMAT``.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    for name in formats:
        for relative, text in export_texts(questionnaire, name, options).items():
            path = folder / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            write_text_atomic(path, text)
            form = relative.split("/")[0] + "/" if "/" in relative else ""
            written[form + name] = path
    return written
