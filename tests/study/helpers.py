"""A small study spec and mock providers that count (and can cut short) their calls."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import trio

from sdtt.engine.simulate import run_on_virtual_clock
from sdtt.models.base import GenerateConfig, ModelAPI, Prompt
from sdtt.models.mock import chatty_script
from sdtt.models.registry import create_api
from sdtt.study.ledger import call_key
from sdtt.study.runner import RunResult, StudyRunner
from sdtt.study.spec import read_spec

SPEC = """\
[study]
name = "small"
title = "A small study"
out = "out"
seed = 3
{study_extra}

[design]
personas = ["chitchat-32b20fa3"]
models = ["mock/chatty"]
turns = [[0, 2], [6, 2]]
topics = ["Can computers fall in love?"]
interrogator = "{interrogator}"

[pseudo]
turns_per_topic = 3

[judges.llm]
model = "mock/chatty"
{extra}
"""


def write_spec(
    folder: Path, *, extra: str = "", study_extra: str = "", interrogator: str = "mock/chatty"
) -> Path:
    """A two-cell study (totals 2 and 8) under ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "study.toml"
    path.write_text(
        SPEC.format(extra=extra, study_extra=study_extra, interrogator=interrogator),
        encoding="utf-8",
    )
    return path


class Killed(BaseException):
    """Stands for the process being killed: nothing in sdtt catches it."""


class CountingMocks:
    """Makes mock/chatty providers that record every call reaching them; with
    ``kill_after``, the call after that many raises :class:`Killed`."""

    def __init__(self, kill_after: int | None = None) -> None:
        self.kill_after = kill_after
        self.calls: list[str] = []
        self.costs_tokens: list[tuple[int, int, int | None]] = []

    def __call__(self, name: str) -> ModelAPI:
        script = chatty_script()

        def reply(prompt: Prompt, config: GenerateConfig) -> object:
            if self.kill_after is not None and len(self.calls) >= self.kill_after:
                raise Killed
            self.calls.append(call_key(name, prompt, config))
            return script(prompt, config)

        return create_api(name, replies=reply)

    def counted(self) -> Counter[str]:
        """How many times each distinct call reached a provider."""
        return Counter(self.calls)


def drive(fn, virtual: bool):  # type: ignore[no-untyped-def]
    """What the command line does: trio, or the virtual clock for chats."""
    return run_on_virtual_clock(fn) if virtual else trio.run(fn)


def run_study(spec: Path, mocks: CountingMocks) -> RunResult:
    """Run the study once with ``mocks``."""
    return StudyRunner(read_spec(spec), drive=drive, api_factory=mocks).run()
