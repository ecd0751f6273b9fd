"""A chain learns from the persona turns its bot will be shown, in both modes."""

from __future__ import annotations

import itertools

import pytest

from sdtt.dialogue.condition import ChatMode
from sdtt.generate.chain import ChainSettings, ChainSpec, TopicTarget, chain_header
from sdtt.personas.prompt import BotPromptBuilder
from tests.generate.helpers import make_persona


def runs(history: str) -> dict[str, dict[int, int]]:
    """How often each side sends runs of 1, 2, ... messages, counted from prompt lines."""
    found: dict[str, dict[int, int]] = {"user": {}, "response": {}}
    for chat in history.split("\n\n"):
        sides = [line.split(":", 1)[0].lower() for line in chat.splitlines()]
        for side, run in itertools.groupby(sides):
            size = len(list(run))
            found[side][size] = found[side].get(size, 0) + 1
    return found


@pytest.mark.parametrize("mode", ["burst", "pingpong"])
@pytest.mark.parametrize("turns", [0, 3, 6, 100])
def test_the_chain_and_the_bot_prompt_show_the_same_turns(mode: ChatMode, turns: int) -> None:
    # Two chats of four turns: 3 cuts the last, 6 takes it and part of the first.
    persona = make_persona(conversations=2)
    spec = ChainSpec(
        persona="tester",
        model="mock/fake",
        mode=mode,
        topics=(TopicTarget(topic="a", turns=2),),
        settings=ChainSettings(history_turns=turns),
    )
    header = chain_header(spec, persona)
    bot = BotPromptBuilder.for_persona(persona, mode=mode, history_turns=turns)
    assert header.history == bot.history
    assert bot.history.count("User:") == min(turns, 8)
    assert header.burst_sizes == runs(bot.history)
