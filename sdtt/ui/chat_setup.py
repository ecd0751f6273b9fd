"""The choices of a live chat, checked before any screen opens: a bad persona, model or
file is reported as a plain error, not inside the chat app."""

from __future__ import annotations

from pathlib import Path

from sdtt.dialogue.condition import ChatMode, Condition, DelayName
from sdtt.engine.live_chat import LiveChat
from sdtt.engine.opening import Options, load_pseudo
from sdtt.engine.session import SessionSettings
from sdtt.errors import ConfigError
from sdtt.files import TRANSCRIPTS_DIR
from sdtt.personas.store import find_persona

_SESSION_DEFAULTS = SessionSettings()
"""Where the chat settings' defaults come from, so they are written once."""


def build_live_chat(
    *,
    persona: str,
    model: str,
    pseudo: Path | None = None,
    mode: ChatMode = _SESSION_DEFAULTS.mode,
    delays: DelayName = _SESSION_DEFAULTS.delays,
    turns: int = 10,
    out_dir: Path = TRANSCRIPTS_DIR,
    participant: bool = False,
    t1: float = _SESSION_DEFAULTS.t1,
    max_messages: int = _SESSION_DEFAULTS.max_messages,
    seed: int = _SESSION_DEFAULTS.seed,
    base_url: str | None = None,
    api_key_env: str | None = None,
) -> LiveChat:
    """Check a user's choices and gather what the chat needs (raises :class:`SdttError`)."""
    if turns < 1:
        raise ConfigError(f"--turns must be at least 1, not {turns}.")
    options = Options(t1=t1, max_messages=max_messages)
    options.check()
    condition = Condition(
        persona=persona,
        model=model,
        mode=mode,
        pseudo=str(pseudo) if pseudo is not None else None,
        live_turns=turns,
        delays=delays,
        seed=seed,
        interrogator="human",
    )
    found = find_persona(persona)
    messages, pseudo_turns = load_pseudo(condition)
    known = {"persona": found.name, "pseudo_turns": pseudo_turns}
    return LiveChat(
        condition=condition.model_copy(update=known),
        persona=found,
        out_dir=out_dir,
        pseudo=tuple(messages),
        options=options,
        participant=participant,
        base_url=base_url,
        api_key_env=api_key_env,
    )
