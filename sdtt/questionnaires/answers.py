"""Answer files of one survey tool, read by the tool's reader and scored into judgements."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from sdtt.surveys.answer_files import ImportResult, score
from sdtt.surveys.tools import reader
from sdtt.tasks.questionnaire import AnswerKey, Questionnaire


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
    read = reader(format_name)
    seen = set(known_judges)
    merged = ImportResult(judgements=[], judges=0, excluded_judges=Counter())
    for path in paths:
        respondents = read(Path(path), questionnaire)
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
