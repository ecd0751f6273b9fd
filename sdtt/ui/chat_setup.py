"""The choices of a live chat, checked before any screen opens: a bad persona, model or
file is reported as a plain error, not inside the chat app."""

from __future__ import annotations

from pathlib import Path

from sdtt.engine.live_chat import ChatPlan
from sdtt.engine.schedule import PresetName
from sdtt.engine.session import Mode, SessionSettings
from sdtt.errors import ConfigError
from sdtt.files import TRANSCRIPTS_DIR
from sdtt.generate.chainfile import count_pseudo_turns, load_pseudo_messages
from sdtt.personas.store import find_persona
from sdtt.personas.timing import persona_timing

_SESSION_DEFAULTS = SessionSettings()
"""Where the chat settings' defaults come from, so they are written once."""


def build_plan(
    *,
    persona: str,
    model: str,
    pseudo: Path | None = None,
    mode: Mode = _SESSION_DEFAULTS.mode,
    delays: PresetName = _SESSION_DEFAULTS.delays,
    turns: int = 10,
    out_dir: Path = TRANSCRIPTS_DIR,
    participant: bool = False,
    t1: float = _SESSION_DEFAULTS.t1,
    max_messages: int = _SESSION_DEFAULTS.max_messages,
    seed: int = _SESSION_DEFAULTS.seed,
    base_url: str | None = None,
    api_key_env: str | None = None,
) -> ChatPlan:
    """Check a user's choices and gather what the chat needs (raises :class:`SdttError`)."""
    if turns < 1:
        raise ConfigError(f"--turns must be at least 1, not {turns}.")
    if max_messages < 1:
        raise ConfigError(f"--max-messages must be at least 1, not {max_messages}.")
    if t1 < 0:
        raise ConfigError(f"--t1 must not be negative, not {t1}.")
    found = find_persona(persona)
    messages = tuple(load_pseudo_messages(pseudo)) if pseudo is not None else ()
    settings = SessionSettings(
        mode=mode,
        t1=t1,
        delays=delays,
        timing=persona_timing(found) if delays == "fitted" else None,
        max_messages=max_messages,
        seed=seed,
    )
    return ChatPlan(
        persona=found,
        model_name=model,
        settings=settings,
        turns=turns,
        out_dir=out_dir,
        pseudo_path=pseudo,
        pseudo=messages,
        pseudo_turns=count_pseudo_turns(pseudo) if pseudo is not None else 0,
        participant=participant,
        base_url=base_url,
        api_key_env=api_key_env,
    )
