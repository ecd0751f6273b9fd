"""The LLM judge's choices and defaults, apart from its code so the command line can
offer them without importing trio and the model layer (:mod:`sdtt.judges.llm`)."""

from __future__ import annotations

from typing import Literal

JudgeKind = Literal["paired", "zero-shot", "one-shot"]
JUDGE_KINDS: tuple[JudgeKind, ...] = ("paired", "zero-shot", "one-shot")
DEFAULT_ATTEMPTS = 3
DEFAULT_CONCURRENCY = 4
"""Pairs an LLM judge is asked about at once."""
OrderPolicy = Literal["both", "random"]
ORDER_POLICIES: tuple[OrderPolicy, ...] = ("both", "random")
"""How a paired judge sees a pair: in both orders, or in one chosen at random."""
