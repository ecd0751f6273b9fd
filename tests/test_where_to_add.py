"""ARCHITECTURE.md's "Where to add" lists stay true: every file and folder they name
exists, every registry, class and constant they name is defined in sdtt, and each
``<name>`` pattern holds for every entry of its registry (a command's two modules, a
batch provider's modules, a survey tool's one module)."""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest

import sdtt
from sdtt.cli import COMMANDS
from sdtt.models.registry import PROVIDERS
from sdtt.surveys.tool import SurveyTool
from sdtt.surveys.tools import MODULES, TOOLS

PACKAGE = Path(sdtt.__file__).parent
ROOT = PACKAGE.parent
SECTION = re.compile(r"^## Where to add\n(.*?)^## ", re.M | re.S)
PACKAGES = (
    "commands",
    "judges",
    "questionnaires",
    "single",
    "models",
    "personas",
    "align",
    "surveys",
    "tasks",
)
"""Folders of sdtt that the lists name without the leading ``sdtt/``."""


def section() -> str:
    found = SECTION.search((ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8"))
    assert found, "ARCHITECTURE.md has no 'Where to add' section"
    return found.group(1)


def quoted() -> list[str]:
    return re.findall(r"`([^`\n]+)`", section())


def path_of(text: str) -> Path | None:
    """The file or folder a quoted ``text`` names, or None when it names none."""
    if "<" in text or " " in text or "(" in text or not re.search(r"\.py$|/$", text):
        return None
    if text.startswith(("sdtt/", "tests/")):
        return ROOT / text
    if text.split("/")[0] in PACKAGES:
        return PACKAGE / text
    return None


@cache
def defined_names() -> frozenset[str]:
    """Every class, function and module-level or class-level name assigned in sdtt."""
    names: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                names.add(node.name)
            elif isinstance(node, ast.Assign):
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names.add(node.target.id)
    return frozenset(names)


def test_every_file_and_folder_the_lists_name_exists() -> None:
    named = [text for text in quoted() if path_of(text) is not None]
    assert len(named) > 20, named  # the lists name files: this test reads them
    missing = [text for text in named if not path_of(text).exists()]  # type: ignore[union-attr]
    assert missing == [], f"ARCHITECTURE.md's 'Where to add' names files that are gone: {missing}"


def test_every_registry_class_and_constant_the_lists_name_is_defined() -> None:
    identifier = re.compile(r"^(?:[A-Z][A-Z0-9_]+|[A-Z][a-z]+[A-Za-z0-9]*)$")
    named = {text.split(".")[0] for text in quoted() if identifier.match(text.split(".")[0])}
    assert {"PROVIDERS", "TOOLS", "COMMANDS", "JUDGE_KINDS", "SurveyTool"} <= named
    missing = sorted(named - defined_names())
    assert missing == [], f"ARCHITECTURE.md's 'Where to add' names what sdtt lacks: {missing}"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_each_command_has_its_parser_module_and_its_code_module(command: str) -> None:
    stem = command.replace("-", "_")
    for name in (f"{stem}_parser.py", f"{stem}.py"):
        assert (PACKAGE / "commands" / name).is_file(), f"sdtt {command}: no commands/{name}"


def test_each_provider_with_a_batch_api_has_the_named_modules() -> None:
    batched = [provider for provider in PROVIDERS.values() if provider.batch]
    assert batched, "no provider has a batch API: the list describes none"
    for provider in batched:
        assert provider.module == f"sdtt.models.{provider.name}_api", provider
        assert provider.batch == f"sdtt.models.{provider.name}_batch", provider
        for module in (provider.module, provider.batch):
            importlib.import_module(module)


SHARED_SURVEY_MODULES = frozenset({"__init__", "tool", "tools", "answer_files", "check"})
"""The modules of ``sdtt/surveys/`` that belong to no one tool."""


def tool_callables(tool: SurveyTool) -> list[Callable[..., object]]:
    """Everything a tool's record calls: its writers and its readers."""
    parts: list[Callable[..., object] | None] = [tool.write, tool.read]
    if tool.reveal is not None:
        parts.append(tool.reveal.write)
    for kind in (tool.rating, tool.single):
        if kind is not None:
            parts += [kind.write, kind.read]
    return [part for part in parts if part is not None]


def test_each_survey_tool_is_one_module_of_surveys_that_the_registry_lists() -> None:
    modules = {module.__name__: module for module in MODULES}
    for tool in TOOLS.values():
        homes = {part.__module__ for part in tool_callables(tool)}
        assert len(homes) == 1, f"survey tool {tool.name} is spread over {sorted(homes)}"
        (home,) = homes
        assert home in modules, f"survey tool {tool.name}: {home} is not in MODULES"
        assert tool in modules[home].ENTRIES, f"{home} does not list {tool.name} in ENTRIES"
    files = {path.stem for path in (PACKAGE / "surveys").glob("*.py")}
    tools = {name.rsplit(".", 1)[1] for name in modules}
    assert files - SHARED_SURVEY_MODULES == tools, "a module of sdtt/surveys/ is not in MODULES"
