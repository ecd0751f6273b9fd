"""Opaque, seeded ids: they tell a judge nothing and a researcher can rebuild them."""

from __future__ import annotations

import random
from collections.abc import Collection, Iterable
from typing import Protocol, TypeVar

from sdtt.errors import InputError

# No vowels that could spell words, no look-alikes (0/o, 1/l/i).
ALPHABET = "bcdfghjkmnpqrstvwxz23456789"
ID_LENGTH = 7


class OpaqueIds:
    """Draws unique ids from a seeded random generator."""

    def __init__(self, rng: random.Random, *, taken: Collection[str] = ()) -> None:
        self._rng = rng
        self._taken = {name.lower() for name in taken}

    def new(self, prefix: str = "p") -> str:
        """A fresh id: ``prefix`` and random characters, never one handed out before."""
        while True:
            candidate = prefix + "".join(
                self._rng.choice(ALPHABET) for _ in range(ID_LENGTH - len(prefix))
            )
            if candidate not in self._taken:
                self._taken.add(candidate)
                return candidate


class _Named(Protocol):
    @property
    def id(self) -> str: ...


Named = TypeVar("Named", bound=_Named)


def by_id(entries: Iterable[Named], wanted: str, *, kind: str, where: str) -> Named:
    """The entry whose ``id`` is ``wanted``; an :class:`InputError` naming the ``kind``
    field and ``where`` it was looked for when there is none."""
    for entry in entries:
        if entry.id == wanted:
            return entry
    raise InputError(f"{kind} {wanted!r} is not in this {where}.", field=kind)
