"""How a command's parser reaches what is heavy: by name, imported when used.

Every command's parser is ``sdtt/commands/<name>_parser.py``; importing the command's code
there would load pandas, scipy, trio or the model SDKs for ``--help``. A parser sets
``func=lazy_command("sdtt.commands.score", "run")`` instead of importing ``run``, and a
parser whose arguments come from a heavy registry (``persona import FORMAT``) is a
:class:`DeferredParser` that adds them when it is first used.
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
    """A parser that adds some of its arguments only when it is used.

    ``sdtt persona list`` should not import every chat-export importer just to build the
    ``persona import`` parser it never touches: :meth:`defer` a function adding those
    arguments, and it runs before this parser first parses or prints help.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deferred: list[Callable[[argparse.ArgumentParser], None]] = []

    def defer(self, add: Callable[[argparse.ArgumentParser], None]) -> None:
        """Run ``add(self)`` when this parser is first used."""
        self._deferred.append(add)

    def complete(self) -> None:
        """Add every deferred argument now."""
        while self._deferred:
            self._deferred.pop(0)(self)

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
