"""ELIZA, the baseline bot: its rules, determinism, and use as the bot in commands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import trio

from sdtt.analysis.metrics import condition_label
from sdtt.cli import main
from sdtt.errors import ConfigError
from sdtt.models.base import GenerateConfig, Prompt
from sdtt.models.eliza import converse, reflect, user_bursts
from sdtt.models.model import get_model

EXCHANGE = [
    ("Men are all alike.", "In what way?"),
    ("They are always bugging us about something.", "Can you think of a specific example?"),
    ("Well, my boyfriend made me come here.", "Your boyfriend made you come here?"),
    ("He says I am depressed much of the time.", "I am sorry to hear you are depressed."),
    ("I need some help.", "What would it mean to you if you got some help?"),
    ("My mother takes care of me.", "Tell me more about your family."),
    ("are you a bot?", "Do computers worry you?"),
    # No keyword: a remembered "my ..." sentence comes back.
    ("lol ok", "Earlier you said your boyfriend made you come here."),
]


def test_the_classic_exchange() -> None:
    replies = converse([said for said, _ in EXCHANGE])
    assert replies == [reply for _, reply in EXCHANGE]


def test_reflection_and_rotation() -> None:
    assert reflect("i said my car is yours") == "you said your car is mine"
    # The same keyword again gets the next reassembly, not the same one.
    first, second = converse(["I remember my dog", "I remember my dog"])
    assert first != second and "your dog" in first


def _prompt(lines: list[str]) -> Prompt:
    return Prompt(
        instructions="You are Sam.", history="User: my secret history", dialogue="\n".join(lines)
    )


def _ask(prompt: Prompt, name: str = "eliza/classic", seed: int | None = None) -> str:
    async def run() -> str:
        async with get_model(name) as model:
            output = await model.generate(prompt, GenerateConfig(seed=seed))
            return output.text

    return trio.run(run)


def test_replies_are_a_pure_function_of_the_prompt_and_seed() -> None:
    prompt = _prompt(["User: [2024-05-01 10:00:00] hi", "User: [2024-05-01 10:00:03] how are you?"])
    reply = _ask(prompt)
    assert reply == _ask(prompt)
    assert reply.startswith("Response: [2024-05-01 10:00:")
    assert {_ask(prompt, seed=s) for s in range(6)} != {reply}
    # A burst is one input; the persona history is never read as input.
    assert user_bursts(prompt.dialogue) == ["hi. how are you?"]


def test_asked_for_rounds_it_writes_a_pseudo_dialogue() -> None:
    prompt = Prompt(instructions="x", task="Write 3 rounds of the chat.")
    text = _ask(prompt)
    assert text.count("User: [") == 3 and text.count("Response: [") == 3


def test_unknown_eliza_scripts_are_refused() -> None:
    with pytest.raises(ConfigError, match="eliza/classic"):
        get_model("eliza/modern")


def test_reports_mark_eliza_as_the_baseline() -> None:
    row = {"model": "eliza/classic", "mode": "burst", "turns": 3, "x": 3}
    assert condition_label(row).startswith("eliza/classic (baseline)")
    assert "baseline" not in condition_label({**row, "model": "openai/gpt-4o"})


def test_eliza_is_the_bot_in_a_simulated_chat(tmp_path: Path) -> None:
    code = main(
        [
            "simulate",
            "--model",
            "eliza/classic",
            "--interrogator",
            "mock/chatty",
            "--turns",
            "3",
            "--virtual-clock",
            "--quiet",
            "--out",
            str(tmp_path),
        ]
    )
    assert code == 0
    (path,) = [p for p in tmp_path.glob("*.jsonl") if not p.name.endswith(".events.jsonl")]
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert records[0]["condition"]["model"] == "eliza/classic"
    bot = [r["text"] for r in records[1:] if r.get("side") == "response"]
    assert bot and all(text and "Response:" not in text for text in bot)


def test_models_lists_eliza(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models"]) == 0
    assert "eliza" in capsys.readouterr().out
