"""Judgements as one flat pandas table, the input of every metric.

Columns: ``judge_id``, ``judge_type`` (human/llm), ``judge_model``, ``judge_kind``
(human, paired, zero-shot, one-shot), ``pair_id``, ``pair_kind``, ``x`` (live turns
shown), ``n`` (pseudo-dialogue turns N), ``turns`` (total turn index shown, N + the last
live turn shown; NaN when unknown), ``view`` (last, whole, chunk), ``choice``,
``bot_position``, ``correct`` (1.0/0.0, NaN without an answer), ``excluded``,
``exclusion_reason``, ``order`` (paired LLM judges), ``label1``/``label2`` (single
transcript judges: "human"/"ai"), ``witness``/``verdict`` (live single-witness verdicts:
"bot"/"human" and "human"/"ai"), the bot conversation's condition (``model``,
``persona``, ``mode``, ``topic``, ``interrogator``: "human", a model, "script" or none)
and one ``demo.<question>`` column per demographic.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from sdtt.dialogue.condition import record_condition
from sdtt.questionnaires.judgements import Judgement

CONDITION_COLUMNS = ("model", "persona", "mode", "topic", "interrogator")
NUMERIC_COLUMNS = ("x", "n", "turns")
"""Turn counts: sorted as numbers in breakdowns."""
BASE_COLUMNS = (
    "study",
    "judge_id",
    "judge_type",
    "judge_model",
    "judge_kind",
    "pair_id",
    "pair_kind",
    "x",
    "n",
    "turns",
    "view",
    "choice",
    "bot_position",
    "correct",
    "excluded",
    "exclusion_reason",
    "order",
    "label1",
    "label2",
    "witness",
    "verdict",
    "response_time_s",
    *CONDITION_COLUMNS,
)


def _row(judgement: Judgement) -> dict[str, Any]:
    condition = judgement.condition
    bot = record_condition(condition)
    bot_facts = {} if bot is None else bot.model_dump()
    labels = condition.get("labels") or {}
    kind = condition.get("judge_kind") or ("human" if judgement.judge_type == "human" else "llm")
    row: dict[str, Any] = {
        "study": judgement.study,
        "judge_id": judgement.judge_id,
        "judge_type": judgement.judge_type,
        "judge_model": judgement.judge_model,
        "judge_kind": kind,
        "pair_id": judgement.pair_id,
        "pair_kind": judgement.pair_kind,
        "x": judgement.x_turns,
        "n": judgement.pseudo_turns,
        "turns": judgement.total_turns,
        "view": condition.get("view") or "last",
        "choice": judgement.choice,
        "bot_position": judgement.bot_position,
        "correct": None if judgement.correct is None else float(judgement.correct),
        "excluded": judgement.excluded,
        "exclusion_reason": judgement.exclusion_reason,
        "order": condition.get("order"),
        "label1": labels.get("1"),
        "label2": labels.get("2"),
        "witness": judgement.witness,
        "verdict": judgement.verdict,
        "response_time_s": judgement.response_time_s,
    }
    for column in CONDITION_COLUMNS:
        value = condition.get(column, bot_facts.get(column))
        row[column] = None if value is None else str(value)
    for question, answer in judgement.demographics.items():
        row[f"demo.{question}"] = answer
    return row


def judgement_table(judgements: Iterable[Judgement]) -> pd.DataFrame:
    """The flat table of ``judgements`` (see the module docstring for its columns)."""
    frame = pd.DataFrame([_row(j) for j in judgements], columns=None)
    for column in BASE_COLUMNS:
        if column not in frame.columns:
            frame[column] = None
    frame["correct"] = pd.to_numeric(frame["correct"], errors="coerce").astype(float)
    frame["excluded"] = frame["excluded"].fillna(False).astype(bool)
    for column in NUMERIC_COLUMNS:
        frame[column] = pd.to_numeric(frame[column], errors="coerce")
    return frame


def demographic_columns(frame: pd.DataFrame) -> list[str]:
    """The ``demo.<question>`` columns of a table."""
    return [column for column in frame.columns if str(column).startswith("demo.")]


def with_base_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every column of :func:`judgement_table` present: a table built by
    hand (a notebook, a benchmark) may leave out the ones it has no values for."""
    missing = [column for column in BASE_COLUMNS if column not in frame.columns]
    if not missing:
        return frame
    return frame.assign(**{column: None for column in missing})


def usable(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows that count for the pass rate: test pairs, not excluded, with an answer (of
    single-witness verdicts, those on bot witnesses: the pass rate is the share of bots
    judged human)."""
    frame = with_base_columns(frame)
    mask = (frame["pair_kind"] == "test") & ~frame["excluded"] & frame["correct"].notna()
    mask &= frame["witness"].fillna("bot") == "bot"
    return frame.loc[mask]
