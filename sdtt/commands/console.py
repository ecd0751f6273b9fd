"""The console every ``sdtt`` command prints through, and its one rule for lines.

A line of text is printed whole, for the terminal to wrap, never cut by Rich at the
console's width: a command or path that sdtt suggests (``sdtt simulate ... --pseudo FILE``,
``sdtt persona show personas/ann.jsonl``) then pastes as printed. Rich's own wrapping
turned one suggested command into two lines, and pasting them ran the first half alone.
Tables, panels and progress displays are laid out to the width as usual.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console


class CliConsole(Console):
    """A Rich console that never wraps a printed string (see the module)."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        """As :meth:`rich.console.Console.print`; text alone is soft-wrapped."""
        if objects and all(isinstance(item, str) for item in objects):
            kwargs.setdefault("soft_wrap", True)
        super().print(*objects, **kwargs)
