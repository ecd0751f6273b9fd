"""The persona bots of a study's conditions: each condition opened once
(:func:`~sdtt.engine.opening.open_bot`), each bot room given its own model and seed and
run by the engine's session as in ``sdtt chat``."""

from __future__ import annotations

from collections.abc import Callable

import trio

from sdtt.dialogue.condition import Condition
from sdtt.engine.opening import BotSetup, Options, load_pseudo, open_bot, open_model
from sdtt.models.model import Model
from sdtt.personas.persona import Persona
from sdtt.personas.store import find_persona
from sdtt.seeds import derive_seed
from sdtt.serve.room import LiveRoom
from sdtt.serve.spec import Study
from sdtt.serve.store import StudyStore, off_loop

ModelFactory = Callable[[Condition, int], Model]
"""Opens a condition's model with a seed."""


def open_condition_model(condition: Condition, seed: int) -> Model:
    """The condition's model as the registry opens it, with ``seed``."""
    return open_model(condition.model_copy(update={"seed": seed}))


def room_seed(study: Study, number: int) -> int:
    """The seed of the study's room ``number`` (its model and its session)."""
    return derive_seed(study.spec.chat.seed, "room", number)


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
        self._setups: dict[int, BotSetup] = {}

    def check(self) -> None:
        """Load every persona and pseudo-dialogue now, so a bad spec fails at start."""
        for condition in self.study.conditions:
            self._persona(condition)
            load_pseudo(condition, self.study.folder)

    def _persona(self, condition: Condition) -> Persona:
        name = str(condition.persona)
        if name not in self._personas:
            self._personas[name] = find_persona(name)
        return self._personas[name]

    async def run(self, live: LiveRoom) -> None:
        """Run ``live``'s chats with its condition's bot until the room ends."""
        assert live.record.cell is not None
        condition = self.study.conditions[live.record.cell]
        number = await off_loop(self.store, self.store.room_count)
        seed = room_seed(self.study, number)
        model = self._open_model(condition, seed)
        try:
            setup = self._setup(condition, model)
            await live.run(setup.reseeded(seed, model, virtual_clock=self._virtual_clock))
        finally:
            with trio.CancelScope(shield=True):
                await model.aclose()

    def _setup(self, condition: Condition, model: Model) -> BotSetup:
        """The condition opened. Its bot's prompt (the persona's history and
        pseudo-dialogue) is built once per condition: building it takes long enough to
        hold up every other room's delivery."""
        assert condition.index is not None
        setup = self._setups.get(condition.index)
        if setup is None:
            chat = self.study.spec.chat
            setup = open_bot(
                condition,
                model,
                options=Options(t1=chat.t1, max_messages=chat.max_messages),
                folder=self.study.folder,
                persona=self._persona(condition),
            )
            self._setups[condition.index] = setup
        return setup
