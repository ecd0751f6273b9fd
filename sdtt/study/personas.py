"""The personas a study's bots play, as the study holds them.

With ``[questionnaire] human = "persona"`` and ``held_out = K`` (or a share, ``0.25``),
the run holds K of each persona's own chats out of the bot's prompt itself, drawn with
the study's seed by :func:`sdtt.personas.held_out.hold_out` (the same draw as
``sdtt persona hold-out``), and shows them as the human side. The chats, the
pseudo-dialogue chains, the pairing and the checks all read personas through
:class:`StudyPersonas`, so every prompt and the pairing see the same held-out chats.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sdtt.errors import InputError
from sdtt.personas.held_out import hold_out
from sdtt.personas.persona import Persona
from sdtt.personas.store import find_persona, save_persona

if TYPE_CHECKING:
    from sdtt.study.spec import Study


def held_out_count(held_out: int | float, persona: Persona) -> int:
    """Chats to hold out: a count as given; a share of the persona's chats, at least 1."""
    if isinstance(held_out, int):
        return held_out
    return max(1, round(held_out * len(persona.conversations)))


class StudyPersonas:
    """Loads a study's persona by name, with the spec's ``held_out`` chats held out of
    its prompt (the persona keeps its name, so conditions and reports read the same)."""

    def __init__(self, study: Study) -> None:
        self.study = study
        self._loaded: dict[str, Persona] = {}

    def __call__(self, name: str) -> Persona:
        if name not in self._loaded:
            self._loaded[name] = self._load(name)
        return self._loaded[name]

    def file(self, name: str) -> str:
        """What ``sdtt chat --persona`` is given for chats people hold: the persona's name,
        or with ``held_out`` the file of the persona as the study holds it (written into
        the study's output), so a person's chat prompts leave the held-out chats out too."""
        if self.study.spec.questionnaire.held_out is None:
            return name
        path = self.study.out / "personas" / f"{name}.jsonl"
        if not path.exists():
            save_persona(self(name), path)
        return str(path)

    def _load(self, name: str) -> Persona:
        persona = find_persona(name)
        spec = self.study.spec
        held_out = spec.questionnaire.held_out
        if held_out is None:
            return persona
        # The same window rule as the pairing: a human chat needs the bot's live turns.
        min_turns = max(x for _n, x in spec.design.turns)
        count = held_out_count(held_out, persona)
        try:
            return hold_out(
                persona, count, seed=spec.study.seed, min_turns=min_turns, name=persona.name
            )
        except InputError as error:
            raise InputError(
                error.problem,
                path=self.study.path,
                field="questionnaire.held_out",
                hint="Hold out fewer chats (held_out), or import more of the person's chats.",
            ) from None
