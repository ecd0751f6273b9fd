"""Every folder of Python modules under sdtt/ is a regular package (has ``__init__.py``).

A folder without one is a namespace package: mkdocstrings cannot document it, and an
editable install resolves ``sdtt.personas`` through whatever ``sdtt`` folder comes first.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_folder_of_modules_has_an_init() -> None:
    folders = {path.parent for path in (ROOT / "sdtt").rglob("*.py")}
    missing = sorted(
        str(folder.relative_to(ROOT))
        for folder in folders
        if not (folder / "__init__.py").is_file() and "__pycache__" not in folder.parts
    )
    assert not missing, f"no __init__.py in {missing}"
