"""The commands of the ``sdtt`` command line, and how it stays lazy.

Each command has two modules: its parser, ``<name>_parser.py`` with
``register(subparsers)``, and its code, ``<name>.py`` with ``run(args)``. A parser is filled
when argparse first uses it and a command's code is imported when the command runs:

- ``sdtt --help`` lists every command but builds none of their parsers: each is a
  :class:`DeferredParser` whose ``register`` runs when that command is parsed or its help
  printed (``persona import``'s per-importer parsers are deferred the same way);
- a parser module imports only light things and names the command's code with
  :func:`lazy_command`, so ``sdtt <name> --help`` loads no pandas, scipy, trio or model SDK.

This package's own module holds only these two tools, so the command line can use them
without importing any command.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class LazyCommand:
    """A command function named by module and attribute, imported on first call."""

    module: str
    name: str

    def __call__(self, args: argparse.Namespace, **options: Any) -> int:
        """Import the implementation and run it with the parsed arguments (and any
        ``options`` the function takes, as a test's console)."""
        function: Callable[..., int] = getattr(importlib.import_module(self.module), self.name)
        return function(args, **options)


def lazy_command(module: str, name: str = "run") -> LazyCommand:
    """The command function ``module.name``, imported when the command runs."""
    return LazyCommand(module, name)


class DeferredParser(argparse.ArgumentParser):
    """A parser that adds its arguments only when it is used.

    ``sdtt persona list`` should not import the other commands' parsers, nor every
    chat-export importer to build the ``persona import`` parser it never touches:
    :meth:`defer` a function adding those arguments, and it runs before this parser first
    parses or prints help.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deferred: list[Callable[[argparse.ArgumentParser], None]] = []
        self._examples_added = False

    def defer(self, add: Callable[[argparse.ArgumentParser], None]) -> None:
        """Run ``add(self)`` when this parser is first used."""
        self._deferred.append(add)

    def complete(self) -> None:
        """Add every deferred argument now, and the help's Examples section."""
        while self._deferred:
            self._deferred.pop(0)(self)
        if not self._examples_added:
            from sdtt.commands.examples import HelpFormatter, examples_epilog

            self._examples_added = True
            self.epilog = examples_epilog(self.prog, self.epilog)
            if self.formatter_class is argparse.HelpFormatter:
                self.formatter_class = HelpFormatter

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        """Add the deferred arguments, then parse as usual."""
        self.complete()
        return super().parse_known_args(args, namespace)

    def format_help(self) -> str:
        """Add the deferred arguments, then describe them as usual."""
        self.complete()
        return super().format_help()

    def format_usage(self) -> str:
        """Add the deferred arguments, then describe them as usual."""
        self.complete()
        return super().format_usage()
