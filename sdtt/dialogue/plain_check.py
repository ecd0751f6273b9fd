"""Validating millions of records of one pydantic model, most of them without pydantic.

Pydantic takes some 12 microseconds for a judgement record: more than reading it.
Records of one file differ in a few fields, and most fields ask only for a plain type.
A :class:`PlainCheck` accepts a record as it is when

- its keys are fields of the model (none missing that has no default),
- each field the model's validators do not read holds a value of the plain type the
  field asks for, which pydantic would return unchanged (``str``, ``bool``, ``int``,
  ``float``, optionally ``None``; a ``dict`` of text, or of anything), or, for a field
  of a nested model, a value written exactly as one pydantic already accepted unchanged
  (what a judge was shown repeats across a file's records), and
- the fields its validators read (``together``, and every field of another type) hold
  the same values, of the same types, as a record pydantic already accepted unchanged.

Any other record goes to pydantic, which accepts it (perhaps changing a value) or says
what is wrong with it: the outcome is pydantic's either way, only sooner.
"""

from __future__ import annotations

import operator
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

import annotated_types
import orjson
from pydantic import BaseModel

Check = Callable[[Any], bool]
_PLAIN = {str: str, bool: bool, int: int, float: float}
_SEEN_LIMIT = 4096
"""Accepted combinations of the validators' fields kept (cleared when full)."""
_NESTED_LIMIT = 1 << 16
"""Accepted values of a nested model's field kept (cleared when full): a study has one
per pair and order shown."""


def _nested(annotation: Any) -> bool:
    """Whether ``annotation`` is a pydantic model, or one or ``None``."""
    arms = [arm for arm in typing.get_args(annotation) if arm is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and len(arms) == 1:
        annotation = arms[0]
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _plain(annotation: Any, metadata: list[Any]) -> tuple[Check, bool] | None:
    """A test that a value of ``annotation`` comes back from pydantic unchanged, and
    whether it reads only the value's type; ``None`` when the annotation is not plain."""
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
            return (
                lambda v: (
                    (v is None and optional)
                    or (type(v) is dict and all(type(item) is str for item in v.values()))
                ),
                False,
            )
        return (lambda v: (v is None and optional) or type(v) is dict), True
    kind = _PLAIN.get(annotation)
    if kind is None or (floor is not None and kind not in (int, float)):
        return None
    if floor is not None:
        return (lambda v: (v is None and optional) or (type(v) is kind and v >= floor)), False
    return (lambda v: (v is None and optional) or type(v) is kind), True


class _Plan:
    """What is left to check of records of one shape (their keys and the types of their
    values, in order): the checks that read a value, not only its type, and how to read
    the validators' fields."""

    def __init__(self, value_checks: list[tuple[str, Check]], keyed: tuple[Any, ...]) -> None:
        self.value_checks = value_checks
        self.signature, names = keyed
        if not names:
            self.values: Callable[[Mapping[str, Any]], tuple[Any, ...]] = lambda record: ()
        elif len(names) == 1:
            name = names[0]
            self.values = lambda record: (record[name],)
        else:
            self.values = operator.itemgetter(*names)


class PlainCheck:
    """Says whether a record (a JSON object) is valid as it is for ``model`` without
    asking pydantic each time (see the module docstring); ``together`` names the fields
    the model's own validators read.

    What only depends on a record's shape (which keys, values of which types) is worked
    out once per shape, so a record of a known shape costs a dictionary look-up or two.
    """

    def __init__(self, model: type[BaseModel], together: tuple[str, ...]) -> None:
        self.model = model
        fields = model.model_fields
        self.required = frozenset(name for name, field in fields.items() if field.is_required())
        self.checks: dict[str, tuple[Check, bool]] = {}
        self.nested: dict[str, set[bytes]] = {}
        keyed = list(together)
        for name, field in fields.items():
            found = None if name in together else _plain(field.annotation, field.metadata)
            if found is None and name not in together and _nested(field.annotation):
                seen = self.nested[name] = set()
                found = (self._nested_check(seen, field.default is None), False)
            if found is None:
                if name not in keyed:
                    keyed.append(name)
            else:
                self.checks[name] = found
        self.keyed = tuple(keyed)
        self.fields = frozenset(fields)
        self.defaults = {
            name: _dumped(field.get_default(call_default_factory=True))
            for name, field in fields.items()
            if not field.is_required()
        }
        self._seen: set[tuple[Any, ...]] = set()
        self._plans: dict[tuple[Any, ...], _Plan | None] = {}

    @staticmethod
    def _nested_check(seen: set[bytes], optional: bool) -> Check:
        """A nested model's value passes when written as one accepted unchanged before."""

        def check(value: Any) -> bool:
            if value is None:
                return optional
            if type(value) is not dict:
                return False
            try:
                return orjson.dumps(value) in seen
            except TypeError:  # an integer past 64 bits: the model says what is wrong
                return False

        return check

    def _keyed(self, record: Mapping[str, Any]) -> tuple[Any, ...] | None:
        """The validators' fields of ``record``: their types (a missing one as
        ``_Missing``) and the names of those present; ``None`` when one holds a value
        that cannot be compared as it is (a list, a dict)."""
        types = []
        names = []
        for name in self.keyed:
            if name in record:
                kind = type(record[name])
                if kind is not type(None) and kind not in _HASHABLE:
                    return None
                names.append(name)
            else:
                kind = _Missing
            types.append(kind)
        return tuple(types), tuple(names)

    def _plan(self, record: Mapping[str, Any]) -> _Plan | None:
        """The plan for records shaped as ``record``, or ``None`` when no record of this
        shape is valid as it is."""
        if not self.required <= record.keys() or not record.keys() <= self.fields:
            return None
        value_checks = []
        for name, (check, by_type) in self.checks.items():
            if name not in record:
                continue
            if by_type:
                if not check(record[name]):
                    return None
            else:
                value_checks.append((name, check))
        keyed = self._keyed(record)
        return None if keyed is None else _Plan(value_checks, keyed)

    def passes(self, record: Mapping[str, Any]) -> bool:
        """True when the record is valid and pydantic would keep every value as it is."""
        shape = (tuple(record), tuple(map(type, record.values())))
        plan = self._plans.get(shape, _UNPLANNED)
        if plan is _UNPLANNED:
            if len(self._plans) >= _SEEN_LIMIT:
                self._plans.clear()
            plan = self._plans[shape] = self._plan(record)
        if plan is None:
            return False
        for name, check in plan.value_checks:
            if not check(record[name]):
                return False
        return (plan.signature, plan.values(record)) in self._seen

    def accepted(self, record: Mapping[str, Any], validated: BaseModel) -> None:
        """Note a record pydantic accepted (as ``validated``): records with the same
        values in the validators' fields pass from now on, if none of them changed."""
        for name, seen in self.nested.items():
            value = record.get(name)
            kept = getattr(validated, name)
            if type(value) is dict and isinstance(kept, BaseModel):
                try:
                    written = orjson.dumps(value)
                except TypeError:  # an integer past 64 bits: validated every time
                    continue
                if written == orjson.dumps(kept.model_dump()):
                    if len(seen) >= _NESTED_LIMIT:
                        seen.clear()
                    seen.add(written)
        keyed = self._keyed(record)
        if keyed is None:
            return
        for name in self.keyed:
            value = record.get(name, self.defaults.get(name, _MISSING))
            kept = getattr(validated, name)
            if type(kept) is not type(value) or kept != value:
                return
        if len(self._seen) >= _SEEN_LIMIT:
            self._seen.clear()
        signature, names = keyed
        self._seen.add((signature, tuple(record[name] for name in names)))

    def full(self, record: Mapping[str, Any]) -> dict[str, Any]:
        """A passing record with every field, defaults filled in (as ``model_dump``)."""
        return {**self.defaults, **record}


def _dumped(value: Any) -> Any:
    """A default as ``model_dump`` gives it (a nested model as the dict of its fields)."""
    return value.model_dump() if isinstance(value, BaseModel) else value


class _Missing:
    """A field the record does not have."""


_MISSING = _Missing()
_HASHABLE = (str, bool, int, float)
_UNPLANNED: Any = object()
