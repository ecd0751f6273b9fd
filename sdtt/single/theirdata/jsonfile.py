"""Reading their JSON files, with errors that name the line of the offending key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sdtt.errors import InputError


def load_json(path: str | Path) -> tuple[Any, str]:
    """The parsed JSON of ``path`` and its text; malformed JSON names its line."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except OSError as error:
        raise InputError(f"cannot read the file ({error.strerror}).", path=path) from None
    except UnicodeDecodeError:
        raise InputError("the file is not UTF-8 text.", path=path) from None
    try:
        return json.loads(text), text
    except json.JSONDecodeError as error:
        raise InputError(
            f"the file is not valid JSON ({error.msg}).", path=path, line=error.lineno
        ) from None


def key_line(text: str, key: str, start: int = 0) -> int | None:
    """The line on which ``"key":`` first appears at or after character ``start`` (None
    when not found); good enough to point a reader at the entry."""
    needle = json.dumps(key)
    at = text.find(needle, start)
    while at != -1:
        rest = text[at + len(needle) :].lstrip()
        if rest.startswith(":"):
            return text.count("\n", 0, at) + 1
        at = text.find(needle, at + 1)
    return None


def need_object(value: Any, path: str | Path, shape: str) -> dict[str, Any]:
    """``value`` when it is a JSON object; else an error saying the expected ``shape``."""
    if not isinstance(value, dict):
        raise InputError(
            f"expected a JSON object {shape}, found {type(value).__name__}.", path=path, line=1
        )
    return value
