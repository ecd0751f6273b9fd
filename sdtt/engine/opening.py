"""Opening a condition: the one place a :class:`~sdtt.dialogue.condition.Condition`
becomes a running persona bot.

:func:`open_bot` loads the persona, its fitted timing (for the ``fitted`` delay preset),
the pseudo-dialogue and its turn count N, and returns the bot with its session settings
and the condition to record in the header of the transcript and event log. ``sdtt
simulate``, ``sdtt chat``, ``sdtt demo`` and the rooms of ``sdtt serve`` all open their
bots here. :func:`simulate_condition` is the one place a condition becomes a simulated
chat (the bot against a simulated interrogator): ``sdtt simulate``, ``sdtt demo`` and a
study's chats run through it.

Seeds follow one rule (:mod:`sdtt.seeds`): the bot's model and its session use
the condition's seed; every other role derives its own with
:func:`~sdtt.seeds.derive_seed` (:func:`role_seed`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sdtt.dialogue.condition import Condition
from sdtt.dialogue.message import Message
from sdtt.engine.interrogator import interrogator_settings
from sdtt.engine.session import Replier, SessionSettings, with_settings
from sdtt.engine.simulate import (
    INTERROGATOR,
    SimulationResult,
    for_virtual_clock,
    persona_bot,
    run_simulated_chat,
)
from sdtt.errors import ConfigError
from sdtt.generate.chainfile import count_pseudo_turns, load_pseudo_messages
from sdtt.models.base import GenerateConfig
from sdtt.models.model import Model, get_model
from sdtt.models.registry import base_url_for
from sdtt.personas.bot import PersonaBot
from sdtt.personas.persona import Persona
from sdtt.personas.prompt import DEFAULT_HISTORY_TURNS
from sdtt.personas.store import find_persona
from sdtt.personas.timing import persona_timing
from sdtt.seeds import derive_seed

BOT_CONFIG = GenerateConfig(stop=("\nUser:",))
"""How the persona's model is called: it stops before writing the partner's next line."""

_DEFAULTS = SessionSettings()


def role_seed(condition: Condition, role: str) -> int:
    """The seed of another role in a chat of ``condition`` (e.g. ``INTERROGATOR``)."""
    return derive_seed(condition.seed if condition.seed is not None else _DEFAULTS.seed, role)


@dataclass(frozen=True)
class Options:
    """How a bot runs beyond its condition: session limits and prompt size."""

    t1: float = _DEFAULTS.t1
    max_messages: int = _DEFAULTS.max_messages
    history_turns: int = DEFAULT_HISTORY_TURNS
    virtual_clock: bool = False

    def check(self) -> None:
        """Refuse values no chat can run with (:class:`ConfigError` naming the flag)."""
        if self.max_messages < 1:
            raise ConfigError(f"--max-messages must be at least 1, not {self.max_messages}.")
        if self.t1 < 0:
            raise ConfigError(f"--t1 must not be negative, not {self.t1}.")


@dataclass(frozen=True)
class BotSetup:
    """A condition, opened: the bot, its session settings and the condition for the
    header (with N counted and the settings' mode, delays and seed)."""

    bot: PersonaBot
    settings: SessionSettings
    condition: Condition
    persona: Persona

    def reseeded(self, seed: int, model: Model, *, virtual_clock: bool = False) -> BotSetup:
        """The same bot (its prompt is not built again) on ``model`` with ``seed``: one
        room of a live study."""
        settings = self.settings.model_copy(update={"seed": seed})
        return BotSetup(
            bot=replace(self.bot, model=for_virtual_clock(model) if virtual_clock else model),
            settings=settings,
            condition=with_settings(self.condition, settings),
            persona=self.persona,
        )


def pseudo_path(condition: Condition, folder: Path | None = None) -> Path | None:
    """The condition's pseudo-dialogue file, relative paths resolved against ``folder``."""
    if not condition.pseudo:
        return None
    path = Path(condition.pseudo)
    return folder / path if folder is not None and not path.is_absolute() else path


def load_pseudo(condition: Condition, folder: Path | None = None) -> tuple[list[Message], int]:
    """The pseudo-dialogue of ``condition`` and its turn count N (none: ``[]``, 0)."""
    path = pseudo_path(condition, folder)
    if path is None:
        return [], 0
    return load_pseudo_messages(path), count_pseudo_turns(path)


def open_model(
    condition: Condition, *, base_url: str | None = None, api_key_env: str | None = None
) -> Model:
    """The model playing the persona, seeded with the condition's seed."""
    if condition.model is None:
        raise ConfigError("the condition names no model to play the persona.")
    return get_model(
        condition.model,
        config=BOT_CONFIG,
        seed=condition.seed,
        base_url=base_url_for(condition.model, base_url),
        api_key_env=api_key_env,
    )


def open_bot(
    condition: Condition,
    model: Model,
    *,
    options: Options = Options(),
    folder: Path | None = None,
    persona: Persona | None = None,
    pseudo: Sequence[Message] | None = None,
) -> BotSetup:
    """Open ``condition`` on ``model`` (from :func:`open_model`, or any model).

    Loads the persona (unless given), its fitted timing for the ``fitted`` preset and the
    pseudo-dialogue with its N (relative to ``folder``; unless ``pseudo`` is given, already
    loaded: then the condition's ``pseudo_turns`` stands). Raises :class:`SdttError` for a
    missing persona or file.
    """
    options.check()
    if persona is None:
        if condition.persona is None:
            raise ConfigError("the condition names no persona for the bot to play.")
        persona = find_persona(condition.persona)
    if pseudo is None:
        messages, turns = load_pseudo(condition, folder)
        condition = condition.model_copy(update={"pseudo_turns": turns})
    else:
        messages = list(pseudo)
    delays = condition.delays or _DEFAULTS.delays
    settings = SessionSettings(
        mode=condition.mode,
        t1=options.t1,
        delays=delays,
        timing=persona_timing(persona) if delays == "fitted" else None,
        max_messages=options.max_messages,
        seed=condition.seed if condition.seed is not None else _DEFAULTS.seed,
    )
    bot = persona_bot(
        model,
        persona,
        mode=condition.mode,
        history_turns=options.history_turns,
        pseudo=messages,
        max_messages=options.max_messages,
        virtual_clock=options.virtual_clock,
        seed=settings.seed,
    )
    return BotSetup(
        bot=bot,
        settings=settings,
        condition=with_settings(condition, settings),
        persona=persona,
    )


def interrogator_session(condition: Condition, options: Options = Options()) -> SessionSettings:
    """The session settings of the simulated interrogator in a chat of ``condition``:
    :func:`~sdtt.engine.interrogator.interrogator_settings` for its mode, its role's seed
    and the options' ``t1``."""
    return interrogator_settings(condition.mode, role_seed(condition, INTERROGATOR), t1=options.t1)


async def simulate_condition(
    condition: Condition,
    model: Model,
    interrogator: Replier,
    *,
    turns: int,
    options: Options = Options(),
    persona: Persona | None = None,
    pseudo: Sequence[Message] | None = None,
    **recording: Any,
) -> SimulationResult:
    """A simulated chat of ``condition`` for ``turns`` burst turns: its bot opened on
    ``model`` by :func:`open_bot` (``options``, ``persona`` and ``pseudo`` as there),
    against ``interrogator`` (a script or :func:`~sdtt.engine.interrogator.llm_interrogator`)
    with the simulated interrogator's session settings (:func:`interrogator_session`).
    ``recording`` is what :func:`~sdtt.engine.simulate.run_simulated_chat` takes beside
    them (sinks, ``out_dir``, ``session_id``, ``topic``, ``meta``, ``started``,
    ``max_duration``); the opened condition is recorded with the transcript."""
    setup = open_bot(condition, model, options=options, persona=persona, pseudo=pseudo)
    return await run_simulated_chat(
        setup.bot,
        interrogator,
        turns=turns,
        bot_settings=setup.settings,
        interrogator_settings=interrogator_session(condition, options),
        condition=setup.condition,
        **recording,
    )
