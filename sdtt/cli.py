"""The ``sdtt`` command line.

Each command group lives in ``sdtt/commands/<name>.py`` with a ``register(subparsers)``
function that adds its parser and sets ``func`` to a callable taking the parsed
arguments and returning an exit code. Errors a user can cause (:class:`SdttError`) are
printed as one paragraph, never as a traceback; Ctrl-C ends every command with exit
status 130 and one line, keeping what was written.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import warnings
from collections.abc import Sequence
from typing import TextIO

from rich.console import Console
from rich.markup import escape

from sdtt import __version__
from sdtt.errors import SdttError
from sdtt.personas.privacy import PrivacyWarning
from sdtt.questionnaires.judgements import RepeatedJudgementWarning
from sdtt.redact import printable, redact_text

COMMAND_MODULES: tuple[str, ...] = (
    "demo",
    "persona",
    "models",
    "simulate",
    "topics",
    "generate",
    "drift",
    "questionnaire",
    "responses",
    "chat",
    "judge_ui",
    "serve",
    "judge",
    "score",
    "report",
    "plan",
)

EXIT_USER_ERROR = 2
EXIT_INTERRUPTED = 130


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every command group registered."""
    parser = argparse.ArgumentParser(
        prog="sdtt",
        description=(
            "Self-Directed Turing Tests: build persona chatbots from real chat history, "
            "run burst and self-directed dialogues, and measure how long they pass as the "
            "person. Run 'sdtt COMMAND --help' for the options of a command."
        ),
    )
    parser.add_argument("--version", action="version", version=f"sdtt {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"sdtt.commands.{name}")
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``sdtt`` console script."""
    try:
        return _run(argv)
    except KeyboardInterrupt:
        return _interrupted()
    except BaseExceptionGroup as group:
        # trio delivers Ctrl-C inside the group of the tasks it cancelled.
        if group.subgroup(KeyboardInterrupt) is None:
            raise
        return _interrupted()


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 0 if args.command is None else EXIT_USER_ERROR
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _print_warning
            # "once": the same warning from several stages of one command is said once.
            warnings.simplefilter("once", PrivacyWarning)
            warnings.simplefilter("once", RepeatedJudgementWarning)
            code: int = args.func(args)
    except SdttError as error:
        Console(stderr=True, highlight=False).print(f"[bold red]error:[/] {_shown(str(error))}")
        return EXIT_USER_ERROR
    except OSError as error:
        if error.filename is None:
            raise
        # A file-system failure no check foresaw (disk full, permissions changed
        # mid-run): say which file, not where in sdtt it happened.
        reason = error.strerror or type(error).__name__
        Console(stderr=True, highlight=False).print(
            f"[bold red]error:[/] {_shown(str(error.filename))}: {escape(reason)}."
        )
        return EXIT_USER_ERROR
    return code


def _interrupted() -> int:
    # Every writer flushes each record as it goes, so there is nothing left to save.
    Console(stderr=True, highlight=False).print("interrupted; everything written so far is kept")
    return EXIT_INTERRUPTED


def _print_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    # Warnings meant for the user read like errors do: one paragraph, no source line.
    Console(stderr=True, highlight=False).print(f"[bold yellow]warning:[/] {_shown(str(message))}")


def _shown(text: str) -> str:
    # Messages quote paths, URLs and file contents: no credentials, no control codes.
    return escape(printable(redact_text(text)))


if __name__ == "__main__":
    sys.exit(main())
