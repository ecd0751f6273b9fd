"""Every import in ``sdtt/`` points down the layers, no module imports itself through
others, and only the command layer owns the terminal: argparse, ``trio.run`` and Rich
consoles.

The imports are read with :mod:`ast`, so nothing is imported to check them. Imports inside
functions, ``importlib.import_module("sdtt....")`` and imports under ``if TYPE_CHECKING``
count too: a circle that only type checkers or a lazy import see is still a circle for a
reader, who cannot understand either module without the other. ARCHITECTURE.md shows the
same table: change both.
"""

from __future__ import annotations

import ast
import functools
import itertools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "sdtt"

LAYERS: tuple[tuple[str, ...], ...] = (
    ("__main__",),
    ("cli",),
    ("commands",),
    ("study",),
    ("align", "results", "single"),
    ("analysis", "judges", "serve", "ui"),
    ("beliefs", "engine", "questionnaires"),
    ("generate", "surveys"),
    ("display", "personas", "tasks"),
    ("dialogue", "models"),
    ("jsonl",),
    ("__init__", "files", "lock"),
    ("closing", "errors", "redact", "seeds", "spreadsheet", "templates"),
)
"""The layers, top first. A module may import its own package and any package of a lower
row; packages on one row are peers and import none of each other. A package is a folder
of ``sdtt/`` (its sub-packages included) or one of the modules at the root of ``sdtt/``
(``__init__`` is ``sdtt`` itself, e.g. ``from sdtt import __version__``).

Every package sits as low as its imports allow: directly above a package it imports
(:data:`REASONS` names the import). So a row is not an order among its packages, which
are independent of each other, and the rows are exactly the levels of the import graph."""

REASONS: dict[str, tuple[str, str]] = {
    # package: (its module, the module on the row just below that it imports)
    "__main__": ("sdtt.__main__", "sdtt.cli"),  # the console script runs the command line
    "cli": ("sdtt.cli", "sdtt.commands"),  # builds the parser from the command modules
    "commands": ("sdtt.commands.study", "sdtt.study.runner"),  # sdtt study runs a study
    "study": ("sdtt.study.runner", "sdtt.align.llm"),  # a study's LLM cohorts
    "align": ("sdtt.align.llm", "sdtt.judges.llm"),  # LLM raters ask as LLM judges do
    "single": ("sdtt.single.scoring", "sdtt.analysis.metrics"),  # detectability's confusion
    "results": ("sdtt.results", "sdtt.analysis.table"),  # judgements as sdtt score reads them
    "analysis": ("sdtt.analysis.beliefs", "sdtt.beliefs.traces"),  # reports on belief traces
    "judges": ("sdtt.judges.reveal", "sdtt.beliefs.traces"),  # reveal judges write traces
    "serve": ("sdtt.serve.market_room", "sdtt.beliefs.market"),  # live market rooms
    "beliefs": ("sdtt.beliefs.reveal_import", "sdtt.surveys.tools"),  # reveal-mode answers
    "ui": ("sdtt.ui.chat_setup", "sdtt.engine.session"),  # the chat UI drives a session
    "engine": ("sdtt.engine.opening", "sdtt.generate.chainfile"),  # opens pseudo-dialogues
    "generate": ("sdtt.generate.runner", "sdtt.personas.persona"),  # chains of a persona
    "questionnaires": ("sdtt.questionnaires.exports", "sdtt.surveys.tools"),  # every tool's files
    "surveys": ("sdtt.surveys.tool", "sdtt.tasks.questionnaire"),  # tools write the tasks
    "tasks": ("sdtt.tasks.questionnaire", "sdtt.dialogue.condition"),  # a task holds its condition
    "display": ("sdtt.display", "sdtt.dialogue.render"),  # shows conversations
    "personas": ("sdtt.personas.bot", "sdtt.dialogue.parse"),  # the bot parses model output
    "dialogue": ("sdtt.dialogue.store", "sdtt.jsonl"),  # records are JSONL lines
    "jsonl": ("sdtt.jsonl", "sdtt.files"),  # reads its files through the file helpers
    "__init__": ("sdtt", "sdtt.errors"),  # exports SdttError
    "files": ("sdtt.files", "sdtt.errors"),  # names the file in its errors
    "lock": ("sdtt.lock", "sdtt.redact"),  # redacts the holder's command line
    "models": ("sdtt.models.batch_ledger", "sdtt.jsonl"),  # the batch ledger is a JSONL file
}
"""Why each package is not a row lower: one real import (checked) of a package on the row
just below it. The bottom row imports no other package of sdtt, so it needs none."""

TERMINAL_OWNERS = frozenset({"__main__", "cli", "commands", "ui"})
"""The packages that may parse a command line, run trio and build Rich consoles."""

TERMINAL_CALLS = {"trio.run": "runs trio", "rich.console.Console": "builds a Rich console"}

KNOWN_EXCEPTIONS: dict[tuple[str, str], str] = {
    # run_on_virtual_clock: the one-line way to run a simulated chat on the engine's
    # VirtualClock from a notebook, a test or a command; it takes and returns values.
    ("sdtt.engine.simulate", "runs trio"): "library entry point",
    # A separate program with its own command line (python -m sdtt.models.llama_server),
    # documented in the README: it stays where it is.
    ("sdtt.models.llama_server", "imports argparse"): "entry point",
}
"""Deliberate exceptions, each with its reason. The test fails on entries that no longer
occur, so the list cannot go stale."""


@dataclass(frozen=True)
class Module:
    """One module of the package, read without importing it."""

    name: str
    path: Path
    tree: ast.Module

    @property
    def package(self) -> str:
        """The name of its row entry in :data:`LAYERS`."""
        return package_of(self.name)


@dataclass(frozen=True)
class Import:
    """One imported module, with the line that imports it."""

    target: str
    line: int


def package_of(name: str) -> str:
    """The :data:`LAYERS` entry of a module: ``sdtt.engine.session`` -> ``engine``,
    ``sdtt.errors`` -> ``errors``, ``sdtt`` -> ``__init__``."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


@functools.cache
def modules() -> tuple[Module, ...]:
    """Every module of ``sdtt/``."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found.append(Module(".".join(parts), path, ast.parse(path.read_text(encoding="utf-8"))))
    return tuple(found)


def imports(module: Module, known: set[str]) -> Iterator[Import]:
    """Every module ``module`` imports, names resolved against the ``known`` modules
    (``from sdtt import errors`` imports ``sdtt.errors``), lazy imports by name included
    (``importlib.import_module(f"sdtt.commands.{name}")`` imports ``sdtt.commands``)."""
    bound = aliases(module)
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.name.split(".")
                if module.path.name != "__init__.py":
                    package = package[:-1]
                package = package[: len(package) - node.level + 1]
                base = ".".join([*package, *([base] if base else [])])
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                yield Import(submodule if submodule in known else base, node.lineno)
        elif isinstance(node, ast.Call) and node.args:
            name = dotted(node.func)
            head, _, rest = (name or "").partition(".")
            if bound.get(head, head) + (f".{rest}" if rest else "") != "importlib.import_module":
                continue
            named = _leading_text(node.args[0])
            # The longest known module the name starts with: "sdtt.commands." for any command.
            parts = named.split(".")
            for end in range(len(parts), 0, -1):
                candidate = ".".join(parts[:end])
                if candidate in known:
                    yield Import(candidate, node.lineno)
                    break


def _leading_text(node: ast.expr) -> str:
    """The constant start of a string or f-string argument ("" for anything else)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values:
        return _leading_text(node.values[0])
    return ""


def aliases(module: Module) -> dict[str, str]:
    """Local names bound by imports, mapped to the dotted names they stand for."""
    bound: dict[str, str] = {}
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    bound[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return bound


def dotted(node: ast.expr) -> str | None:
    """``a.b.c`` for a name or attribute chain, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = dotted(node.value)
        return f"{head}.{node.attr}" if head else None
    return None


def terminal_uses(module: Module) -> Iterator[tuple[str, int]]:
    """What ``module`` does that only the command layer may do, with the line."""
    bound = aliases(module)
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
            )
            if any(name.split(".")[0] == "argparse" for name in names):
                yield "imports argparse", node.lineno
        elif isinstance(node, ast.Call):
            name = dotted(node.func)
            if name is None:
                continue
            head, _, rest = name.partition(".")
            resolved = bound.get(head, head) + (f".{rest}" if rest else "")
            if resolved in TERMINAL_CALLS:
                yield TERMINAL_CALLS[resolved], node.lineno


def rank(package: str) -> int:
    """The row of ``package`` in :data:`LAYERS` (0 at the top)."""
    for index, row in enumerate(LAYERS):
        if package in row:
            return index
    raise AssertionError(f"sdtt/{package} is in no layer: add it to LAYERS in {__file__}")


Graph = Mapping[str, Mapping[str, int]]
"""Module name -> the modules of sdtt it imports, each with the first line importing it."""


def graph_of(found: tuple[Module, ...]) -> dict[str, dict[str, int]]:
    """The import graph of ``found`` (modules outside it, and a module's own name, left out:
    ``sdtt.models`` loads its submodules by name, which resolves to itself)."""
    known = {module.name for module in found}
    graph: dict[str, dict[str, int]] = {}
    for module in found:
        edges = graph.setdefault(module.name, {})
        for imported in imports(module, known):
            if imported.target in known and imported.target != module.name:
                edges[imported.target] = min(
                    edges.get(imported.target, imported.line), imported.line
                )
    return graph


@functools.cache
def import_graph() -> dict[str, dict[str, int]]:
    """The import graph of ``sdtt/``."""
    return graph_of(modules())


def circles(graph: Graph) -> list[list[str]]:
    """One circle (``[a, b, ..., a]``) for each group of modules that import each other,
    found as the strongly connected components of ``graph`` (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in sorted(graph.get(module, {})):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group = {stack.pop()}
            while module not in group:
                group.add(stack.pop())
            if len(group) > 1:
                found.append(_circle_through(min(group), group, graph))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def _circle_through(start: str, group: set[str], graph: Graph) -> list[str]:
    """The shortest way from ``start`` back to itself inside ``group`` (breadth first)."""
    previous: dict[str, str] = {}
    queue = [start]
    for module in queue:
        for target in sorted(graph.get(module, {})):
            if target == start:
                path = [module]
                while path[-1] != start:
                    path.append(previous[path[-1]])
                return [*reversed(path), start]
            if target in group and target not in previous:
                previous[target] = module
                queue.append(target)
    raise AssertionError(f"{start} is in no circle of {sorted(group)}")


def reason_problems(
    layers: tuple[tuple[str, ...], ...], reasons: Mapping[str, tuple[str, str]], graph: Graph
) -> list[str]:
    """What is wrong with ``reasons``: a package above the bottom row without one, one that
    names an import that does not exist, or one whose import is not of the row just below."""
    row = {package: number for number, packages in enumerate(layers) for package in packages}
    problems = [
        f"{package}: no entry in REASONS saying which import of the row below keeps it on "
        "its row; if it imports nothing there, move it down a row"
        for package in row
        if package not in layers[-1] and package not in reasons
    ]
    for package, (importer, imported) in reasons.items():
        if package not in row or package in layers[-1]:
            problems.append(f"{package}: drop from REASONS, it is not above the bottom row")
        elif package_of(importer) != package:
            problems.append(f"{package}: its reason names {importer}, a module of another package")
        elif imported not in graph.get(importer, {}):
            problems.append(
                f"{package}: its reason is false, {importer} does not import {imported}"
            )
        elif row.get(package_of(imported)) != row[package] + 1:
            problems.append(
                f"{package}: its reason, {importer} imports {imported}, is not an import of "
                "the row just below it"
            )
    return problems


def test_every_package_has_a_layer() -> None:
    packages = {module.package for module in modules()}
    listed = {package for row in LAYERS for package in row}
    assert not packages - listed, f"add these to LAYERS: {sorted(packages - listed)}"
    assert not listed - packages, f"no longer in sdtt/, drop from LAYERS: {listed - packages}"


def test_every_import_points_down_the_layers() -> None:
    found = modules()
    known = {module.name for module in found}
    problems = []
    for module in found:
        for imported in imports(module, known):
            if imported.target != "sdtt" and not imported.target.startswith("sdtt."):
                continue
            source, target = module.package, package_of(imported.target)
            if source == target or rank(target) > rank(source):
                continue
            where = "a peer on its own row" if rank(target) == rank(source) else "a higher layer"
            problems.append(
                f"{module.path.relative_to(PACKAGE.parent)}:{imported.line}: {module.name} "
                f"imports {imported.target}, {where} ({source} may only import below it)"
            )
    assert not problems, "imports pointing up the layers:\n" + "\n".join(problems)


def test_every_package_sits_directly_above_a_package_it_imports() -> None:
    problems = reason_problems(LAYERS, REASONS, import_graph())
    assert not problems, "LAYERS or REASONS is not true:\n" + "\n".join(problems)


def test_no_module_imports_itself_through_others() -> None:
    graph = import_graph()
    found = [
        ", ".join(
            f"{source} imports {target} (line {graph[source][target]})"
            for source, target in itertools.pairwise(circle)
        )
        for circle in circles(graph)
    ]
    assert not found, (
        "modules that import each other (move what they share into one of them, or into a "
        "module of its own):\n" + "\n".join(found)
    )


def test_only_the_command_layer_parses_arguments_runs_trio_and_builds_consoles() -> None:
    problems = []
    seen = set()
    for module in modules():
        if module.package in TERMINAL_OWNERS:
            continue
        for what, line in terminal_uses(module):
            seen.add((module.name, what))
            if (module.name, what) not in KNOWN_EXCEPTIONS:
                problems.append(
                    f"{module.path.relative_to(PACKAGE.parent)}:{line}: {module.name} {what}; "
                    "only sdtt/commands, sdtt/ui and sdtt/cli.py may: take parsed values, "
                    "return results and let the command print them"
                )
    stale = sorted(set(KNOWN_EXCEPTIONS) - seen)
    assert not problems, "\n".join(problems)
    assert not stale, f"fixed, so delete from KNOWN_EXCEPTIONS: {stale}"


RICH_RENDERERS = TERMINAL_OWNERS | {"display"}
"""The packages that render with Rich: the commands and ``display.py`` for them. The rest
of the library returns data and plain text."""

RICH_EXCEPTIONS = {"sdtt.redact": "escapes Rich markup in text the commands print"}


def rich_imports(module: Module) -> Iterator[int]:
    """The lines where ``module`` imports Rich."""
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        else:
            continue
        if any(name.split(".")[0] == "rich" for name in names):
            yield node.lineno


def test_only_the_commands_and_display_render_with_rich() -> None:
    problems = [
        f"{module.path.relative_to(PACKAGE.parent)}:{line}: {module.name} imports Rich; "
        "return data or plain text and render it in sdtt/commands or sdtt/display.py"
        for module in modules()
        if module.package not in RICH_RENDERERS and module.name not in RICH_EXCEPTIONS
        for line in rich_imports(module)
    ]
    assert not problems, "\n".join(problems)
    users = {module.name for module in modules() if any(rich_imports(module))}
    assert set(RICH_EXCEPTIONS) <= users, "no longer imports Rich, drop from RICH_EXCEPTIONS"


def test_the_checks_see_an_upward_import_and_a_console(tmp_path: Path) -> None:
    """The readers above find what they look for (a check that finds nothing proves little)."""
    source = (
        "import argparse\n"
        "from rich import console as c\n"
        "import trio\n"
        "from sdtt.commands import demo\n"
        "def f():\n"
        "    c.Console()\n"
        "    trio.run(f)\n"
    )
    module = Module("sdtt.engine.fake", tmp_path / "fake.py", ast.parse(source))
    targets = [item.target for item in imports(module, {"sdtt.commands.demo"})]
    assert "sdtt.commands.demo" in targets
    assert rank(package_of("sdtt.commands.demo")) < rank(module.package)
    assert sorted(what for what, _ in terminal_uses(module)) == [
        "builds a Rich console",
        "imports argparse",
        "runs trio",
    ]


def test_the_checks_see_a_circle_a_lazy_import_and_a_false_reason(tmp_path: Path) -> None:
    """A circle made only of an import inside a function and one under TYPE_CHECKING is
    found, a lazy import by name counts, and reasons naming no real import are refused."""
    sources = {
        "sdtt.engine.one": "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from sdtt.engine import two\n",
        "sdtt.engine.two": "def f():\n    from sdtt.engine.three import g\n",
        "sdtt.engine.three": "import importlib\n"
        "def g(name):\n"
        "    return importlib.import_module(f'sdtt.engine.one.{name}')\n",
        "sdtt.engine.four": "from sdtt.engine import one\n",
    }
    fake = tuple(
        Module(name, tmp_path / f"{name}.py", ast.parse(source)) for name, source in sources.items()
    )
    graph = graph_of(fake)
    assert graph["sdtt.engine.three"] == {"sdtt.engine.one": 3}
    assert circles(graph) == [
        ["sdtt.engine.one", "sdtt.engine.two", "sdtt.engine.three", "sdtt.engine.one"]
    ]
    assert circles({"a": {"b": 1}, "b": {"c": 1}, "c": {}}) == []

    real = import_graph()
    assert reason_problems(LAYERS, REASONS, real) == []
    for package, reason, complaint in (
        ("engine", ("sdtt.engine.schedule", "sdtt.personas.bot"), "does not import"),
        ("engine", ("sdtt.display", "sdtt.dialogue.render"), "another package"),
        ("ui", ("sdtt.ui.chat_setup", "sdtt.errors"), "not an import of the row just below"),
    ):
        wrong = reason_problems(LAYERS, {**REASONS, package: reason}, real)
        assert len(wrong) == 1 and complaint in wrong[0], wrong
    # A package a row higher than its imports need (ui beside align) has no true reason.
    raised = tuple(
        (*row, "ui") if "align" in row else tuple(p for p in row if p != "ui") for row in LAYERS
    )
    assert any("ui: " in problem for problem in reason_problems(raised, REASONS, real))
    unexplained = {key: value for key, value in REASONS.items() if key != "models"}
    assert reason_problems(LAYERS, unexplained, real) == [
        "models: no entry in REASONS saying which import of the row below keeps it on its "
        "row; if it imports nothing there, move it down a row"
    ]


def test_architecture_md_shows_the_same_layers() -> None:
    text = (PACKAGE.parent / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = line.split("|")
        if len(cells) < 3 or not cells[1].strip().startswith("`"):
            continue
        names = re.findall(r"`([^`]+)`", cells[1])
        rows.append(tuple(name.removesuffix(".py").rstrip("/") for name in names))
    assert rows == list(LAYERS), "ARCHITECTURE.md's layer table differs from LAYERS"
