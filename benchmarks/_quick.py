"""``--quick`` for the benchmark scripts: a few seconds' run with small settings.

The test suite runs every script in this folder with ``--quick`` (tests/test_benchmarks.py),
so none can rot unnoticed. Figures from a quick run mean nothing; only the full run's do.
"""

from __future__ import annotations

import argparse
from typing import Any


class _Quick(argparse.Action):
    """Sets the script's small settings; options given after ``--quick`` still win."""

    def __init__(self, option_strings: list[str], dest: str, small: dict[str, Any]) -> None:
        settings = ", ".join(f"{k}={v}" for k, v in small.items()) or "the full run is small"
        super().__init__(
            option_strings,
            dest,
            nargs=0,
            default=False,
            help=f"a short run to check the script works ({settings}); its figures mean nothing",
        )
        self.small = small

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        for name, value in self.small.items():
            setattr(namespace, name, value)
        setattr(namespace, self.dest, True)


def add_quick(parser: argparse.ArgumentParser, **small: Any) -> None:
    """Add ``--quick``, which sets each ``small`` option (by its ``dest`` name)."""
    parser.add_argument("--quick", action=_Quick, small=small)
