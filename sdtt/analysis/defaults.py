"""Scoring defaults and choices, kept apart from the numeric code so the command line can
show them without importing pandas and scipy."""

from __future__ import annotations

DEFAULT_MARGIN = 0.1
"""TOST margin: "indistinguishable" means the proportion correct is within 0.5 +- 0.1."""

DEFAULT_BOOTSTRAP = 1000
"""Cluster-bootstrap replicates of an interval."""

BREAKDOWNS = (
    "model",
    "turns",
    "n",
    "x",
    "view",
    "mode",
    "topic",
    "persona",
    "judge_type",
    "judge_kind",
    "judge_model",
)
"""Columns ``--by`` accepts besides ``demographics`` and ``demo.<question>``."""
