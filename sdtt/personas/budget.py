"""Fitting a persona bot's prompt into a context window (``--context-tokens``).

A bot's stable prompt is the persona's own history, then the pseudo-dialogue. When the
two do not fit beside the instructions, the live chat and the reply, something must go,
and what goes changes what the study measures:

1. the persona keeps at least :data:`MIN_HISTORY_TURNS` turns of its own history (a bot
   with none is not that person any more);
2. the pseudo-dialogue gives way next, from its oldest turns: the bot still sits at turn
   N + X, but the record says how many of the N turns its prompt held;
3. what room is left goes back to the history, up to the turns asked for.

A prompt that cannot fit even so is refused before any call, with the numbers. Tokens are
counted at :data:`~sdtt.personas.prompt.CHARS_PER_TOKEN` characters a token.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sdtt.dialogue.condition import ChatMode
from sdtt.dialogue.message import Message, Turn, segment_turns
from sdtt.dialogue.render import render_messages
from sdtt.dialogue.turns import flatten_turns, to_pingpong
from sdtt.errors import ConfigError
from sdtt.personas.persona import Persona
from sdtt.personas.prompt import (
    CHARS_PER_TOKEN,
    PROMPT_RESERVE_TOKENS,
    fitting_history_turns,
    history_text,
)

MIN_HISTORY_TURNS = 20
"""Turns of the persona's own history a bot's prompt keeps however small the context (or
all it asked for, if fewer)."""


@dataclass(frozen=True)
class PromptPlan:
    """What of the persona's history and of the pseudo-dialogue a bot's prompt holds."""

    history_turns: int
    """Turns of the persona's own history."""
    pseudo: list[Message]
    """The pseudo-dialogue's messages kept: its last :attr:`pseudo_turns` turns."""
    pseudo_turns: int
    """Turns of the pseudo-dialogue the prompt holds."""
    pseudo_total: int
    """Turns of the pseudo-dialogue there were."""

    @property
    def pseudo_cut(self) -> bool:
        """Whether older turns of the pseudo-dialogue were left out."""
        return self.pseudo_turns < self.pseudo_total


def tokens_of(text: str) -> float:
    """The estimated tokens of ``text``."""
    return len(text) / CHARS_PER_TOKEN


def plan_prompt(
    persona: Persona,
    pseudo: Sequence[Message],
    *,
    context_tokens: int,
    reply_tokens: int,
    history_turns: int,
    mode: ChatMode = "burst",
    minimum: int = MIN_HISTORY_TURNS,
) -> PromptPlan:
    """The history turns and pseudo-dialogue turns that fit ``context_tokens`` beside a
    reply of ``reply_tokens`` and :data:`PROMPT_RESERVE_TOKENS` for the rest.

    Raises :class:`ConfigError` naming the numbers when not even ``minimum`` turns of
    history fit (or all the persona has, if fewer).
    """
    if mode == "pingpong":
        pseudo = to_pingpong(pseudo)
    turns = segment_turns(pseudo)
    room = context_tokens - reply_tokens - PROMPT_RESERVE_TOKENS
    floor = min(history_turns, minimum)
    floor_tokens = tokens_of(history_text(persona, floor, mode))
    if floor_tokens > room:
        raise ConfigError(
            f"the bot's prompt cannot fit a context of {context_tokens} tokens: the reply "
            f"takes {reply_tokens}, the instructions and the live chat about "
            f"{PROMPT_RESERVE_TOKENS}, and the persona's own history of {floor} turns (the "
            f"least a bot keeps to stay that person) about {floor_tokens:,.0f}. Run the "
            "model with a larger context (llama.cpp: -c / --n-ctx; Ollama: num_ctx) and "
            "give that as --context-tokens, or ask for shorter replies."
        )
    kept = _last_fitting(turns, room - floor_tokens)
    pseudo_kept = flatten_turns(turns[len(turns) - kept :]) if kept else []
    left = room - tokens_of(render_messages(pseudo_kept))
    history = max(floor, fitting_history_turns(persona, left, wanted=history_turns, mode=mode))
    return PromptPlan(
        history_turns=history, pseudo=pseudo_kept, pseudo_turns=kept, pseudo_total=len(turns)
    )


def _last_fitting(turns: Sequence[Turn], tokens: float) -> int:
    """How many of the last ``turns`` fit in ``tokens`` when rendered together."""
    low, high = 0, len(turns)
    while low < high:  # the rendered length grows with every turn added
        middle = (low + high + 1) // 2
        text = render_messages(flatten_turns(turns[len(turns) - middle :]))
        if tokens_of(text) <= tokens:
            low = middle
        else:
            high = middle - 1
    return low
