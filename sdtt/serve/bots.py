"""The persona bots of a study's conditions: loaded once, each bot room given its own
model (seeded by the room's number) and run by the engine's session as in ``sdtt chat``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import trio

from sdtt.engine.session import SessionSettings
from sdtt.engine.simulate import for_virtual_clock, persona_bot
from sdtt.generate.chainfile import count_pseudo_turns, load_pseudo_messages
from sdtt.models.base import GenerateConfig
from sdtt.models.model import Model, get_model
from sdtt.personas.bot import PersonaBot
from sdtt.personas.persona import Persona
from sdtt.personas.store import find_persona
from sdtt.personas.timing import persona_timing
from sdtt.serve.room import BotSetup, LiveRoom
from sdtt.serve.spec import Condition, Study
from sdtt.serve.store import StudyStore, off_loop

ModelFactory = Callable[[Condition, int], Model]
"""Opens a condition's model with a seed."""


def open_condition_model(condition: Condition, seed: int) -> Model:
    """The condition's model as the registry opens it (stopping before a new user line)."""
    return get_model(condition.model, config=GenerateConfig(stop=("\nUser:",)), seed=seed)


class Bots:
    """Runs the persona bot of a room's condition; personas, pseudo-dialogues and bot
    prompts are loaded once per study."""

    def __init__(
        self,
        study: Study,
        store: StudyStore,
        *,
        open_model: ModelFactory | None = None,
        virtual_clock: bool = False,
    ) -> None:
        self.study = study
        self.store = store
        self._open_model = open_model or open_condition_model
        self._virtual_clock = virtual_clock
        self._personas: dict[str, Persona] = {}
        self._bots: dict[int, PersonaBot] = {}
        self._turns: dict[Path, int] = {}

    def check(self) -> None:
        """Load every persona and pseudo-dialogue now, so a bad spec fails at start."""
        for condition in self.study.conditions:
            self._persona(condition.persona)
            pseudo = self.study.pseudo_path(condition)
            if pseudo is not None:
                load_pseudo_messages(pseudo)

    def _persona(self, name: str) -> Persona:
        if name not in self._personas:
            self._personas[name] = find_persona(name)
        return self._personas[name]

    async def run(self, live: LiveRoom) -> None:
        """Run ``live``'s chats with its condition's bot until the room ends."""
        assert live.record.condition is not None
        condition = self.study.conditions[live.record.condition]
        spec = self.study.spec
        persona = self._persona(condition.persona)
        pseudo_path = self.study.pseudo_path(condition)
        number = await off_loop(self.store, self.store.room_count)
        model = self._open_model(condition, spec.chat.seed + number)
        try:
            bot = self._bot(condition, persona, model)
            settings = SessionSettings(
                mode="burst",
                t1=spec.chat.t1,
                delays=condition.delays,
                timing=persona_timing(persona) if condition.delays == "fitted" else None,
                max_messages=spec.chat.max_messages,
                seed=spec.chat.seed + number,
            )
            meta = {
                "persona": condition.persona,
                "model": condition.model,
                "interrogator": "human",
                "pseudo": condition.pseudo or None,
                "pseudo_turns": self._pseudo_turns(pseudo_path),
                "live_turns": spec.study.turns,
                "condition": condition.index,
                "study": self.study.name,
            }
            await live.run(BotSetup(bot, settings, meta))
        finally:
            with trio.CancelScope(shield=True):
                await model.aclose()

    def _bot(self, condition: Condition, persona: Persona, model: Model) -> PersonaBot:
        """The condition's persona bot speaking through ``model``. Its prompt (the
        persona's history and pseudo-dialogue) is built once per condition: building it
        takes long enough to hold up every other room's delivery."""
        template = self._bots.get(condition.index)
        if template is None:
            pseudo_path = self.study.pseudo_path(condition)
            template = persona_bot(
                model,
                persona,
                mode="burst",
                pseudo=load_pseudo_messages(pseudo_path) if pseudo_path is not None else [],
                max_messages=self.study.spec.chat.max_messages,
            )
            self._bots[condition.index] = template
        return replace(template, model=for_virtual_clock(model) if self._virtual_clock else model)

    def _pseudo_turns(self, path: Path | None) -> int:
        if path is None:
            return 0
        if path not in self._turns:
            self._turns[path] = count_pseudo_turns(path)
        return self._turns[path]
