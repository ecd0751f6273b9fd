"""The one seed rule: every random draw of sdtt comes from a seed and a purpose.

A condition records one seed (:attr:`~sdtt.dialogue.condition.Condition.seed`). Whatever
else needs a seed (the simulated interrogator, a room of a live study, a pseudo-dialogue
call, an LLM participant) gets :func:`derive_seed` of it and the names of its role, and
every random stream is :func:`seeded_rng` of a seed and the names of its purpose. Names
are joined with ``:``, so ``seeded_rng(7, "order")`` is ``random.Random("7:order")``;
a numpy stream is :func:`seeded_generator`. No other module makes a random stream
(``tests/dialogue/test_seeds.py`` reads the source to hold that).
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

SEED_RANGE = 2**31
"""Derived seeds lie in ``[0, SEED_RANGE)``: every provider takes them."""


def seeded_rng(seed: int | str, *purpose: object) -> random.Random:
    """The random stream of ``purpose`` under ``seed`` (the same on every run and machine;
    a file's own id may stand for the seed, e.g. a questionnaire's)."""
    return random.Random(":".join(str(part) for part in (seed, *purpose)))


def derive_seed(seed: int, *role: object) -> int:
    """The seed of ``role`` under ``seed``: ``seed`` itself for no role, else a number
    drawn from :func:`seeded_rng` (``derive_seed(7, "interrogator")``,
    ``derive_seed(7, "room", 3)``). Different roles get unrelated seeds."""
    if not role:
        return seed
    return seeded_rng(seed, *role).randrange(SEED_RANGE)


def seeded_generator(seed: int, *purpose: object) -> np.random.Generator:
    """numpy's random stream of ``purpose`` under ``seed``: ``numpy.random.default_rng``
    of :func:`derive_seed` (of ``seed`` itself for no purpose, as the statistics do, each
    handed a seed derived for its role)."""
    import numpy as np  # only the statistics need numpy

    return np.random.default_rng(derive_seed(seed, *purpose))
