"""Writing a questionnaire's exports: the files of each chosen survey tool.

Under a judge design (``Questionnaire.forms``) every tool's file is also written once
per form into ``form-NN/``; the tools whose single file hands out the pairs itself
(:attr:`~sdtt.surveys.tool.SurveyTool.design_native`: Qualtrics' nested block
randomizers with even presentation, the jsPsych page picking a form from ``?form=N`` or
at random) get that file as well.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from sdtt.files import TextChangedWarning, write_text_atomic
from sdtt.redact import without_hidden
from sdtt.surveys.tool import ExportOptions
from sdtt.surveys.tools import TOOLS, reveal_export
from sdtt.tasks.questionnaire import Questionnaire


def neutralised(questionnaire: Questionnaire) -> Questionnaire:
    """``questionnaire`` with every bidi control and invisible character dropped from its
    text (see :data:`~sdtt.redact.HIDDEN_CHARACTERS`), so no export shows a chat line
    reordered or carrying marks a judge cannot see; the count is reported as a
    :class:`~sdtt.files.TextChangedWarning`. Every export goes through it."""
    removed = 0

    def clean(value: Any) -> Any:
        nonlocal removed
        if isinstance(value, str):
            text, found = without_hidden(value)
            removed += found
            return text
        if isinstance(value, list | tuple):
            return [clean(item) for item in value]
        if isinstance(value, dict):
            return {key: clean(item) for key, item in value.items()}
        return value

    cleaned = clean(questionnaire.model_dump())
    if not removed:
        return questionnaire
    warnings.warn(
        TextChangedWarning(
            f"questionnaire {questionnaire.id}: {removed} bidi-control or invisible "
            "character(s) (such as U+202E, U+200B, U+FEFF) left out of the exports: they "
            "would show chat text reordered, or hold marks judges cannot see."
        ),
        stacklevel=3,
    )
    return Questionnaire.model_validate(cleaned)


def export_text(
    questionnaire: Questionnaire, format_name: str, options: ExportOptions | None = None
) -> str:
    """The text of one export; reveal mode in a tool that cannot do it raises
    :class:`~sdtt.surveys.tool.RevealNotSupported`."""
    questionnaire = neutralised(questionnaire)
    options = options or ExportOptions()
    if options.reveal:
        return reveal_export(format_name).write(questionnaire, options)
    return TOOLS[format_name].write(questionnaire, options)


def form_folder(number: int) -> str:
    """The export subfolder of one form of a judge design."""
    return f"form-{number:02d}"


def export_texts(
    questionnaire: Questionnaire, format_name: str, options: ExportOptions | None = None
) -> dict[str, str]:
    """Every file one format writes, by path relative to the export folder.

    Without a judge design: one file. With one: a file per form (``form-NN/FILE``, only
    that form's pairs, for tools that should show each judge group its own survey), plus
    for design-native tools a single file that assigns the pairs itself.
    """
    questionnaire = neutralised(questionnaire)
    options = options or ExportOptions()
    tool = TOOLS[format_name]
    filename, write = tool.filename, tool.write
    if options.reveal:
        mode = reveal_export(format_name)
        filename, write = mode.filename, mode.write
    texts: dict[str, str] = {}
    if not questionnaire.forms or tool.design_native:
        texts[filename] = write(questionnaire, options)
    for form in questionnaire.forms:
        texts[f"{form_folder(form.number)}/{filename}"] = write(
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
