"""The persona bot: prompt, model call and reply parsing, independent of any clock.

The burst engine, the demo and the generators ask a :class:`PersonaBot` for the next
reply; timing (typing delays, stale replies) is the engine's business.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from sdtt.dialogue.message import Message
from sdtt.dialogue.parse import Resampler, parse_reply
from sdtt.errors import EmptyReplyError, OutOfCharacterError
from sdtt.models.asking import ask
from sdtt.models.base import GenerateConfig, Generator, ModelOutput
from sdtt.personas.character import out_of_character
from sdtt.personas.prompt import BotPromptBuilder
from sdtt.seeds import derive_seed

DEFAULT_EMPTY_RETRIES = 3


DEFAULT_MAX_MESSAGES = 5
"""Most messages in one reply burst, unless a session or command sets another."""


@dataclass(frozen=True)
class BotReply:
    """The messages of one reply and every model call it took."""

    messages: list[Message]
    outputs: list[ModelOutput]
    out_of_character: int = 0
    """Messages of earlier attempts that broke character, left unsent and asked again."""


@dataclass
class PersonaBot:
    """Writes replies in a persona's voice with one model."""

    model: Generator
    prompts: BotPromptBuilder
    config: GenerateConfig = field(default_factory=lambda: GenerateConfig(stop=("\nUser:",)))
    max_messages: int = DEFAULT_MAX_MESSAGES
    empty_retries: int = DEFAULT_EMPTY_RETRIES
    """Small models sometimes answer with nothing usable: ask again this many times."""
    resample: Resampler | None = None
    """Replaces missing or bad reply timestamps (``parse_reply``'s typing-time default)."""

    async def reply(
        self, dialogue: Sequence[Message], now: datetime, rng: random.Random
    ) -> BotReply:
        """The bot's next messages after ``dialogue``, timestamped at or after ``now``.

        Raises :class:`EmptyReplyError` when every attempt came back unusable.
        """
        prompt = self.prompts.build(dialogue, now)
        caught = 0

        def read(output: ModelOutput) -> list[Message]:
            nonlocal caught
            messages = parse_reply(
                output.text,
                now=now,
                rng=rng,
                continued_from=output.continued_from,
                max_messages=self.max_messages,
                resample=self.resample,
            )
            reasons = [out_of_character(m.text, self.prompts.instructions) for m in messages]
            broke = [why for why in reasons if why is not None]
            if broke:
                caught += len(broke)
                raise OutOfCharacterError(f"A reply broke character: {broke[0]}.")
            return messages

        asked = await ask(
            self.model, prompt, read, attempts=1 + self.empty_retries, config=self._config_for
        )
        if asked.failure is not None:
            asked.failure.out_of_character = caught
            raise asked.failure
        if asked.answer is None:
            error: EmptyReplyError
            if isinstance(asked.unreadable, OutOfCharacterError):
                error = OutOfCharacterError(
                    f"The model broke character in all {len(asked.outputs)} attempts, so "
                    f"nothing was sent. {asked.unreadable}"
                )
            else:
                error = EmptyReplyError(
                    f"The model gave no usable reply in {len(asked.outputs)} attempts. "
                    f"{asked.unreadable}"
                )
            error.out_of_character = caught
            raise error
        return BotReply(messages=asked.answer, outputs=list(asked.outputs), out_of_character=caught)

    def _config_for(self, attempt: int) -> GenerateConfig:
        # A fixed seed would make every retry repeat the same unusable sample: each retry
        # gets a seed of its own, derived by the one seed rule.
        if attempt == 1 or self.config.seed is None:
            return self.config
        return replace(self.config, seed=derive_seed(self.config.seed, "retry", attempt))
