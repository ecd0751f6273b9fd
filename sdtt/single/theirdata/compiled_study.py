"""Their compiled single-item results as an sdtt single-item study, so ``sdtt single
score`` scores their judges as it scores sdtt's own.

Every distinct response judged (stimulus, response shown, who wrote it, which machine)
becomes one key entry of class ``H`` or ``M`` (no cut, no topic check: their files keep
none); every trial becomes one :class:`~sdtt.tasks.single_task.SingleAnswer` of
its judge. People are human judges; their machine judges (the ``machine`` group: an SVM
per embedding, no ``workerData``) are scored apart, as ``llm`` judges named by their
``workerID`` with kind ``svm``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from sdtt.single.build import KeyEntry, SingleKey
from sdtt.single.response import Task
from sdtt.single.response_items import JUDGED
from sdtt.single.theirdata.compiled import KreimanJudgement
from sdtt.tasks.single_task import SingleAnswer, Verdict

MACHINE_KIND = "svm"
"""Their machine judges: linear SVMs over one language model's embeddings."""


def _item_id(task: str, item: KreimanJudgement) -> str:
    text = "\x1f".join((task, item.stimulus, item.response, item.truth, item.model))
    return "s" + hashlib.sha256(text.encode()).hexdigest()[:10]


def as_single_study(
    judgements: Sequence[KreimanJudgement], task: Task, *, source: str
) -> tuple[SingleKey, list[SingleAnswer]]:
    """The key (one entry per distinct response judged) and one answer per trial;
    ``source`` (the file's name) goes into each answer's ``where``."""
    part = JUDGED[task]
    entries: dict[str, KeyEntry] = {}
    answers = []
    for item in judgements:
        item_id = _item_id(task, item)
        truth: Verdict = "human" if item.truth == "human" else "machine"
        said: Verdict = "human" if item.said == "human" else "machine"
        if item_id not in entries:
            entries[item_id] = KeyEntry(
                id=item_id,
                item=f"{task}:{item.stimulus}:{item_id}",
                source=item.stimulus,
                cut=None,
                klass=truth[0].upper(),
                truth={part: truth},
                meta={k: v for k, v in (("model", item.model), ("response", item.response)) if v},
            )
        answers.append(
            SingleAnswer(
                task=f"kreiman-{task}",
                judge_id=f"{item.group}:{item.worker}",
                judge_type="llm" if item.machine_judge else "human",
                judge_model=item.worker if item.machine_judge else None,
                judge_kind=MACHINE_KIND if item.machine_judge else None,
                item=item_id,
                verdicts={part: said},
                seconds=item.rt_ms / 1000 if item.rt_ms is not None else None,
                where=f"{source} {item.where}",
            )
        )
    key = SingleKey(
        task=f"kreiman-{task}",
        items=list(entries.values()),
        settings={"imported_from": source, "groups": sorted({j.group for j in judgements})},
    )
    return key, answers
