"""The ``replay`` provider: answers recorded by an earlier run, offline and free.

``replay/PROVIDER/MODEL`` answers each call with the answer ``PROVIDER/MODEL`` gave to the
same call before, read from a :class:`Recording`: the records of a study's cost ledger
(``ledger.jsonl``, one per answered call: the call's key, the answer's text, tokens,
log-probabilities and the model version the provider reported). It is what ``sdtt study
verify --rerun`` runs a bundle's study again with: no network, no cost, the same answers
in the order they were first given. Its models keep the recorded model's name, so prompts,
prices and timing are those of the model that answered.

A call is the same call when its key is (:func:`call_key`: the model, the whole prompt
and its settings). A call the recording holds no (further) answer to raises
:class:`~sdtt.errors.BadRequestError` and is counted in :attr:`Recording.missed`.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import asdict
from typing import Any

import trio

from sdtt.errors import BadRequestError
from sdtt.models.base import GenerateConfig, ModelOutput, Prompt, TokenLogprobs, Usage

PROVIDER = "replay"


def call_key(model: str, prompt: Prompt, config: GenerateConfig) -> str:
    """What makes two calls the same call: the model, the whole prompt and its settings
    (the timeout left out: it changes how long one waits, not the answer)."""
    fields = {
        "model": model,
        "prompt": asdict(prompt),
        "config": {k: v for k, v in asdict(config).items() if k != "timeout"},
    }
    text = json.dumps(fields, sort_keys=True, ensure_ascii=False, default=list)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def usage_of(record: Mapping[str, Any]) -> Usage:
    """The tokens of a recorded answer."""
    return Usage(
        input_tokens=record["input_tokens"],
        cached_input_tokens=record["cached_input_tokens"],
        output_tokens=record["output_tokens"],
    )


def output_of(record: Mapping[str, Any]) -> ModelOutput:
    """The answer a record holds, as the provider gave it."""
    logprobs = record.get("logprobs")
    return ModelOutput(
        text=record["text"],
        model=record.get("reported_model") or record["model"],
        usage=usage_of(record),
        logprobs=None
        if logprobs is None
        else tuple(
            TokenLogprobs(
                token=t["token"],
                logprob=t["logprob"],
                top=tuple((str(a), float(b)) for a, b in t.get("top", ())),
            )
            for t in logprobs
        ),
    )


class Recording:
    """Recorded answers by call key, each given once, in the order it was recorded; one
    recording is shared by every replayed model of a run."""

    def __init__(self, records: Iterable[Mapping[str, Any]]) -> None:
        self._answers: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
        self.total = 0
        for record in records:
            self._answers[record["key"]].append(record)
            self.total += 1
        self._used: dict[str, int] = defaultdict(int)
        self.missed: list[str] = []
        """Models of the calls asked that the recording had no answer to."""

    def take(self, key: str) -> Mapping[str, Any] | None:
        """The next unused answer to the call ``key``, if any."""
        answers = self._answers.get(key, [])
        index = self._used[key]
        if index >= len(answers):
            return None
        self._used[key] += 1
        return answers[index]

    def add_given(self, record: Mapping[str, Any]) -> None:
        """Note an answer given now, after the recording was read: it counts as taken
        (a resumed run's ledger records each call as it is answered)."""
        self._answers[record["key"]].append(record)
        self._used[record["key"]] += 1
        self.total += 1

    @property
    def unused(self) -> int:
        """Recorded answers no call asked for."""
        return self.total - sum(self._used.values())


class ReplayAPI:
    """A model answering from a :class:`Recording` under the recorded model's name."""

    def __init__(self, model: str, recording: Recording) -> None:
        self.name = model
        self.recording = recording

    async def generate(self, prompt: Prompt, config: GenerateConfig) -> ModelOutput:
        """The recorded answer to this call; :class:`BadRequestError` when there is none."""
        await trio.lowlevel.checkpoint()
        record = self.recording.take(call_key(self.name, prompt, config))
        if record is None:
            self.recording.missed.append(self.name)
            raise BadRequestError(
                f"{PROVIDER}/{self.name}: no recorded answer to this call: the run asked "
                "something the recorded run did not."
            )
        return output_of(record)

    async def aclose(self) -> None:
        """Nothing to release."""


def create(model: str, *, recording: Recording | None = None) -> ReplayAPI:
    """``replay/PROVIDER/MODEL`` answering from ``recording`` (an empty one: every call
    is missing)."""
    return ReplayAPI(model, recording if recording is not None else Recording([]))


def availability() -> tuple[bool, str]:
    """Always usable: it calls nothing."""
    return True, "offline; answers a study's recorded calls again (sdtt study verify --rerun)"
