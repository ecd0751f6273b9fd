"""Holding out some of a persona's own conversations from every prompt.

A study with ``human = "persona"`` shows, as the human side of each pair, chats the
imitated person really had; those chats must never be in the bot's prompt, or the bot
could copy them. :func:`hold_out` picks them (seeded) and returns a persona of its own
name that lists them in ``info.held_out``: every prompt built from it
(:func:`sdtt.personas.prompt.history_messages`) leaves them out, and pairing draws the
human side from them (:class:`sdtt.questionnaires.pairing.PersonaPool`).
"""

from __future__ import annotations

from sdtt.errors import InputError
from sdtt.personas.persona import Persona
from sdtt.seeds import seeded_rng

DEFAULT_MIN_TURNS = 4
"""Turns a held-out chat needs at least: the longest window a pair shows of it."""


def held_out_name(name: str) -> str:
    """The default name of the persona that holds out chats of persona ``name``."""
    return f"{name}-held-out"


def hold_out(
    persona: Persona,
    count: int,
    *,
    seed: int = 0,
    min_turns: int = DEFAULT_MIN_TURNS,
    name: str | None = None,
) -> Persona:
    """``persona`` under ``name`` with ``count`` of its conversations of at least
    ``min_turns`` turns held out of every prompt, drawn with ``seed``.

    At least one conversation stays for the prompt. Chats already held out stay so.
    """
    held = set(persona.info.held_out)
    fitting = [
        conversation
        for conversation in persona.conversations
        if conversation.id not in held and len(conversation.turns) >= min_turns
    ]
    if count < 1:
        raise InputError(f"{count} chats to hold out: give at least 1.", field="--count")
    left = len(persona.conversations) - len(held)
    if len(fitting) < count or left - count < 1:
        raise InputError(
            f"persona {persona.name!r} has {len(fitting)} conversations of at least "
            f"{min_turns} turns that are not held out yet, and {left} in its prompt; "
            f"holding out {count} needs {count} such conversations and leaves one or more "
            "for the prompt.",
            field="--count",
            hint="Hold out fewer (--count), accept shorter chats (--min-turns), or import "
            "more of the person's chats.",
        )
    chosen = seeded_rng(seed, "hold-out", persona.name).sample(fitting, count)
    ids = {conversation.id for conversation in chosen} | held
    ordered = [c.id for c in persona.conversations if c.id in ids]
    new_name = name or held_out_name(persona.name)
    info = persona.info.model_copy(
        update={
            "name": new_name,
            "held_out": ordered,
            "extra": {
                **persona.info.extra,
                "held_out_from": persona.name,
                "held_out_seed": seed,
                "held_out_min_turns": min_turns,
            },
            "description": (
                f"{persona.info.description} {len(ordered)} of its conversations are held "
                "out of every prompt (the human side of a human = 'persona' study)."
            ).strip(),
        }
    )
    return Persona(info=info, conversations=persona.conversations)
