"""The cost ledger of a study: every model call it made, priced, and the budget.

Every call of a study goes through :class:`LedgerAPI`, which wraps the provider under the
``Model`` (so retries, limits and timeouts are the usual ones) and appends one record per
answered call to ``ledger.jsonl``: stage, condition, model, tokens, estimated cost, the
prompt as rendered and the answer. The answer is kept so that a run killed part way never
pays for a call twice: run again, the same steps ask the same prompts, and each prompt
asked before is answered from the ledger (in the order it was first answered) instead of
the provider.

A judge that uses its provider's batch API (``batch = true``) is wrapped the same way,
above :class:`~sdtt.judges.batched.BatchedModel` instead of under a ``Model``: each answer
is recorded as its job ends, priced at :data:`~sdtt.models.prices.BATCH_DISCOUNT` of the
direct price, and a rerun answers it from here before any job is sent.

The ledger holds nothing measured on a clock, so that two runs of one study write the
same bytes: once a step ends its records are put in a stable order (:meth:`Ledger.settle`:
by stage, condition and call; concurrent calls are answered in any order). When each call
was made and how long it took go to the run log beside it (``run-log.jsonl``), which a
bundle keeps apart as not reproducible.

Before a call that is not in the ledger, its cost is bounded from above (one token per
character of the prompt, uncached, plus the whole ``max_tokens`` of output): when what
was spent plus that bound would pass the spec's budget, :class:`BudgetExceeded` stops
the run before the call is made. Calls still waiting for their answer count against
the budget too, at their bound: a batch job sends a whole round's calls at once.
"""

from __future__ import annotations

import json
import os
import time
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import trio

from sdtt.errors import SdttError
from sdtt.files import sort_jsonl
from sdtt.generate.pricing import price_of
from sdtt.models.base import (
    GenerateConfig,
    Generator,
    ModelAPI,
    ModelOutput,
    Prompt,
    Usage,
)
from sdtt.models.prices import Price
from sdtt.models.replay import Recording, call_key, output_of, usage_of

LEDGER_FILE = "ledger.jsonl"
LEDGER_VERSION = 1
RUN_LOG_FILE = "run-log.jsonl"
"""Beside the ledger: when each call was made, how long it took and where its answer came
from (the provider, the ledger, or an error): wall-clock facts no rerun repeats."""
_STAGE_ORDER = ("topics", "chains", "chats", "align", "judges")


class BudgetExceeded(SdttError):
    """The next call could take the study past its budget; nothing was called."""


def upper_bound_usage(prompt: Prompt, config: GenerateConfig) -> Usage:
    """Tokens a call can use at most: no tokenizer makes more than one token of a
    character of chat text, and the answer stops at ``max_tokens``."""
    chars = len(prompt.system_text()) + len(prompt.user_text())
    return Usage(input_tokens=chars, cached_input_tokens=0, output_tokens=config.max_tokens)


@dataclass
class Tally:
    """Calls, tokens and dollars of one part of a study."""

    calls: int = 0
    replayed: int = 0
    """Calls answered from the ledger instead of the provider (a resumed run)."""
    usage: Usage = field(default_factory=Usage)
    cost: float = 0.0
    unpriced: int = 0
    """Calls of a model with no price: their cost is not in ``cost``."""

    def add(self, usage: Usage, cost: float | None) -> None:
        """Count one paid call."""
        self.calls += 1
        self.usage = self.usage + usage
        if cost is None:
            self.unpriced += 1
        else:
            self.cost += cost


class Ledger:
    """The calls of one study, read from and appended to ``ledger.jsonl``."""

    def __init__(
        self,
        path: Path,
        *,
        prices: Mapping[str, Price] | None = None,
        budget: float | None = None,
    ) -> None:
        self.path = path
        self.prices = dict(prices or {})
        self.budget = budget
        self.records: list[dict[str, Any]] = read_ledger(path)
        self._recording = Recording(self.records)
        # Kept as calls are added: the budget is checked before every call.
        self._spent = sum(record["cost"] or 0.0 for record in self.records)
        self._waiting = 0.0
        """The cost bounds of the calls made but not answered yet."""
        self.replayed: dict[tuple[str, str], int] = defaultdict(int)
        """Calls answered from the ledger in this run, by (stage, condition)."""
        self.stopped: BudgetExceeded | None = None
        """Set when the budget stopped a call (also when a caller swallowed the error)."""
        self.run_log = path.with_name(RUN_LOG_FILE)
        self._unsettled = False

    def price(self, model: str) -> Price | None:
        """The spec's price of ``model``, else the price tables' (free models: zero)."""
        return self.prices.get(model) or price_of(model)

    @property
    def spent(self) -> float:
        """Dollars of every priced call so far, earlier runs included."""
        return self._spent

    def replay(self, key: str) -> Mapping[str, Any] | None:
        """The next recorded answer to the call ``key``, if it was answered before."""
        return self._recording.take(key)

    def check_budget(
        self,
        model: str,
        prompt: Prompt,
        config: GenerateConfig,
        where: str,
        *,
        batch: bool = False,
    ) -> float:
        """Raise :class:`BudgetExceeded` when the call could pass the budget; else count
        its cost bound as waiting and return it (give it to :meth:`answered`)."""
        if self.budget is None:
            return 0.0
        price = self.price(model)
        if price is None:
            error = BudgetExceeded(
                f"{model} has no price, so a budget cannot bound its calls ({where}). Give "
                f'its price in the spec: [prices."{model}"] input = ..., output = ...'
            )
            self.stopped = error
            raise error
        bound = price.cost(upper_bound_usage(prompt, config), batch=batch)
        if self.spent + self._waiting + bound > self.budget:
            waiting = f", ${self._waiting:.4f} more on calls under way" if self._waiting else ""
            error = BudgetExceeded(
                f"the budget of ${self.budget:.2f} is nearly spent (${self.spent:.4f}{waiting}); "
                f"the next call ({where}, {model}) could cost up to ${bound:.4f}, so it was "
                "not made."
            )
            self.stopped = error
            raise error
        self._waiting += bound
        return bound

    def answered(self, bound: float) -> None:
        """A call counted by :meth:`check_budget` ended (its record holds its cost)."""
        self._waiting = max(0.0, self._waiting - bound)

    def append(self, record: dict[str, Any]) -> None:
        """Write one call's record (it reaches the OS before this returns)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"
        with self.path.open("a", encoding="utf-8") as file:
            file.write(line)
            file.flush()
            os.fsync(file.fileno())
        self.records.append(record)
        self._unsettled = True
        self._spent += record["cost"] or 0.0
        self._recording.add_given(record)

    def settle(self) -> None:
        """Put the file's records in a stable order: by stage, condition and call key
        (the answers to one call keep the order they were given in, which a resumed run
        replays them in). The runner settles the ledger after each step."""
        if not self._unsettled:
            return

        def order(record: Mapping[str, Any]) -> tuple[int, str, str]:
            stage = record["stage"]
            rank = _STAGE_ORDER.index(stage) if stage in _STAGE_ORDER else len(_STAGE_ORDER)
            return (rank, record["condition"], record["key"])

        sort_jsonl(self.path, order)
        self._unsettled = False

    def log_call(self, record: Mapping[str, Any]) -> None:
        """Append one line to the run log (timings: not part of the study's results)."""
        self.run_log.parent.mkdir(parents=True, exist_ok=True)
        with self.run_log.open("a", encoding="utf-8") as file:
            file.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")

    def tallies(self, by: str) -> dict[str, Tally]:
        """Calls, tokens and cost per ``stage``, ``condition``, ``cell`` or ``model``
        (records written before cells were recorded count under cell "")."""
        found: dict[str, Tally] = defaultdict(Tally)
        for record in self.records:
            found[record.get(by, "")].add(usage_of(record), record["cost"])
        return dict(found)

    def total(self) -> Tally:
        """Everything so far."""
        tally = Tally()
        for record in self.records:
            tally.add(usage_of(record), record["cost"])
        tally.replayed = sum(self.replayed.values())
        return tally

    def api(
        self,
        inner: Generator,
        *,
        stage: str,
        condition: str,
        cell: str = "",
        batch: bool = False,
    ) -> LedgerAPI:
        """``inner`` with its calls written to this ledger under ``stage``, ``condition``
        (its name for people) and ``cell`` (the design's chat, when one); ``batch``: its
        calls go through a batch API (priced at its discount)."""
        return LedgerAPI(inner, self, stage=stage, condition=condition, cell=cell, batch=batch)


def read_ledger(path: Path) -> list[dict[str, Any]]:
    """The records of a ledger file (none when it is missing); a line cut short by a kill
    is left out (its call is then made again: it was never recorded as answered)."""
    if not path.exists():
        return []
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and record.get("version") == LEDGER_VERSION:
            records.append(record)
    return records


@dataclass(eq=False)
class LedgerAPI:
    """A provider whose calls are looked up in, checked against and written to a ledger."""

    inner: Generator
    ledger: Ledger
    stage: str = field(kw_only=True)
    condition: str = field(kw_only=True)
    cell: str = field(default="", kw_only=True)
    batch: bool = field(default=False, kw_only=True)
    name: str = field(init=False)
    """The provider's ``provider/model`` name."""
    calls: int = field(default=0, init=False)
    """Calls that reached the provider through this wrapper."""

    def __post_init__(self) -> None:
        self.name = self.inner.name

    async def generate(self, prompt: Prompt, config: GenerateConfig) -> ModelOutput:
        """Answer from the ledger when this call was answered before, else call (within
        the budget) and record the answer."""
        key = call_key(self.name, prompt, config)
        at = datetime.now(UTC).isoformat(timespec="milliseconds")
        began = time.monotonic()

        def log(answer: str) -> None:
            seconds = round(time.monotonic() - began, 6)
            self.ledger.log_call(
                {
                    "at": at,
                    "seconds": seconds,
                    "answer": answer,
                    "stage": self.stage,
                    "condition": self.condition,
                    "model": self.name,
                    "key": key,
                }
            )

        recorded = self.ledger.replay(key)
        if recorded is not None:
            # A checkpoint, as a provider's call has: tasks take turns as they did.
            await trio.lowlevel.checkpoint()
            self.ledger.replayed[(self.stage, self.condition)] += 1
            log("ledger")
            return output_of(recorded)
        where = f"{self.stage} {self.condition}".strip()
        bound = self.ledger.check_budget(self.name, prompt, config, where, batch=self.batch)
        self.calls += 1
        try:
            output = await self.inner.generate(prompt, config)
        except Exception as error:
            log(f"error: {type(error).__name__}")
            raise
        finally:
            self.ledger.answered(bound)
        log("provider")
        price = self.ledger.price(self.name)
        self.ledger.append(
            {
                "version": LEDGER_VERSION,
                "key": key,
                "stage": self.stage,
                "condition": self.condition,
                "cell": self.cell,
                "model": self.name,
                "reported_model": output.model,
                "input_tokens": output.usage.input_tokens,
                "cached_input_tokens": output.usage.cached_input_tokens,
                "output_tokens": output.usage.output_tokens,
                "cost": None if price is None else price.cost(output.usage, batch=self.batch),
                "batch": self.batch,
                "prompt": {"system": prompt.system_text(), "user": prompt.user_text()},
                "text": output.text,
                "logprobs": None
                if output.logprobs is None
                else [asdict(token) for token in output.logprobs],
            }
        )
        return output

    async def aclose(self) -> None:
        """Close the provider (a batch judge's is closed by its own ``Model``)."""
        if isinstance(self.inner, ModelAPI):
            await self.inner.aclose()
