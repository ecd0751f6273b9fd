"""Asking again until an answer can be read: the loop the bot and the LLM judges share."""

from __future__ import annotations

from dataclasses import replace

import pytest

from sdtt.errors import ModelOutputError, RateLimitError
from sdtt.models.asking import ask
from sdtt.models.base import GenerateConfig, ModelOutput, Prompt


class Scripted:
    """Answers with the given texts in order; an exception in the script is raised."""

    name = "scripted/x"

    def __init__(self, *answers: str | Exception) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[Prompt, GenerateConfig]] = []

    async def generate(self, prompt: Prompt, config: GenerateConfig) -> ModelOutput:
        self.asked.append((prompt, config))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return ModelOutput(text=answer, model=self.name)


def number(output: ModelOutput) -> int:
    if not output.text.strip().isdigit():
        raise ModelOutputError(f"no number in {output.text!r}")
    return int(output.text)


def prompt(attempt: int) -> Prompt:
    return Prompt(
        instructions="count", task="how many?" + (" (a number, please)" if attempt > 1 else "")
    )


@pytest.mark.trio
async def test_an_unreadable_answer_is_asked_again_with_that_attempts_prompt_and_config() -> None:
    model = Scripted("many", "7")
    asked = await ask(
        model,
        prompt,
        number,
        attempts=3,
        config=lambda attempt: replace(GenerateConfig(), seed=10 + attempt),
    )
    assert asked.answer == 7
    assert asked.raw == ("many", "7")
    assert asked.failure is None and asked.error is None and asked.unreadable is None
    assert [p.task for p, _ in model.asked] == ["how many?", "how many? (a number, please)"]
    assert [c.seed for _, c in model.asked] == [11, 12]


@pytest.mark.trio
async def test_after_the_last_attempt_the_answer_is_none_and_the_last_reason_is_kept() -> None:
    model = Scripted("many", "lots", "unused")
    asked = await ask(
        model,
        Prompt(instructions="count", task="how many?"),
        number,
        attempts=2,
        config=GenerateConfig(),
    )
    assert asked.answer is None
    assert asked.raw == ("many", "lots")
    assert "lots" in str(asked.unreadable)
    assert len(model.answers) == 1


@pytest.mark.trio
async def test_a_provider_failure_ends_asking_and_keeps_what_came_before() -> None:
    model = Scripted("many", RateLimitError("slow down"), "7")
    asked = await ask(model, prompt, number, attempts=3, config=GenerateConfig())
    assert asked.answer is None
    assert asked.raw == ("many",)
    assert isinstance(asked.failure, RateLimitError)
    assert asked.error == "RateLimitError: slow down"
    assert model.answers == ["7"]


@pytest.mark.trio
async def test_other_errors_of_reading_are_not_taken_for_an_unreadable_answer() -> None:
    def broken(output: ModelOutput) -> int:
        raise KeyError("a bug, not an answer")

    with pytest.raises(KeyError):
        await ask(Scripted("7", "7"), prompt, broken, attempts=2, config=GenerateConfig())
