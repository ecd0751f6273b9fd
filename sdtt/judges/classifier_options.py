"""The classifier judge's choices, apart from its numeric code so the command line can
offer them without importing numpy and scikit-learn (:mod:`sdtt.judges.classifier`)."""

from __future__ import annotations

from typing import Literal

GroupBy = Literal["conversation", "persona"]
GROUPINGS: tuple[GroupBy, ...] = ("conversation", "persona")
"""What cross-validation folds keep together: a source conversation or a persona."""
FEATURE_SETS = ("char", "style", "char+style", "embeddings")
"""Every feature set the classifier knows."""
DEFAULT_FEATURE_SETS = ("char", "style", "char+style")
"""The feature sets compared when none are named (``embeddings`` needs an extra)."""
