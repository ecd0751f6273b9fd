"""Their single-item judges' results (word association, image captioning) as compiled by
their plotting notebooks (``wordAssociation/Plot/savedResults/compiled.json``):
``{group: {"Trial_1": {"workerID": ..., "workerData": {demographics}, "trialData":
{"groundtruth": "human"|"machine", "response_speaker": "human"|"machine",
"machine_groundtruth": MODEL or "", "caption": THE RESPONSE SHOWN, "imageID": N,
"hit": ..., "rt": ms, ...}}}}``, a group per cohort (``inlab``, ``mturk``...).

Each trial is one verdict on one response: ``groundtruth`` is who wrote it,
``response_speaker`` what the judge said. Scored as their papers do: p(H|H), p(M|M) and
``(p(H|H) + p(M|M)) / 2``, overall and per machine (``machine_groundtruth``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from sdtt.analysis.metrics import Confusion
from sdtt.errors import InputError
from sdtt.single.tally import add_verdict
from sdtt.single.theirdata.jsonfile import key_line, load_json, need_object


@dataclass(frozen=True)
class KreimanJudgement:
    """One judge's verdict on one response."""

    group: str
    worker: str
    stimulus: str
    response: str
    truth: str
    said: str
    model: str
    """The machine that wrote it (``machine_groundtruth``); empty for a human."""
    rt_ms: float | None = None


@dataclass
class JudgementScores:
    """Speakers' confusion counts overall (``all``), per group and per machine."""

    overall: Confusion = field(default_factory=Confusion)
    by_group: dict[str, Confusion] = field(default_factory=dict)
    by_model: dict[str, Confusion] = field(default_factory=dict)
    """A machine's own responses only (p(M|M) of that machine)."""


def read_judgements(path: str | Path) -> list[KreimanJudgement]:
    """Every trial of their compiled results file."""
    data, text = load_json(path)
    groups = need_object(data, path, '{group: {"Trial_1": {"workerID", "trialData"}}}')
    found = []
    for group, trials in groups.items():
        if not isinstance(trials, dict):
            raise InputError(
                "expected an object of trials.", path=path, line=key_line(text, group), field=group
            )
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
                if value not in ("human", "machine"):
                    raise InputError(
                        f"expected 'human' or 'machine', not {str(value)[:20]!r}.",
                        path=path,
                        field=f"{where}.trialData.{key}",
                    )
                values[key] = value
            rt = body.get("rt")
            found.append(
                KreimanJudgement(
                    group=group,
                    worker=str(trial.get("workerID", "")),
                    stimulus=str(body.get("imageID", body.get("hit", ""))),
                    response=str(body.get("caption", "")),
                    truth=values["groundtruth"],
                    said=values["response_speaker"],
                    model=str(body.get("machine_groundtruth") or ""),
                    rt_ms=float(rt) if isinstance(rt, int | float) else None,
                )
            )
    return found


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
