"""The simulated interrogator: an LLM or a script playing the human side of a live chat.

It runs through the same engine as the bot (:mod:`sdtt.engine.session`), in a session of
its own: the bot's messages arrive there as the partner's, and its replies are typed with
its own delays and bursts. Its prompt is written from its own point of view, so its lines
are ``Response:`` and the bot's are ``User:``, and the same reply parser serves both.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

import trio

from sdtt.dialogue.condition import ChatMode
from sdtt.dialogue.message import RESPONSE, Message
from sdtt.engine.schedule import preset_decides
from sdtt.engine.settings import SessionSettings
from sdtt.errors import InputError, ModelError
from sdtt.files import read_text_file
from sdtt.models.base import GenerateConfig, Generator, ModelOutput
from sdtt.personas.bot import BotReply, PersonaBot
from sdtt.personas.persona import Persona
from sdtt.personas.prompt import (
    DEFAULT_HISTORY_TURNS,
    BotPromptBuilder,
    bot_instructions,
    history_text,
)

_CASUAL = """\
You are a person texting with someone you have not met before, through a chat app. You \
are not an AI, not an assistant and not a language model, and you never say you might be.
Write the way people really text: short and casual, often lower case, sometimes an \
unfinished sentence or a small typo; no lists, no headings, no polished paragraphs.
Be curious about the other person: ask what they think, what they do, what happened to \
them; react to their answers and share a bit about yourself in return. Don't ask more \
than one or two questions at a time.
Keep an open mind about who they are. Now and then, if an answer sounds odd, too smooth or \
evasive, you may casually test whether you're talking to a real person (a quick follow-up \
on a detail, a bit of humour, a question about their day), but never turn the chat into \
an interview about it.
Lines marked "User" are the other person's messages; lines marked "Response" are yours. \
Every message you send is one line: "Response: [YYYY-MM-DD HH:MM:SS] message".
If the chat has not started yet, open it with a greeting and something about the topic."""

_BURST = """\
You may send one message or several in a row, as people do when texting; each is its own \
"Response:" line with a later timestamp. Then stop and wait for the other person."""

_PINGPONG = "Send exactly one message, then stop and wait for the other person."


def interrogator_instructions(topic: str | None, mode: ChatMode) -> str:
    """Standing instructions for an LLM playing a curious human chat partner."""
    about = f"The chat is about: {topic}." if topic else "Pick an everyday topic to chat about."
    return f"{_CASUAL}\n{about}\n{_BURST if mode == 'burst' else _PINGPONG}"


def interrogator_prompts(
    *,
    topic: str | None,
    mode: ChatMode,
    persona: Persona | None = None,
    instructions: str | None = None,
    history_turns: int = DEFAULT_HISTORY_TURNS,
) -> BotPromptBuilder:
    """The interrogator's prompt builder.

    With ``persona`` it plays that real person (their chats as history, the persona
    instructions plus the topic); with ``instructions`` it follows those; otherwise it is
    the curious stranger of :func:`interrogator_instructions`.
    """
    if persona is not None:
        about = f"\nThe chat is about: {topic}." if topic else ""
        return BotPromptBuilder(
            instructions=bot_instructions(mode) + about,
            history=history_text(persona, history_turns, mode),
        )
    return BotPromptBuilder(
        instructions=instructions or interrogator_instructions(topic, mode), history=""
    )


INTERROGATOR_MAX_MESSAGES = 4
"""Most messages a simulated interrogator sends in one reply: one fewer than a bot's
(:data:`~sdtt.personas.bot.DEFAULT_MAX_MESSAGES`), as every simulated chat has run it."""
INTERROGATOR_TEMPERATURE = 0.9
"""A simulated interrogator samples a little hotter than the bot, so its questions vary."""


def interrogator_settings(mode: ChatMode, seed: int, *, t1: float | None = None) -> SessionSettings:
    """The session settings of a simulated interrogator (``seed``: its role's seed,
    :func:`~sdtt.engine.opening.role_seed`); ``t1`` defaults to the session's."""
    given: dict[str, object] = {"mode": mode, "max_messages": INTERROGATOR_MAX_MESSAGES}
    if t1 is not None:
        given["t1"] = t1
    return SessionSettings.model_validate({**given, "seed": seed})


def interrogator_config(config: GenerateConfig) -> GenerateConfig:
    """``config`` as a simulated interrogator samples with it."""
    return replace(config, temperature=INTERROGATOR_TEMPERATURE)


def llm_interrogator(
    model: Generator,
    *,
    topic: str | None,
    mode: ChatMode,
    persona: Persona | None = None,
    instructions: str | None = None,
    max_messages: int = INTERROGATOR_MAX_MESSAGES,
    config: GenerateConfig | None = None,
    seed: int | None = None,
) -> PersonaBot:
    """An interrogator played by ``model`` (sampling a little hotter than the bot).

    ``seed`` (its role's seed, :func:`~sdtt.engine.opening.role_seed`) is the sampling
    seed of its calls unless ``config`` holds one."""
    config = config or GenerateConfig(stop=("\nUser:",), temperature=INTERROGATOR_TEMPERATURE)
    if config.seed is None and seed is not None:
        config = replace(config, seed=seed)
    return PersonaBot(
        model=model,
        prompts=interrogator_prompts(
            topic=topic, mode=mode, persona=persona, instructions=instructions
        ),
        config=config,
        max_messages=max_messages,
        resample=preset_decides,
    )


class ScriptExhaustedError(ModelError):
    """A scripted interrogator has sent every message of its script."""


SCRIPT_INTERROGATOR = "script"
"""The interrogator a condition records for a :class:`ScriptInterrogator`."""


@dataclass
class ScriptInterrogator:
    """An interrogator that sends a fixed list of bursts, in order.

    Each call answers with what is left of the burst in progress, or the next burst once
    the previous one was sent in full: a burst cut short because the bot wrote again (its
    unsent rest dropped as stale) is completed on the next call, so every scripted message
    is sent exactly once and in order. Messages carry no time of their own; the session's
    delay preset types them. When the script is used up a call raises
    :class:`ScriptExhaustedError`, and the chat falls quiet.
    """

    bursts: Sequence[Sequence[str]]
    name: str = "script/interrogator"

    def __post_init__(self) -> None:
        if not self.bursts or not all(self.bursts):
            raise InputError("a script needs at least one burst, and no burst may be empty.")

    async def reply(
        self, dialogue: Sequence[Message], now: datetime, rng: random.Random
    ) -> BotReply:
        """The rest of the current burst (``dialogue`` is from the interrogator's side)."""
        await trio.lowlevel.checkpoint()
        sent = sum(1 for message in dialogue if message.side == RESPONSE)
        position = 0
        for burst in self.bursts:
            if sent < position + len(burst):
                texts = list(burst[sent - position :])
                text = "\n".join(f"Response: {line}" for line in texts)
                return BotReply(
                    messages=[Message(side=RESPONSE, text=line, time=now) for line in texts],
                    outputs=[ModelOutput(text=text, model=self.name)],
                )
            position += len(burst)
        raise ScriptExhaustedError(f"The script's {position} messages have all been sent.")


def read_script(path: str | Path) -> list[list[str]]:
    """Read an interrogator script: one message per line, a blank line between bursts.

    Lines starting with ``#`` are comments.
    """
    path = Path(path)
    text = read_text_file(path, what="script file")
    bursts: list[list[str]] = [[]]
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            continue
        if not line.strip():
            if bursts[-1]:
                bursts.append([])
            continue
        bursts[-1].append(line.strip())
    bursts = [burst for burst in bursts if burst]
    if not bursts:
        raise InputError(
            "holds no messages.",
            path=path,
            hint="Write one message per line and a blank line between bursts.",
        )
    return bursts
