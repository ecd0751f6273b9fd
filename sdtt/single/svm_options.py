"""The SVM judges' choices and defaults, apart from :mod:`sdtt.single.svm` so that the
command line can offer them without importing numpy or scikit-learn."""

from __future__ import annotations

EMBEDDINGS = ("char", "minilm")
"""``char``: hashed character n-grams (offline, no extra); ``minilm``: all-MiniLM-L6-v2
(the ``embeddings`` extra)."""
DEFAULT_EMBEDDING = "char"
DEFAULT_FOLDS = 10
"""The papers' 10-fold cross-validation."""
