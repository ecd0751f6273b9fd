"""Readers: each survey tool's answer file into the one judgement table.

Each tool's module reads its files into :class:`JudgeAnswers`;
:data:`sdtt.questionnaires.tools.TOOLS` names the reader of each tool and
:func:`sdtt.questionnaires.answers.import_responses` scores what they read.
"""

from __future__ import annotations

from sdtt.questionnaires.readers.common import ImportResult, JudgeAnswers, score

__all__ = ["ImportResult", "JudgeAnswers", "score"]
