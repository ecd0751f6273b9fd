"""Counting verdicts into the confusion counts of :mod:`sdtt.analysis.metrics`."""

from __future__ import annotations

from sdtt.analysis.metrics import Confusion


def add_verdict(confusion: Confusion, said: str, truth: str) -> None:
    """Count one verdict: ``said`` and ``truth`` are ``human`` or ``machine``."""
    name = {"human": "h", "machine": "m"}
    attribute = name[said] + name[truth]
    setattr(confusion, attribute, getattr(confusion, attribute) + 1)
