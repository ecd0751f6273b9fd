"""Structural checks of survey files, for formats no tool can validate offline.

``sdtt questionnaire check FILE`` runs them on any file (also one edited by hand after
export): each tool's own ``check`` (:func:`sdtt.surveys.qualtrics.check`,
:func:`sdtt.surveys.limesurvey.check`, :func:`sdtt.surveys.surveyjs.check`), chosen by
the file's suffix and content.
"""

from __future__ import annotations

import csv
from pathlib import Path

from sdtt.errors import InputError
from sdtt.files import checked_text, parse_json, read_file_bytes
from sdtt.surveys import limesurvey, qualtrics, surveyjs

CHECKED_SUFFIXES = (".qsf", ".json", ".txt", ".tsv")
CHECKED_TYPES = "Qualtrics .qsf, SurveyJS .json and LimeSurvey .txt/.tsv files"
"""What :func:`check_file` checks, for messages."""


def check_file(path: str | Path) -> list[str]:
    """Check a ``.qsf``, LimeSurvey ``.txt``/``.tsv`` or SurveyJS ``.json`` file.

    Raises :class:`InputError` for any other file type, naming the types it checks.
    """
    path = Path(path)
    try:
        text = read_file_bytes(path).decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError("is not UTF-8 text.", path=path, hint="Re-save it as UTF-8.") from None
    text = checked_text(text, path, what="survey")
    suffix = path.suffix.lower()
    if suffix not in CHECKED_SUFFIXES:
        raise InputError(
            f"'questionnaire check' cannot check {suffix or 'extension-less'} files.",
            path=path,
            hint=f"It checks {CHECKED_TYPES}; give one of those (jsPsych pages, CSV and "
            "printable exports are checked by sdtt's tests, not by this command).",
        )
    if suffix in (".txt", ".tsv"):
        header = text.split("\n", 1)[0].rstrip("\r").split("\t")
        if not {"class", "name"} <= set(header):
            raise InputError(
                "is not a LimeSurvey tab-separated file (its first line names no 'class' "
                "and 'name' columns).",
                path=path,
                line=1,
                hint="Give the .txt file sdtt or LimeSurvey exported.",
            )
        try:
            return limesurvey.check(text)
        except csv.Error as error:
            raise InputError(
                f"is not a valid tab-separated file ({error}).",
                path=path,
                hint="Export it from sdtt or LimeSurvey again.",
            ) from None
    document = parse_json(text, path)
    if suffix == ".qsf" or (isinstance(document, dict) and "SurveyElements" in document):
        return qualtrics.check(document)
    return surveyjs.check(document)
