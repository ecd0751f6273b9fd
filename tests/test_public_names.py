"""Modules use each other through public names, and commands use ``sdtt serve`` through
its package's face (:data:`sdtt.serve.__all__`).

A leading underscore says "only this module relies on it": a change to such a name must
not break another module silently. Read with :mod:`ast`, nothing imported.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import sdtt.serve

PACKAGE = Path(__file__).resolve().parent.parent / "sdtt"

ALLOWED = {
    # The PostgreSQL store is the SQLite store's SQL over another driver: one class, two
    # modules of one package.
    ("sdtt.serve.pgstore", "sdtt.serve.store", "_SqlStore"),
}


def _imports() -> Iterator[tuple[str, str, str]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sdtt"):
                for alias in node.names:
                    yield module, node.module or "", alias.name


def test_no_module_imports_a_private_name_of_another() -> None:
    private = {
        found for found in _imports() if found[2].startswith("_") and not found[2].startswith("__")
    }
    assert private <= ALLOWED


def test_commands_use_serve_through_its_package() -> None:
    reached = [
        (module, source)
        for module, source, _ in _imports()
        if module.startswith("sdtt.commands.") and source.startswith("sdtt.serve.")
    ]
    assert reached == []
    for name in sdtt.serve.__all__:
        assert getattr(sdtt.serve, name) is not None
