"""pyproject.toml declares each runtime dependency once, and only those sdtt imports."""

from __future__ import annotations

import ast
import re
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _name(requirement: str) -> str:
    bare = re.match(r"[A-Za-z0-9._-]+", requirement.strip())
    assert bare, requirement
    return re.sub(r"[-_.]+", "-", bare.group()).lower()


def _dependencies() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [_name(requirement) for requirement in project["dependencies"]]


def test_no_dependency_is_listed_twice() -> None:
    names = _dependencies()
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


def test_every_dependency_is_imported_by_sdtt() -> None:
    imported: set[str] = set()
    for path in (ROOT / "sdtt").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imported.add(node.module.split(".")[0])
            elif (  # importlib.import_module("...") of an optional backend
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and re.fullmatch(r"[a-z_][a-z0-9_]*(\.[a-z0-9_]+)*", node.value)
            ):
                imported.add(node.value.split(".")[0])
    providers = packages_distributions()
    used = {_name(dist) for module in imported for dist in providers.get(module, [])}
    unused = sorted(set(_dependencies()) - used)
    assert not unused, f"declared in pyproject.toml but imported nowhere in sdtt/: {unused}"
