"""Validating millions of records of one pydantic model, most of them without pydantic.

Pydantic takes some 12 microseconds for a judgement record: more than reading it.
Records of one file differ in a few fields, and most fields ask only for a plain type.
A :class:`PlainCheck` accepts a record as it is when

- its keys are fields of the model (none missing that has no default),
- each field the model's validators do not read holds a value of the plain type the
  field asks for, which pydantic would return unchanged (``str``, ``bool``, ``int``,
  ``float``, optionally ``None``; a ``dict`` of text, or of anything), and
- the fields its validators read (``together``, and every field of another type) hold
  the same values, of the same types, as a record pydantic already accepted unchanged.

Any other record goes to pydantic, which accepts it (perhaps changing a value) or says
what is wrong with it: the outcome is pydantic's either way, only sooner.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

import annotated_types
from pydantic import BaseModel

Check = Callable[[Any], bool]
_PLAIN = {str: str, bool: bool, int: int, float: float}
_SEEN_LIMIT = 4096
"""Accepted combinations of the validators' fields kept (cleared when full)."""


def _plain(annotation: Any, metadata: list[Any]) -> Check | None:
    """A test that a value of ``annotation`` comes back from pydantic unchanged, or
    ``None`` when the annotation is not plain."""
    if any(not isinstance(item, annotated_types.Ge) for item in metadata):
        return None
    floor = next((item.ge for item in metadata), None)
    optional = False
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        arms = [arm for arm in typing.get_args(annotation) if arm is not type(None)]
        optional = len(arms) < len(typing.get_args(annotation))
        if len(arms) != 1:
            return None
        annotation = arms[0]
    if typing.get_origin(annotation) is dict:
        key, value = typing.get_args(annotation)
        if key is not str or value not in (str, Any):
            return None
        if value is str:
            return lambda v: (
                (v is None and optional)
                or (type(v) is dict and all(type(item) is str for item in v.values()))
            )
        return lambda v: (v is None and optional) or type(v) is dict
    kind = _PLAIN.get(annotation)
    if kind is None or (floor is not None and kind not in (int, float)):
        return None
    if floor is not None:
        return lambda v: (v is None and optional) or (type(v) is kind and v >= floor)
    return lambda v: (v is None and optional) or type(v) is kind


class PlainCheck:
    """Says whether a record (a JSON object) is valid as it is for ``model`` without
    asking pydantic each time (see the module docstring); ``together`` names the fields
    the model's own validators read."""

    def __init__(self, model: type[BaseModel], together: tuple[str, ...]) -> None:
        self.model = model
        fields = model.model_fields
        self.required = frozenset(name for name, field in fields.items() if field.is_required())
        self.checks: dict[str, Check] = {}
        keyed = list(together)
        for name, field in fields.items():
            check = None if name in together else _plain(field.annotation, field.metadata)
            if check is None:
                if name not in keyed:
                    keyed.append(name)
            else:
                self.checks[name] = check
        self.keyed = tuple(keyed)
        self.fields = frozenset(fields)
        self.defaults = {
            name: field.get_default(call_default_factory=True)
            for name, field in fields.items()
            if not field.is_required()
        }
        self._seen: set[tuple[Any, ...]] = set()

    def _key(self, record: Mapping[str, Any]) -> tuple[Any, ...] | None:
        key: list[Any] = []
        for name in self.keyed:
            value = record.get(name, _MISSING)
            if value is not None and type(value) not in _HASHABLE:
                return None
            key += (type(value), value)
        return tuple(key)

    def passes(self, record: Mapping[str, Any]) -> bool:
        """True when the record is valid and pydantic would keep every value as it is."""
        if not self.required <= record.keys() or not record.keys() <= self.fields:
            return False
        for name, check in self.checks.items():
            if name in record and not check(record[name]):
                return False
        key = self._key(record)
        return key is not None and key in self._seen

    def accepted(self, record: Mapping[str, Any], validated: BaseModel) -> None:
        """Note a record pydantic accepted (as ``validated``): records with the same
        values in the validators' fields pass from now on, if none of them changed."""
        key = self._key(record)
        if key is None:
            return
        for name in self.keyed:
            value = record.get(name, self.defaults.get(name, _MISSING))
            kept = getattr(validated, name)
            if type(kept) is not type(value) or kept != value:
                return
        if len(self._seen) >= _SEEN_LIMIT:
            self._seen.clear()
        self._seen.add(key)

    def full(self, record: Mapping[str, Any]) -> dict[str, Any]:
        """A passing record with every field, defaults filled in (as ``model_dump``)."""
        return {**self.defaults, **record}


class _Missing:
    """A field the record does not have."""


_MISSING = _Missing()
_HASHABLE = (str, bool, int, float, _Missing)
