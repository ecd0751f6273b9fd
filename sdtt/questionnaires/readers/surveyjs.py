"""SurveyJS results: ``survey.data`` objects as JSON.

Accepted: one result object, a JSON array of them (what the SurveyJS service and most
back ends export), an object with a ``results`` or ``data`` array, or JSON Lines (one
result per line). A result maps question names to option codes. The sdtt host page
(``questionnaires/surveyjs-host.js``) adds ``PROLIFIC_PID`` and ``page_seconds``
(seconds per page); without them the judge id is the file name and position, and
response times are unknown.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sdtt.errors import InputError
from sdtt.files import JsonTooComplexError, loads_json, what_file_is
from sdtt.questionnaires.exporters.surveyjs import PAGE_SUFFIX, TIMES_KEY
from sdtt.questionnaires.questionnaire import Questionnaire
from sdtt.questionnaires.readers.common import JudgeAnswers, read_text

ID_KEYS = ("PROLIFIC_PID", "judge_id", "respondent_id", "id")


def read_results(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """Each result of a SurveyJS results file with where it is (for error messages)."""
    text = read_text(path).strip()
    try:
        data = loads_json(text) if text else []
    except JsonTooComplexError as error:
        raise InputError(
            f"is not valid JSON ({error.msg}).", path=path, line=error.lineno
        ) from None
    except json.JSONDecodeError:
        data = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                data.append(loads_json(line))
            except json.JSONDecodeError as error:
                raise InputError(
                    f"is neither JSON nor JSON Lines ({error.msg}).",
                    path=path,
                    line=number,
                    hint=what_file_is(text),
                ) from None
    if isinstance(data, dict):
        for name in ("results", "data"):
            if isinstance(data.get(name), list):
                data = data[name]
                break
        else:
            data = [data]
    if not isinstance(data, list):
        raise InputError("holds no SurveyJS result objects.", path=path)
    results = []
    for index, result in enumerate(data, start=1):
        if not isinstance(result, dict):
            raise InputError(f"result {index} is not an object.", path=path)
        results.append((f"{path}[{index}]", result))
    return results


def read_surveyjs(path: str | Path, questionnaire: Questionnaire) -> list[JudgeAnswers]:
    """Respondents from a SurveyJS results file."""
    path = Path(path)
    respondents: list[JudgeAnswers] = []
    for index, (where, result) in enumerate(read_results(path), start=1):
        judge_id = next(
            (str(result[k]).strip() for k in ID_KEYS if str(result.get(k, "")).strip()),
            f"{path.stem}-{index}",
        )
        answers = {
            name: str(value)
            for name, value in result.items()
            if isinstance(value, str | int | float) and not isinstance(value, bool)
        }
        seconds: dict[str, float] = {}
        times = result.get(TIMES_KEY)
        if isinstance(times, dict):
            for item in questionnaire.items:
                value = times.get(item.id + PAGE_SUFFIX)
                if isinstance(value, int | float) and value >= 0:
                    seconds[item.id] = float(value)
            # Reveal mode times each step's screen; kept under the step's name.
            for name, value in times.items():
                if isinstance(name, str) and isinstance(value, int | float) and value >= 0:
                    seconds.setdefault(name, float(value))
        respondents.append(
            JudgeAnswers(judge_id=judge_id, answers=answers, seconds=seconds, where=where)
        )
    return respondents
