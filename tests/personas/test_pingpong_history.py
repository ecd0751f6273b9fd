"""In ping-pong mode every prompt shows ping-pong chats: history and pseudo-dialogue."""

from __future__ import annotations

import itertools
from datetime import timedelta

from sdtt.dialogue.message import Message
from sdtt.engine.interrogator import interrogator_prompts
from sdtt.generate.chain import ChainSpec, TopicTarget, chain_header
from sdtt.personas.prompt import BotPromptBuilder, history_text
from tests.generate.helpers import START, make_persona

BURST_PSEUDO = [
    Message(side="user", text="pseudo question", time=START),
    Message(side="response", text="pseudo first", time=START + timedelta(seconds=5)),
    Message(side="response", text="pseudo second", time=START + timedelta(seconds=9)),
]


def labels(text: str) -> list[str]:
    return [line.split(":", 1)[0] for line in text.splitlines() if line.strip()]


def no_runs(text: str) -> bool:
    found = labels(text)
    return all(a != b for a, b in itertools.pairwise(found))


def test_the_persona_history_is_converted_in_pingpong_mode() -> None:
    persona = make_persona()
    burst = history_text(persona, 8)
    pingpong = history_text(persona, 8, "pingpong")
    assert not no_runs(burst) and "maybe 1 lol" in burst
    assert no_runs(pingpong.replace("\n\n", "\n"))
    assert "maybe 1 lol" not in pingpong
    assert pingpong.count("User:") == burst.count("User:")


def test_the_bot_and_interrogator_prompts_show_pingpong_chats() -> None:
    persona = make_persona()
    bot = BotPromptBuilder.for_persona(persona, mode="pingpong", pseudo=BURST_PSEUDO)
    assert "pseudo first" in bot.history and "pseudo second" not in bot.history
    assert "maybe 1 lol" not in bot.history
    burst = BotPromptBuilder.for_persona(persona, mode="burst", pseudo=BURST_PSEUDO)
    assert "pseudo second" in burst.history
    partner = interrogator_prompts(topic="t", mode="pingpong", persona=persona)
    assert "maybe 1 lol" not in partner.history


def test_a_pingpong_chain_learns_from_a_pingpong_history() -> None:
    persona = make_persona()
    spec = ChainSpec(
        persona="tester",
        model="mock/fake",
        mode="pingpong",
        topics=(TopicTarget(topic="a", turns=2),),
    )
    header = chain_header(spec, persona)
    assert "maybe 1 lol" not in header.history
    assert set(header.burst_sizes["response"]) == {1}
    burst = chain_header(spec.model_copy(update={"mode": "burst"}), persona)
    assert "maybe 1 lol" in burst.history
