"""Reveal-mode answers (SurveyJS, jsPsych) into belief traces.

The tools' ordinary readers collect each judge's sliders (``<pair id>belief<t>``); the
last belief of each pair is then scored by the ordinary scorer as if it were the A/B
answer, so catch pairs, topic checks, repeat participants and preview responses exclude
a judge's traces exactly as they would exclude their judgements.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path

from sdtt.beliefs.traces import BeliefPoint, BeliefSource, BeliefTrace, verdict
from sdtt.errors import InputError
from sdtt.surveys.answer_files import JudgeAnswers, score
from sdtt.surveys.tools import reader, reveal_tools
from sdtt.tasks.questionnaire import AnswerKey, Questionnaire
from sdtt.tasks.reveal_turns import belief_name, new_text, reveal_turns, step_name

NO_ANSWER = "no answer"


def _belief(raw: str, where: str, name: str) -> float | None:
    text = raw.strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise InputError(
            f"belief {name} is {text!r}, not a number from 0 to 100.", path=where
        ) from None
    if not math.isfinite(value) or not 0 <= value <= 100:
        raise InputError(f"belief {name} is {text!r}, outside 0 to 100.", path=where)
    return value


def traces_from_answers(
    questionnaire: Questionnaire,
    key: AnswerKey,
    respondents: Sequence[JudgeAnswers],
    *,
    source: str,
    known_judges: Iterable[str] = (),
    belief_source: BeliefSource = "slider",
) -> list[BeliefTrace]:
    """One trace per respondent and pair they were shown."""
    beliefs: dict[tuple[str, str], list[float | None]] = {}
    verdicts: list[JudgeAnswers] = []
    for respondent in respondents:
        answers = dict(respondent.answers)
        for item in questionnaire.items:
            turns = reveal_turns(item)
            given = [
                _belief(answers.get(belief_name(item.id, t), ""), respondent.where, item.id)
                for t in range(1, turns + 1)
            ]
            beliefs[respondent.judge_id, item.id] = given
            final = next((b for b in reversed(given) if b is not None), None)
            side = verdict(final)
            # Target = chat 1 human -> chat 2 is the AI (option B), as in to_judgement.
            answers[item.id] = "" if side is None else ("B" if side else "A")
        verdicts.append(
            JudgeAnswers(
                judge_id=respondent.judge_id,
                answers=answers,
                seconds=respondent.seconds,
                flags=respondent.flags,
                where=respondent.where,
            )
        )
    scored = score(questionnaire, key, verdicts, source=source, known_judges=known_judges)
    seconds = {r.judge_id: r.seconds for r in respondents}
    by_id = {item.id: item for item in questionnaire.items}
    traces = []
    for judgement in scored.judgements:
        shown = judgement.shown.design_view or judgement.pair_id
        item = by_id[shown]
        truth = key.items[shown]
        times = seconds.get(judgement.judge_id, {})
        points = []
        elapsed: float | None = 0.0
        for turn, belief in enumerate(beliefs[judgement.judge_id, item.id], start=1):
            spent = times.get(belief_name(item.id, turn), times.get(step_name(item.id, turn)))
            elapsed = None if elapsed is None or spent is None else elapsed + spent
            points.append(
                BeliefPoint(
                    turn=turn,
                    time_s=elapsed,
                    belief=belief,
                    source=belief_source,
                    text=new_text(item, turn),
                )
            )
        reasons = [part for part in (judgement.exclusion_reason or "").split("; ") if part]
        reasons = [part for part in reasons if part != NO_ANSWER]
        traces.append(
            BeliefTrace(
                study=key.study,
                judge_id=judgement.judge_id,
                judge_type="human",
                item_id=judgement.pair_id,
                pair_kind=judgement.pair_kind,
                target_human=truth.bot_position == 2,
                bot_position=truth.bot_position,
                points=points,
                excluded=bool(reasons),
                exclusion_reason="; ".join(reasons) or None,
                source=source,
                shown=judgement.shown.model_copy(update={"judge_kind": "reveal"}),
            )
        )
    return traces


def import_reveal(
    paths: Sequence[str | Path],
    format_name: str,
    questionnaire: Questionnaire,
    key: AnswerKey,
    *,
    known_judges: Iterable[str] = (),
) -> list[BeliefTrace]:
    """Read reveal-mode answer files of one tool into belief traces."""
    if format_name not in reveal_tools():
        raise InputError(
            f"reveal mode is not supported by this tool ({format_name}).",
            hint="Reveal-mode answers come from " + " or ".join(reveal_tools()) + ".",
        )
    read = reader(format_name)
    seen = set(known_judges)
    traces: list[BeliefTrace] = []
    for path in paths:
        respondents = read(Path(path), questionnaire)
        traces += traces_from_answers(
            questionnaire,
            key,
            respondents,
            source=f"{format_name}:{Path(path).name}",
            known_judges=seen,
        )
        seen.update(r.judge_id for r in respondents)
    return traces
