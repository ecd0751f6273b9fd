"""Every import in ``sdtt/`` points down the layers, and only the command layer owns the
terminal: argparse, ``trio.run`` and Rich consoles.

The imports are read with :mod:`ast`, so nothing is imported to check them; imports inside
functions and under ``if TYPE_CHECKING`` count too (a circle that only type checkers see
is still a circle for a reader). ARCHITECTURE.md shows the same table: change both.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "sdtt"

LAYERS: tuple[tuple[str, ...], ...] = (
    ("__main__",),
    ("cli",),
    ("commands",),
    ("ui", "serve"),
    ("align",),
    ("display",),
    ("analysis",),
    ("judges",),
    ("beliefs",),
    ("questionnaires",),
    ("engine",),
    ("generate",),
    ("personas",),
    ("dialogue",),
    ("models",),
    ("__init__", "files", "lock", "spreadsheet", "templates"),
    ("redact",),
    ("errors",),
)
"""The layers, top first. A module may import its own package and any package of a lower
row; packages on one row are peers and import none of each other. A package is a folder
of ``sdtt/`` (its sub-packages included) or one of the modules at the root of ``sdtt/``
(``__init__`` is ``sdtt`` itself, e.g. ``from sdtt import __version__``).

The order inside the issue's tiers follows what the code needs: the chat UI may show
results (ui over analysis); analysis reads what judges produce (analysis over judges);
the questionnaire pairs the engine's live chats (questionnaires over engine); a live chat
continues a pseudo-dialogue (engine over generate). ``display`` holds the commands' Rich
renderings of dialogue and model usage, so only the command layer and the UI sit above it.
"""

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
    (``from sdtt import errors`` imports ``sdtt.errors``)."""
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
