"""How long the ``sdtt`` command takes to start, against importing its base libraries.

Runs each command several times in fresh subprocesses and keeps the fastest run (the one
least disturbed by other work on the machine), next to a bare
``python -c "import trio, rich, pydantic"`` measured the same way in the same run. The
target (issue 15) is under 0.3 s for ``--version``, ``--help`` and ``persona list``
where the bare import takes about 0.13 s; a command's ``--help`` loads only its parser
(issue 25).

Usage: python benchmarks/cli_startup.py [--runs 7]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

from _quick import add_quick

BASELINE = ("import trio, rich, pydantic",)
COMMANDS: tuple[tuple[str, ...], ...] = (
    ("--version",),
    ("--help",),
    ("persona", "list"),
    ("simulate", "--help"),
    ("judge", "--help"),
)


def best_time(argv: list[str], runs: int) -> float:
    """The fastest of ``runs`` wall-clock times of ``argv`` in a fresh process."""
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="runs per command (default 7)")
    add_quick(parser, runs=1)
    args = parser.parse_args()
    python = sys.executable
    baseline = best_time([python, "-c", *BASELINE], args.runs)
    print(f"{'python -c ' + repr(BASELINE[0]):<45} {baseline:6.3f} s   1.00x")
    for command in COMMANDS:
        # ``-m sdtt.cli`` runs what the console script runs, with this interpreter.
        seconds = best_time([python, "-m", "sdtt.cli", *command], args.runs)
        label = "sdtt " + " ".join(command)
        print(f"{label:<45} {seconds:6.3f} s  {seconds / baseline:5.2f}x")


if __name__ == "__main__":
    main()
