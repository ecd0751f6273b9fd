"""Reading input files, with errors that name the file (and line) and say what to do."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Any

from sdtt.errors import InputError


def read_file_bytes(path: Path, *, what: str = "file") -> bytes:
    """The bytes of ``path``; a missing or unreadable file is an :class:`InputError`.

    ``what`` names the file in the message (``"study spec"`` gives "study spec not
    found.").
    """
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{what} not found.", path=path) from None
    except OSError as error:
        raise InputError(f"cannot read the {what} ({error.strerror}).", path=path) from None


def load_settings_file(path: Path, *, what: str, toml_hint: str | None = None) -> Any:
    """The parsed content of a ``.json`` file, or of a TOML file (any other suffix).

    ``what`` names the file when it is missing or unreadable; ``toml_hint`` follows a
    TOML syntax error.
    """
    raw = read_file_bytes(path, what=what)
    try:
        text = raw.decode("utf-8-sig")
        return json.loads(text) if path.suffix.lower() == ".json" else tomllib.loads(text)
    except UnicodeDecodeError:
        raise InputError("is not UTF-8 text.", path=path) from None
    except json.JSONDecodeError as error:
        raise InputError(
            f"is not valid JSON ({error.msg}).", path=path, line=error.lineno
        ) from None
    except tomllib.TOMLDecodeError as error:
        raise InputError(f"is not valid TOML ({error}).", path=path, hint=toml_hint) from None


def write_text_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8) all at once.

    The text goes to ``<name>.partial`` next to it and is renamed into place, so a kill
    leaves either the old file or the new one, never half of either.
    """
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)
