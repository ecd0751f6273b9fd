"""Importers: each survey tool's answer file into the one judgement table."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from sdtt.questionnaires.importers.common import ImportResult, JudgeAnswers, score
from sdtt.questionnaires.importers.generic import read_generic
from sdtt.questionnaires.importers.jspsych import read_jspsych
from sdtt.questionnaires.importers.limesurvey import read_limesurvey
from sdtt.questionnaires.importers.qualtrics import read_qualtrics
from sdtt.questionnaires.importers.surveyjs import read_surveyjs
from sdtt.questionnaires.questionnaire import AnswerKey, Questionnaire

Reader = Callable[[Path, Questionnaire], list[JudgeAnswers]]

READERS: dict[str, Reader] = {
    "surveyjs": read_surveyjs,
    "qualtrics": read_qualtrics,
    "jspsych": read_jspsych,
    "limesurvey": read_limesurvey,
    "csv": read_generic,
}
"""Format name to reader; ``csv`` is the generic long format (judge_id,question,answer)."""


def import_responses(
    paths: Sequence[str | Path],
    format_name: str,
    questionnaire: Questionnaire,
    key: AnswerKey,
    *,
    known_judges: Iterable[str] = (),
) -> ImportResult:
    """Read answer files of one tool and score them into judgements.

    A judge id met in an earlier file (or in ``known_judges``, e.g. judgements already in
    the table) marks the later answers as repeat participation.
    """
    reader = READERS[format_name]
    seen = set(known_judges)
    merged = ImportResult(judgements=[], judges=0, excluded_judges=Counter())
    for path in paths:
        respondents = reader(Path(path), questionnaire)
        result = score(
            questionnaire,
            key,
            respondents,
            source=f"{format_name}:{Path(path).name}",
            known_judges=seen,
        )
        seen.update(r.judge_id for r in respondents)
        merged.judgements += result.judgements
        merged.judges += result.judges
        merged.excluded_judges.update(result.excluded_judges)
    return merged


__all__ = ["READERS", "ImportResult", "JudgeAnswers", "import_responses", "score"]
