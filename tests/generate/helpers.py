"""Shared pieces of the generator tests: a small persona and deterministic fake models."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from sdtt.dialogue.message import Message, Transcript
from sdtt.errors import ServerError
from sdtt.models.base import GenerateConfig, ModelOutput, Prompt, Usage
from sdtt.models.mock import MockModelAPI, MockReply
from sdtt.models.model import Model
from sdtt.personas.persona import Persona, PersonaInfo

START = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
TOPICS = ("weekend plans", "a new phone", "cooking dinner", "the weather", "old friends")


def make_persona(name: str = "tester", conversations: int = 2) -> Persona:
    """A persona with a few short conversations: bursts of one and two messages."""
    transcripts = []
    for c in range(conversations):
        at = START + timedelta(days=c)
        messages = []
        for index in range(4):
            at += timedelta(minutes=3)
            messages.append(Message(side="user", text=f"so what about {index}?", time=at))
            messages.append(
                Message(side="response", text="hmm idk", time=at + timedelta(seconds=20))
            )
            if index % 2:
                messages.append(
                    Message(
                        side="response",
                        text=f"maybe {index} lol",
                        time=at + timedelta(seconds=31),
                    )
                )
        transcripts.append(Transcript(id=f"{name}-{c}", messages=messages))
    return Persona(
        info=PersonaInfo(name=name, source="test", license="MIT", attribution="tests"),
        conversations=transcripts,
    )


def _digest(text: str) -> int:
    return int(hashlib.sha1(text.encode("utf-8")).hexdigest()[:8], 16)


def chat_lines(rounds: int, tag: str, *, burst: int = 1) -> str:
    """A generated chat of ``rounds`` rounds, without timestamps (the parser adds them)."""
    lines = []
    for index in range(rounds):
        lines.append(f"User: [2000-01-01 00:00:00] {tag} question {index}")
        for part in range(burst):
            lines.append(f"Response: {tag} answer {index}.{part}")
    return "\n".join(lines)


Script = Callable[[Prompt, GenerateConfig], str]


def hashed_script(low: int = 1, high: int = 4, *, burst: int = 1) -> Script:
    """Writes between ``low`` and ``high`` rounds, chosen from a hash of the prompt.

    A pure function of the prompt, so a resumed run gets the same answers as an
    uninterrupted one exactly when it sends the same prompts.
    """

    def script(prompt: Prompt, config: GenerateConfig) -> str:
        key = _digest(prompt.dialogue + prompt.task)
        rounds = low + key % (high - low + 1)
        return chat_lines(rounds, f"t{key % 997}", burst=burst)

    return script


def word_usage(prompt: Prompt, text: str) -> Usage:
    """Usage counted in words: the system part counts as cached, as a warm cache would."""
    system = len(prompt.system_text().split())
    return Usage(
        input_tokens=system + len(prompt.user_text().split()),
        cached_input_tokens=system,
        output_tokens=len(text.split()),
    )


def mock_chat_model(script: Script, name: str = "mock/fake") -> Model:
    """``script`` behind sdtt's own mock provider and ``Model`` wrapper, with usage that
    depends on the prompt only (the mock's own estimate depends on its call history)."""

    def answer(prompt: Prompt, config: GenerateConfig) -> MockReply:
        text = script(prompt, config)
        return MockReply(text=text, usage=word_usage(prompt, text))

    return Model(MockModelAPI(answer, name=name))


class _RecordingModel:
    """A fake model that keeps the prompts and settings it was called with."""

    def __init__(self, name: str) -> None:
        self._name = name
        self.prompts: list[Prompt] = []
        self.configs: list[GenerateConfig] = []

    @property
    def name(self) -> str:
        return self._name

    def _record(self, prompt: Prompt, config: GenerateConfig) -> None:
        self.prompts.append(prompt)
        self.configs.append(config)


class FakeChatModel(_RecordingModel):
    """A chat model answering from a script, with word-count usage; records its prompts."""

    def __init__(
        self,
        script: Script,
        *,
        name: str = "mock/fake",
        fail: Callable[[Prompt], bool] | None = None,
    ) -> None:
        super().__init__(name)
        self.script = script
        self.fail = fail

    async def generate(self, prompt: Prompt, config: GenerateConfig) -> ModelOutput:
        self._record(prompt, config)
        if self.fail is not None and self.fail(prompt):
            raise ServerError("scripted failure (HTTP 500)")
        text = self.script(prompt, config)
        return ModelOutput(text=text, model=self._name, usage=word_usage(prompt, text))


class FakeCompletionModel(_RecordingModel):
    """A completion model: continues ``prompt.continue_with`` with one line of text.

    Its answer is a function of the prompt and the sampling seed, as a seeded model's
    would be; about one in ``empty_every`` answers is empty, as small models' sometimes are.
    """

    def __init__(self, *, name: str = "local/fake", empty_every: int = 0) -> None:
        super().__init__(name)
        self.empty_every = empty_every

    async def generate(self, prompt: Prompt, config: GenerateConfig) -> ModelOutput:
        self._record(prompt, config)
        key = _digest(f"{prompt.completion_text()}|{config.seed}")
        if self.empty_every and key % self.empty_every == 0:
            text = ""
        elif re.search(r"\]$", prompt.continue_with):
            text = f" line {key % 9973}\nUser: [2000-01-01 00:00:00] runaway"
        else:
            text = f"2000-01-01 00:00:00] line {key % 9973}\nResponse: runaway"
        usage = Usage(
            input_tokens=len(prompt.completion_text().split()),
            cached_input_tokens=0,
            output_tokens=len(text.split()),
        )
        return ModelOutput(
            text=text, model=self._name, usage=usage, continued_from=prompt.continue_with
        )
