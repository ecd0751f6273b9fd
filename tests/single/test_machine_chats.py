"""Machine-machine chats the papers' way: drawn lengths, punctuation cuts, regenerated
short or repeated replies under a temperature ramp, every setting recorded."""

from __future__ import annotations

import pytest
import trio

from sdtt.errors import InputError, ModelOutputError
from sdtt.models import get_model
from sdtt.models.base import GenerateConfig, Prompt
from sdtt.single.items import cut_items
from sdtt.single.machine_chats import (
    MachineChatSettings,
    clean_reply,
    cut_to_length,
    human_word_counts,
    machine_chat,
)
from tests.single.helpers import chat


@pytest.mark.parametrize(
    ("text", "target", "expected", "cut"),
    [
        ("Short and sweet.", 5, "Short and sweet.", False),
        ("I went out. Then I came back home and slept for hours", 6, "I went out.", True),
        ("Well, maybe; I could go to the park later today", 5, "Well, maybe;", True),
        ("no marks at all in this long reply", 4, "no marks at all", True),
        ("Is it? Yes! It is. And more words follow here", 7, "Is it? Yes! It is.", True),
        ("3.5 percent growth is a lot of growth", 3, "3.5 percent growth", True),
    ],
)
def test_a_long_reply_is_cut_at_the_most_fitting_punctuation(
    text: str, target: int, expected: str, cut: bool
) -> None:
    assert cut_to_length(text, target) == (expected, cut)


def test_replies_lose_labels_and_timestamps_and_stop_at_the_other_speaker() -> None:
    text = "Alice: [2024-01-01 10:00:00] sure thing\nmore of it\nJohn: my turn now"
    assert clean_reply(text, "Alice", "John") == "sure thing more of it"
    assert clean_reply("Response: [10:00] hi there", "Alice", "John") == "hi there"
    assert clean_reply("John: not mine", "Alice", "John") == ""


def test_human_word_counts_come_from_human_speakers_only() -> None:
    hm = chat("x", "HM", 4)  # A human: messages 1 and 3
    counts = human_word_counts([hm])
    assert counts == tuple(len(m.text.split()) for m in hm.messages[0::2])


def _settings(**changes: object) -> MachineChatSettings:
    fields: dict[str, object] = {"word_counts": (4,), "exchanges": 4, "seed": 1}
    fields.update(changes)
    return MachineChatSettings(**fields)  # type: ignore[arg-type]


def test_short_and_repeated_replies_are_asked_again_with_a_rising_temperature() -> None:
    temperatures: list[float] = []
    script = iter(
        [
            "",  # too short: asked again
            "Hello there, how are you?",
            "Fine thanks. And you, friend?",
            "Hello there, how are you?",  # the speaker's own last message: asked again
            "",  # too short again
            "Busy day at work today.",
            "Sounds tiring, honestly it does.",
        ]
    )

    def reply(prompt: Prompt, config: GenerateConfig) -> str:
        temperatures.append(config.temperature)
        return next(script)

    async def main() -> object:
        async with get_model("mock/scripted", replies=reply) as model:
            return await machine_chat(
                model, model, _settings(min_words=2, temperature=0.7), chat_id="c1", topic="music"
            )

    transcript = trio.run(main)
    texts = [m.text for m in transcript.messages]  # type: ignore[attr-defined]
    # Each cut to its 4-word target: at a sentence end, else a pause, else the word.
    assert texts == ["Hello there,", "Fine thanks.", "Busy day at work", "Sounds tiring,"]
    assert temperatures == [0.7, 0.9, 0.7, 0.7, 0.9, 1.1, 0.7]
    generation = transcript.meta["generation"]  # type: ignore[attr-defined]
    replies = generation["replies"]
    assert [r["attempts"] for r in replies] == [2, 1, 3, 1]
    assert replies[2]["rejected"] == ["repeats the previous message", "too short"]
    assert replies[2]["temperature"] == pytest.approx(1.1)
    assert [r["cut"] for r in replies] == [True, True, True, True]
    settings = generation["settings"]
    assert settings["temperature"] == 0.7 and settings["temperature_step"] == 0.2
    assert settings["word_counts"] == {"n": 1, "min": 4, "max": 4, "mean": 4.0}
    assert transcript.meta["speakers"] == {"A": "machine", "B": "machine"}  # type: ignore[attr-defined]
    items, _ = cut_items([transcript], (2, 4))  # type: ignore[list-item]
    assert {item.klass for item in items} == {"MM"}


def test_the_ramp_stops_at_its_maximum_and_a_hopeless_chat_is_an_error() -> None:
    temperatures: list[float] = []

    def reply(prompt: Prompt, config: GenerateConfig) -> str:
        temperatures.append(config.temperature)
        return " "

    async def main() -> object:
        async with get_model("mock/scripted", replies=reply) as model:
            return await machine_chat(
                model,
                model,
                _settings(attempts=4, restarts=1, temperature=1.0, temperature_max=1.3),
                chat_id="c2",
                topic="food",
            )

    with pytest.raises(ModelOutputError, match="unusable 4 times in each of 2 tries"):
        trio.run(main)
    assert temperatures == [1.0, 1.2, 1.3, 1.3] * 2


def test_each_model_plays_its_own_side_and_the_prompt_is_the_papers() -> None:
    prompts: dict[str, list[Prompt]] = {"a": [], "b": []}

    def speaker(name: str):  # type: ignore[no-untyped-def]
        def reply(prompt: Prompt, config: GenerateConfig) -> str:
            prompts[name].append(prompt)
            return f"{name} says something new number {len(prompts[name])}."

        return reply

    async def main() -> object:
        async with (
            get_model("mock/a", replies=speaker("a")) as first,
            get_model("mock/b", replies=speaker("b")) as second,
        ):
            return await machine_chat(
                first, second, _settings(word_counts=(10,)), chat_id="c3", topic="movies"
            )

    transcript = trio.run(main)
    sides = [(m.side, m.text.split()[0]) for m in transcript.messages]  # type: ignore[attr-defined]
    assert sides == [("user", "a"), ("response", "b"), ("user", "a"), ("response", "b")]
    first_prompt = prompts["a"][0]
    assert "starts to talk about movies" in first_prompt.instructions
    assert "often disagree" in first_prompt.instructions
    assert first_prompt.dialogue.endswith(": Hi!")
    assert transcript.condition is not None  # type: ignore[attr-defined]
    assert transcript.meta["generation"]["models"] == {"A": "mock/a", "B": "mock/b"}  # type: ignore[attr-defined]


def test_settings_without_human_lengths_are_refused() -> None:
    with pytest.raises(InputError, match="human word counts"):
        MachineChatSettings(word_counts=())
