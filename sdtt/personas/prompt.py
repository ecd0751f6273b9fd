"""The persona bot's prompt: instructions, the person's real history, then the dialogue.

The instructions follow the method's list (be this person, not an AI; match tone,
vocabulary, punctuation and emoji habits; short, possibly unfinished sentences; emojis
not in every message; don't just follow the other side, ask things and open related
subtopics). Burst mode adds that several timestamped messages may be sent in a row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sdtt.dialogue.condition import ChatMode
from sdtt.dialogue.message import Message, segment_turns
from sdtt.dialogue.render import format_time, render_messages, response_prefix
from sdtt.dialogue.turns import flatten_turns, to_pingpong
from sdtt.models.base import Prompt
from sdtt.personas.persona import Persona

DEFAULT_HISTORY_TURNS = 100

_CORE = """\
You are a real person chatting by text message. You are not an AI, not an assistant and \
not a language model, and you never say or hint that you might be one.
Below are real chats of yours: the lines marked "Response" are yours, the lines marked \
"User" are the people you were talking to. Keep writing exactly like the Response side:
- the same tone, vocabulary, spelling, punctuation, capitalisation and emoji habits;
- short messages, often incomplete sentences, the way people really text;
- no emoji in every message; use them only as often as you did before;
- don't simply go along with the other person: ask things back, bring up related \
subtopics, disagree when you would, but stay on the subject being discussed;
- every line is "Response: [YYYY-MM-DD HH:MM:SS] message", with the time you send it."""

_PINGPONG = "Send exactly one message, then stop and wait for the other person."

_BURST = """\
You may send one message or several in a row, as you did in your chats. Each message is \
its own "Response:" line with its own timestamp; timestamps go forward, spaced like your \
own messages. Then stop and wait for the other person."""


def bot_instructions(mode: ChatMode) -> str:
    """The standing instructions for a persona bot in ``mode``."""
    return f"{_CORE}\n{_BURST if mode == 'burst' else _PINGPONG}"


def history_messages(
    persona: Persona, turns: int = DEFAULT_HISTORY_TURNS, mode: ChatMode = "burst"
) -> list[list[Message]]:
    """The last ``turns`` burst turns of the persona's chats, as conversations (oldest
    first): what every prompt shows of a persona (the bot's, the interrogator's and the
    pseudo-dialogue generator's), so a chain learns from the turns its bot will see.

    In ping-pong mode each conversation is converted first (the first message of each
    run kept), so the bot never sees itself writing in bursts. Held-out conversations
    (``persona.info.held_out``, the human side of a ``human = "persona"`` study) are
    never shown.
    """
    remaining = turns
    kept: list[list[Message]] = []
    for conversation in reversed(persona.prompt_conversations):
        if remaining <= 0:
            break
        messages = conversation.messages
        if mode == "pingpong":
            messages = to_pingpong(messages)
        chosen = segment_turns(messages)[-remaining:]
        remaining -= len(chosen)
        if chosen:
            kept.append(flatten_turns(chosen))
    return list(reversed(kept))


def history_text(
    persona: Persona, turns: int = DEFAULT_HISTORY_TURNS, mode: ChatMode = "burst"
) -> str:
    """The :func:`history_messages` in prompt lines, one conversation per block."""
    return "\n\n".join(render_messages(chat) for chat in history_messages(persona, turns, mode))


CHARS_PER_TOKEN = 2.0
"""A cautious estimate of characters per token in a persona prompt. English prose
averages about four, but each history line's timestamp costs a dozen tokens: Gemma's
tokenizer counted about 11,400 tokens in the 22,400 characters of a 100-turn prompt."""
PROMPT_RESERVE_TOKENS = 2500
"""Room a prompt keeps beside the persona history: instructions, live chat, task."""


def fitting_history_turns(
    persona: Persona, tokens: float, *, wanted: int, mode: ChatMode = "burst"
) -> int:
    """The most turns of history (up to ``wanted``) whose text fits in ``tokens`` tokens,
    counted at :data:`CHARS_PER_TOKEN` characters a token; 0 when none fits."""
    budget = tokens * CHARS_PER_TOKEN
    turns = wanted
    while turns > 0 and len(history_text(persona, turns, mode)) > budget:
        turns -= 1
    return turns


@dataclass(frozen=True)
class BotPromptBuilder:
    """Builds the prompt for each reply of one persona bot session.

    The stable part (instructions, history, pseudo-dialogue) is computed once, so every
    prompt of a session shares the same prefix and provider caches keep hitting.
    """

    instructions: str
    history: str

    @classmethod
    def for_persona(
        cls,
        persona: Persona,
        *,
        mode: ChatMode = "burst",
        history_turns: int = DEFAULT_HISTORY_TURNS,
        pseudo: Sequence[Message] = (),
    ) -> BotPromptBuilder:
        """A builder for ``persona``; ``pseudo`` is a generated pseudo-dialogue to include.

        In ping-pong mode the history and the pseudo-dialogue are both converted to
        ping-pong (callers that convert ``pseudo`` themselves lose nothing: converting
        twice changes nothing).
        """
        history = history_text(persona, history_turns, mode)
        if mode == "pingpong":
            pseudo = to_pingpong(pseudo)
        if pseudo:
            history = (
                f"{history}\n\n{render_messages(pseudo)}" if history else render_messages(pseudo)
            )
        return cls(instructions=bot_instructions(mode), history=history)

    def build(self, dialogue: Sequence[Message], now: datetime) -> Prompt:
        """The prompt asking for the bot's next reply at time ``now``."""
        return Prompt(
            instructions=self.instructions,
            history=self.history,
            dialogue=render_messages(dialogue),
            task=(
                f"It is now {format_time(now)}. Write your next message(s) as Response lines, "
                "nothing else."
            ),
            continue_with=response_prefix(),
        )
