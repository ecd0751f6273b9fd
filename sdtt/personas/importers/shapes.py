"""The shape checks of JSON exports: pydantic models, and their errors as one-line InputErrors.

Each JSON format describes its export with :class:`ExportModel` subclasses (strict: a
number is not text, ``true`` is not a number); :func:`validate` checks a parsed document
against one and turns the first problem into an :class:`~sdtt.errors.InputError` naming
the file and the field path, e.g. ``messages[12].from_id``. A validator that needs its own
wording raises :func:`shape_error`.
"""

from __future__ import annotations

from collections.abc import Hashable
from functools import cache
from pathlib import Path
from typing import Any, TypeVar, cast

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError
from pydantic_core import ErrorDetails, PydanticCustomError

from sdtt.errors import InputError

T = TypeVar("T")

SHAPE_HINT = "Is this the right export format?"
_CUSTOM = "sdtt_shape"
_NUMBER_ERRORS = {"int_type", "int_parsing", "int_from_float", "float_type", "float_parsing"}
_OBJECT_ERRORS = {"model_type", "model_attributes_type", "dict_type"}


class ExportModel(BaseModel):
    """Base of the export models: strict JSON types; keys the model does not name are ignored."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


def shape_error(message: str, *, subpath: str = "") -> PydanticCustomError:
    """A validation error worded by the format; ``subpath`` (``"[4]"``) extends the field."""
    return PydanticCustomError(_CUSTOM, "{message}", {"message": message, "subpath": subpath})


def json_type(value: Any) -> str:
    """The JSON name of ``value``'s type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


@cache
def _adapter(schema: Hashable) -> TypeAdapter[Any]:
    return TypeAdapter(cast(Any, schema))


def validate(schema: type[T], value: Any, path: str | Path, *, where: str = "") -> T:
    """``value`` validated as ``schema`` (a model or a type such as ``list[Model]``).

    ``where`` is the field path of ``value`` in the file (empty for the whole document).
    """
    try:
        result: T = _adapter(cast(Hashable, schema)).validate_python(value)
    except ValidationError as error:
        raise _input_error(error.errors()[0], path, where) from None
    return result


def field_path(where: str, loc: tuple[int | str, ...]) -> str:
    """``where`` extended by a pydantic location.

    ``messages`` and ``(3, "date")`` give ``messages[3].date``.
    """
    text = where
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text = f"{text}.{part}" if text else part
    return text


def _input_error(error: ErrorDetails, path: str | Path, where: str) -> InputError:
    kind = error["type"]
    value = error.get("input")
    ctx = error.get("ctx") or {}
    field = field_path(where, tuple(error["loc"]))
    if kind == _CUSTOM:
        field += str(ctx.get("subpath", ""))
        problem = str(ctx.get("message", ""))
        return InputError(problem, path=path, field=field or "(top level)", hint=SHAPE_HINT)
    if kind == "missing" or (kind == "string_type" and value is None):
        problem = "is missing."
    elif kind in _OBJECT_ERRORS:
        problem = f"should be an object, not {json_type(value)}."
    elif kind == "list_type":
        problem = f"should be a list, not {json_type(value)}."
    elif kind == "string_type":
        problem = f"should be text, not {json_type(value)}."
    elif kind in _NUMBER_ERRORS:
        problem = f"should be a number, not {json_type(value)}."
    elif kind == "bool_type":
        problem = f"should be true or false, not {json_type(value)}."
    else:
        problem = f"is not valid ({error['msg']})."
    return InputError(problem, path=path, field=field or "(top level)", hint=SHAPE_HINT)
