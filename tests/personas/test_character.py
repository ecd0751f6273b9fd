"""Replies that break character are asked again, then never sent (issue 49): through the
launcher and LiteLLM the simulated interrogator wrote its own instructions and said it
was an AI, which makes every judgement of that chat worthless."""

from __future__ import annotations

import random

import pytest

from sdtt.engine.interrogator import interrogator_instructions, interrogator_prompts
from sdtt.errors import OutOfCharacterError
from sdtt.personas.bot import PersonaBot
from sdtt.personas.character import out_of_character
from sdtt.personas.prompt import BotPromptBuilder, bot_instructions
from tests.dialogue.strategies import START
from tests.personas.test_bot import ScriptedModel, persona

INTERROGATOR = interrogator_instructions("weekend plans", "burst")
BOT = bot_instructions("burst")


@pytest.mark.parametrize(
    ("text", "instructions"),
    [
        # Seen through llama-cpp-python's server (the launcher):
        ("- You are a person texting with someone you have not met before", INTERROGATOR),
        ("You are not an AI, not an assistant and not a language model.", BOT),
        # Seen through LiteLLM:
        ("You are not a friend, you're an AI chat bot.", INTERROGATOR),
        ("As an AI language model I don't have weekends", BOT),
        ("haha i'm just an ai tbh", BOT),
        ("I am a large language model trained to help", INTERROGATOR),
        # Seen through the launcher: the format line copied, its stand-in sent.
        ("message.", INTERROGATOR),
        ("Message", BOT),
        ('message (in response to the preceding conversation): "I am here."', INTERROGATOR),
        ("message: hi there", BOT),
    ],
)
def test_echoes_of_the_instructions_and_ai_self_talk_are_caught(
    text: str, instructions: str
) -> None:
    assert out_of_character(text, instructions) is not None


@pytest.mark.parametrize(
    "text",
    [
        "lol are you a bot?",
        "you're a bot lol",
        "not much, you?",
        "i was gonna say the same thing honestly",
        "my sister is an ai researcher",
        "you are not going to believe what happened",
        "ok random question, if money were no object how would you spend your time",
        "message me later",
        "did you get my message?",
        "messages from my mom lol",
        "message sent!",
    ],
)
def test_ordinary_chat_is_not(text: str) -> None:
    assert out_of_character(text, INTERROGATOR) is None
    assert out_of_character(text, BOT) is None


def test_the_instructions_really_hold_the_echoed_lines() -> None:
    # The echo cases above are only meaningful if the echoes are the instructions' text.
    assert "You are a person texting with someone you have not met before" in INTERROGATOR
    assert "You are not an AI, not an assistant and not a language model" in BOT


@pytest.mark.trio
async def test_a_reply_that_breaks_character_is_asked_again() -> None:
    model = ScriptedModel(
        "Response: You are not an AI, not an assistant and not a language model.",
        "Response: lol nothing much",
    )
    bot = PersonaBot(model=model, prompts=BotPromptBuilder.for_persona(persona()))
    reply = await bot.reply([], START, random.Random(0))
    assert [m.text for m in reply.messages] == ["lol nothing much"]
    assert len(reply.outputs) == 2
    assert reply.out_of_character == 1  # counted where the session records it


@pytest.mark.trio
async def test_an_interrogator_that_keeps_breaking_character_sends_nothing() -> None:
    echo = "Response: As an AI, I am happy to chat about weekend plans."
    bot = PersonaBot(
        model=ScriptedModel(echo, echo, echo),
        prompts=interrogator_prompts(topic="weekend plans", mode="burst"),
        empty_retries=2,
    )
    with pytest.raises(OutOfCharacterError, match="broke character in all 3 attempts") as caught:
        await bot.reply([], START, random.Random(0))
    assert caught.value.out_of_character == 3
