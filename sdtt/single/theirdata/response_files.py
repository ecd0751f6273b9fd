"""Their response files and ground-truth dictionaries, as :class:`SingleResponse` records.

- A **response file** (what their benchmark takes from a model):
  ``{"cue": "association", ...}`` for word association, ``{"0001.jpg": "caption", ...}``
  for captioning; every response comes from one agent, named by the caller.
- A **ground-truth dictionary** (their ``groundtruths_d_*.json``): ``{stimulus:
  [{"response": ..., "groundtruth": "human"|"machine", "machine_groundtruth": MODEL or "",
  ...}, ...]}``; the agent of a machine response is its ``machine_groundtruth``, of a human
  one its ``human_groundtruth`` when given. Other fields (``stimulus_ID``, ``cueWord``)
  are kept in ``meta``.

Word associations go through the same post-processing as sdtt's own
(:mod:`sdtt.single.wordclean`); answers it refuses are kept, excluded with the reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sdtt.errors import InputError
from sdtt.single.response import SingleResponse, Task, Truth, response_id
from sdtt.single.theirdata.jsonfile import key_line, load_json, need_object
from sdtt.single.wordassoc import association_record
from sdtt.single.wordclean import letters_only

TASKS: tuple[Task, ...] = ("wordassoc", "caption")


def _record(
    task: Task,
    stimulus: str,
    text: str,
    truth: Truth,
    agent: str,
    origin: str,
    meta: dict[str, Any],
) -> SingleResponse:
    if task == "wordassoc":
        cue = letters_only(stimulus) or stimulus
        return association_record(
            cue, text, truth=truth, agent=agent, origin=origin, salt=origin, meta=meta
        )
    return SingleResponse(
        task=task,
        id=response_id(task, stimulus, text, agent, origin),
        stimulus=stimulus,
        response=text,
        truth=truth,
        agent=agent,
        origin=origin,
        meta=meta,
    )


def read_response_file(
    path: str | Path, task: Task, *, agent: str, truth: Truth = "machine"
) -> list[SingleResponse]:
    """One agent's responses from a ``{stimulus: response}`` file."""
    data, text = load_json(path)
    found = need_object(data, path, '{"stimulus": "response", ...}')
    name = Path(path).name
    records = []
    for stimulus, response in found.items():
        line = key_line(text, stimulus)
        if not isinstance(response, str) or not response.strip():
            raise InputError(
                "the response must be non-empty text.",
                path=path,
                line=line,
                field=stimulus,
                hint='Each entry is "stimulus": "response".',
            )
        origin = f"{name}:{line}" if line else name
        records.append(_record(task, stimulus, response.strip(), truth, agent, origin, {}))
    return records


def read_groundtruth(path: str | Path, task: Task) -> list[SingleResponse]:
    """Every response of a ground-truth dictionary, with its truth and agent."""
    data, text = load_json(path)
    found = need_object(data, path, "{stimulus: [{response, groundtruth, ...}]}")
    name = Path(path).name
    records = []
    for stimulus, entries in found.items():
        line = key_line(text, stimulus)
        if not isinstance(entries, list):
            raise InputError("expected a list of responses.", path=path, line=line, field=stimulus)
        for index, entry in enumerate(entries):
            where = f"{stimulus}[{index}]"
            if not isinstance(entry, dict):
                raise InputError("expected an object.", path=path, line=line, field=where)
            response = entry.get("response")
            if not isinstance(response, str) or not response.strip():
                raise InputError(
                    "no response text.", path=path, line=line, field=f"{where}.response"
                )
            truth = entry.get("groundtruth")
            if truth not in ("human", "machine"):
                raise InputError(
                    f"groundtruth must be 'human' or 'machine', not {truth!r}.",
                    path=path,
                    line=line,
                    field=f"{where}.groundtruth",
                )
            agent_key = "machine_groundtruth" if truth == "machine" else "human_groundtruth"
            agent = entry.get(agent_key) or ""
            if not isinstance(agent, str):
                raise InputError(
                    "expected text.", path=path, line=line, field=f"{where}.{agent_key}"
                )
            meta = {
                key: value
                for key, value in entry.items()
                if key
                not in ("response", "groundtruth", "machine_groundtruth", "human_groundtruth")
            }
            origin = f"{name}:{line}#{index}" if line else f"{name}#{index}"
            records.append(_record(task, stimulus, response.strip(), truth, agent, origin, meta))
    return records
