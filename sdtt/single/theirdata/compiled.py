"""Their single-item judges' results (word association, image captioning) as compiled by
their plotting notebooks (``wordAssociation/Plot/savedResults/compiled.json``):
``{group: {"Trial_1": {"workerID": ..., "workerData": {demographics}, "trialData":
{"groundtruth": "human"|"machine", "response_speaker": "human"|"machine",
"machine_groundtruth": MODEL or "", "caption": THE RESPONSE SHOWN, "imageID": N,
"hit": ..., "rt": ms, ...}}}}``, a group per cohort (``inlab``, ``mturk``...).

Each trial is one verdict on one response: ``groundtruth`` is who wrote it,
``response_speaker`` what the judge said. Scored as their papers do: p(H|H), p(M|M) and
``(p(H|H) + p(M|M)) / 2``, overall and per machine (``machine_groundtruth``).

Their groups overlap: ``wordAssociation/Plot/savedResults/compiled.json`` holds
``inlab`` (843 trials), its halves ``inlab_gender`` and ``inlab_nogender``, ``mturk``
(1930), ``combined`` (``inlab`` and ``mturk`` again, 2773: the human judges of Fig. 4B)
and ``machine`` (their SVM judges, 2241 trials, no ``workerData``), so a figure reads one
group, never all pooled. Their in-lab trials share one ``workerID`` for every person:
a judge is a run of trials under one ``workerID`` and one ``workerData`` whose ``trial``
numbers rise; a later run under the same ``workerID`` is another judge (``ID#2``...).
Their AI experts' files (``Experiments with AI experts/AI experts databases/*/
compiled_AIexperts*.json``) have the same shape, with ``Human`` and ``Machine`` capitalised.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sdtt.analysis.metrics import Confusion
from sdtt.errors import InputError
from sdtt.single.response import Task
from sdtt.single.tally import add_verdict
from sdtt.single.theirdata.jsonfile import key_line, load_json, need_object

_SPEAKERS = {"human": "human", "machine": "machine", "ai": "machine"}


@dataclass(frozen=True)
class KreimanJudgement:
    """One judge's verdict on one response."""

    group: str
    worker: str
    """The judge: their ``workerID``, with ``#N`` for its N-th run of trials (their
    in-lab judges all share one ``workerID``)."""
    stimulus: str
    response: str
    truth: str
    said: str
    model: str
    """The machine that wrote it (``machine_groundtruth``); empty for a human."""
    rt_ms: float | None = None
    machine_judge: bool = False
    """A machine judge's verdict (their ``machine`` group: no ``workerData``)."""
    where: str = ""
    """The trial's key, ``GROUP.Trial_N``."""


@dataclass
class JudgementScores:
    """Speakers' confusion counts overall (``all``), per group and per machine."""

    overall: Confusion = field(default_factory=Confusion)
    by_group: dict[str, Confusion] = field(default_factory=dict)
    by_model: dict[str, Confusion] = field(default_factory=dict)
    """A machine's own responses only (p(M|M) of that machine)."""


def read_judgements(
    path: str | Path, groups: Iterable[str] | None = None, *, task: Task | None = None
) -> list[KreimanJudgement]:
    """Every trial of their compiled results file, or of the named ``groups`` only (an
    :class:`InputError` names a group the file lacks, and lists those it has).

    ``task`` says what the fields hold: for ``wordassoc`` their ``caption`` is the cue
    word (the stimulus; the association shown is not in the file), for ``caption`` it is
    the caption shown and the stimulus is the image's file name (from ``imageID``)."""
    data, text = load_json(path)
    found_groups = need_object(data, path, '{group: {"Trial_1": {"workerID", "trialData"}}}')
    wanted = list(groups) if groups is not None else list(found_groups)
    missing = [g for g in wanted if g not in found_groups]
    if missing:
        raise InputError(
            f"no group {', '.join(map(repr, missing))}; the file has "
            f"{', '.join(map(repr, found_groups)) or 'none'}.",
            path=path,
            field="--group",
        )
    found = []
    for group in wanted:
        trials = found_groups[group]
        if not isinstance(trials, dict):
            raise InputError(
                "expected an object of trials.", path=path, line=key_line(text, group), field=group
            )
        found += _group_trials(path, group, trials, task)
    return found


def _group_trials(
    path: str | Path, group: str, trials: dict[str, Any], task: Task | None
) -> list[KreimanJudgement]:
    found = []
    runs: dict[str, int] = {}
    last: tuple[str, object, float | None] | None = None
    for name, trial in trials.items():
        where = f"{group}.{name}"
        body = trial.get("trialData") if isinstance(trial, dict) else None
        if not isinstance(body, dict):
            raise InputError("expected a 'trialData' object.", path=path, field=where)
        if body.get("phase", "TEST") != "TEST":
            continue
        values = {}
        for key in ("groundtruth", "response_speaker"):
            value = body.get(key)
            # Their AI experts' files write "Human" and "Machine"; their tasks said "AI".
            said = _SPEAKERS.get(value.strip().lower()) if isinstance(value, str) else None
            if said is None:
                raise InputError(
                    f"expected 'human' or 'machine', not {str(value)[:20]!r}.",
                    path=path,
                    field=f"{where}.trialData.{key}",
                )
            values[key] = said
        worker = trial.get("workerID")
        if not isinstance(worker, str | int) or str(worker) == "":
            raise InputError(
                "expected the judge's 'workerID'.", path=path, field=f"{where}.workerID"
            )
        machine = "workerData" not in trial
        number = body.get("trial")
        order = float(number) if isinstance(number, int | float) else None
        judge = str(worker)
        if not machine:
            # A person's run: one workerID and workerData, trial numbers rising.
            rising = order is None or last is None or last[2] is None or order > last[2]
            if not (last is not None and last[:2] == (judge, trial["workerData"]) and rising):
                runs[judge] = runs.get(judge, 0) + 1
            last = (judge, trial["workerData"], order)
            if runs[judge] > 1:
                judge = f"{judge}#{runs[judge]}"
        rt = body.get("rt")
        shown = str(body.get("caption", ""))
        stimulus = str(body.get("imageID", body.get("hit", "")))
        if task == "wordassoc":
            stimulus, shown = shown, ""
        elif task == "caption":
            stimulus = stimulus.rsplit("/", 1)[-1]
        found.append(
            KreimanJudgement(
                group=group,
                worker=judge,
                stimulus=stimulus,
                response=shown,
                truth=values["groundtruth"],
                said=values["response_speaker"],
                model=str(body.get("machine_groundtruth") or ""),
                rt_ms=float(rt) if isinstance(rt, int | float) else None,
                machine_judge=machine,
                where=where,
            )
        )
    return found


def group_sizes(judgements: Iterable[KreimanJudgement]) -> dict[str, int]:
    """Trials per group, in file order."""
    sizes: dict[str, int] = {}
    for item in judgements:
        sizes[item.group] = sizes.get(item.group, 0) + 1
    return sizes


def score_judgements(judgements: Iterable[KreimanJudgement]) -> JudgementScores:
    """Tally every verdict overall, by group and by machine."""
    scores = JudgementScores()
    for item in judgements:
        tallies = [scores.overall, scores.by_group.setdefault(item.group, Confusion())]
        if item.truth == "machine" and item.model:
            tallies.append(scores.by_model.setdefault(item.model, Confusion()))
        for tally in tallies:
            add_verdict(tally, item.said, item.truth)
    return scores
