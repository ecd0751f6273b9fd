"""The ``sdtt`` command line.

:data:`COMMANDS` lists every command with its one-line help. Each command's parser is a
:class:`~sdtt.commands.DeferredParser` filled, when argparse first uses it, by
``register(subparsers)`` of ``sdtt.commands.<name>_parser``, which names the command's
code with :func:`~sdtt.commands.lazy_command` (see :mod:`sdtt.commands`). So
``sdtt --help`` and ``sdtt --version`` import no command module, and ``sdtt COMMAND ...``
imports only that command's parser until it runs: start-up time is what a user waits for
on every command.

Errors a user can cause (:class:`SdttError`) are printed as one paragraph, never as a
traceback; Ctrl-C ends every command with exit status 130 and one line, keeping what was
written.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import functools
import importlib
import logging
import sys
import warnings
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple, TextIO

from rich.console import Console
from rich.markup import escape

from sdtt import __version__
from sdtt.commands import DeferredParser
from sdtt.errors import SdttError
from sdtt.redact import printable, redact_text


class Command(NamedTuple):
    """A command of ``sdtt``: its line in the help. The parser of ``judge-ui`` is
    ``register(subparsers)`` in ``sdtt/commands/judge_ui_parser.py``."""

    help: str
    """What ``sdtt --help`` says about the command."""


COMMANDS: dict[str, Command] = {
    "demo": Command("run the whole pipeline on an example persona (offline by default)"),
    "persona": Command("list, inspect and import personas (real chat histories)"),
    "models": Command("list model providers and whether each is usable here"),
    "simulate": Command("chat live with the persona bot through a simulated interrogator"),
    "topics": Command("generate a list of distinct everyday chat topics"),
    "generate": Command("write long pseudo-dialogues (Algorithm 1) for a grid or plan of chains"),
    "drift": Command("style drift of pseudo-dialogues per turn window, against the real person"),
    "questionnaire": Command("build Turing-test questionnaires for human judges and export them"),
    "responses": Command("import judges' answers into a judgement table"),
    "chat": Command("chat live with a persona bot in the terminal"),
    "judge-ui": Command("judge a study's questionnaire in the terminal (in-lab studies)"),
    "serve": Command("run a live chat study in the browser (sdtt serve STUDY.toml)"),
    "prolific": Command("run a serve study on Prolific: create, publish, status"),
    "judge": Command("let an LLM judge a built study (same records as human judges)"),
    "score": Command("X-Turn Pass Rate, intervals and tests from judgement files"),
    "report": Command("write an HTML and Markdown report with figures"),
    "export": Command("a study's chats, messages, judgements and traces as Parquet tables"),
    "plan": Command("pairs and judges needed for a given power"),
    "study": Command("run a whole study from one spec; status, bundle, verify, prereg"),
    "align": Command("judge alignment: pairwise similarity ratings, LLM cohorts and RSA"),
    "detectors": Command("export a study's pairs for AI-text detectors and score their answers"),
    "single": Command("single-item tests: one conversation cut at a time, each speaker judged"),
    "wordassoc": Command("word-association items (cue, association), human or machine; SVM judge"),
    "captions": Command("image-caption items (image, caption), human or machine; SVM judge"),
    "import-kreiman": Command("import the Kreiman lab's released Turing-test files"),
}
"""Every command, in the order ``sdtt --help`` lists them."""


EXIT_USER_ERROR = 2
EXIT_INTERRUPTED = 130


def build_parser(commands: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser of ``sdtt``. Each command's parser is filled by its module when
    argparse first uses it (:class:`~sdtt.commands.DeferredParser`); those named in
    ``commands`` are filled now."""
    parser = argparse.ArgumentParser(
        prog="sdtt",
        description=(
            "Self-Directed Turing Tests: build persona chatbots from real chat history, "
            "run burst and self-directed dialogues, and measure how long they pass as the "
            "person. Run 'sdtt COMMAND --help' for the options of a command."
        ),
    )
    parser.add_argument("--version", action="version", version=f"sdtt {__version__}")
    subparsers = parser.add_subparsers(
        dest="command", metavar="COMMAND", action=_Commands, parser_class=DeferredParser
    )
    for name in COMMANDS:
        command = subparsers.add_parser(name)
        assert isinstance(command, DeferredParser)
        command.defer(functools.partial(_register, name, subparsers))
        if commands is not None and name in commands:
            command.complete()
    return parser


def _register(
    name: str,
    subparsers: argparse._SubParsersAction[DeferredParser],
    _parser: argparse.ArgumentParser,
) -> None:
    # The command's parser module adds its options to the parser made for it above.
    module = name.replace("-", "_")
    importlib.import_module(f"sdtt.commands.{module}_parser").register(subparsers)


class _Commands(argparse._SubParsersAction):  # type: ignore[type-arg]
    # Makes each command's parser once, with its line of the help from COMMANDS; the
    # command module's register() asking for it again gets the same parser, described.
    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        made: argparse.ArgumentParser | None = self._name_parser_map.get(name)
        if made is not None:
            for key, value in kwargs.items():
                setattr(made, key, value)  # description, epilog
            return made
        kwargs.setdefault("help", COMMANDS[name].help)
        parser: argparse.ArgumentParser = super().add_parser(name, **kwargs)
        parser.add_argument(
            "--verbose",
            action="store_true",
            help="also print every model call (tokens, latency, attempts) and other details "
            "as the command goes (retried calls are always shown, one line each)",
        )
        return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``sdtt`` with ``argv`` (the console script calls it through ``sdtt.__main__``)."""
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
    arguments = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    args = parser.parse_args(arguments)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 0 if args.command is None else EXIT_USER_ERROR
    try:
        if getattr(args, "base_url", None):
            # Before anything is loaded: a wrong address is found in a second, not minutes.
            from sdtt.commands.reach import knock_for

            knock_for(args)
        # Imported after parsing, so --help and --version do not load the persona models.
        from sdtt.commands.common import check_names
        from sdtt.files import TextChangedWarning
        from sdtt.personas.privacy import PrivacyWarning
        from sdtt.tasks.judgements import RepeatedJudgementWarning

        with warnings.catch_warnings(), _status_lines(verbose=args.verbose):
            warnings.showwarning = _print_warning
            # "once": the same warning from several stages of one command is said once.
            warnings.simplefilter("once", PrivacyWarning)
            warnings.simplefilter("once", RepeatedJudgementWarning)
            warnings.simplefilter("once", TextChangedWarning)
            check_names(args)
            code: int = args.func(args)
    except (SdttError, OSError, ExceptionGroup) as error:
        # trio hands back what failed in its tasks as a group: several concurrent calls
        # meeting the same full disk or dead server fail alike, so the first one says it.
        found = _user_error(error)
        if found is None:
            raise
        _stderr().print(f"[bold red]error:[/] {_message(found)}")
        return EXIT_USER_ERROR
    return code


def _user_error(error: BaseException) -> SdttError | OSError | None:
    """The error to tell the user about: ``error`` itself or the first of its group
    (None when the group holds something else too, a bug worth its traceback)."""
    if isinstance(error, (SdttError, OSError)):
        return error
    if isinstance(error, BaseExceptionGroup):
        found = [_user_error(inner) for inner in error.exceptions]
        if found and all(inner is not None for inner in found):
            return found[0]
    return None


def _message(error: SdttError | OSError) -> str:
    if isinstance(error, SdttError):
        return _shown(str(error))
    # A file-system failure no check foresaw (disk full, permissions changed mid-run):
    # say which file, not where in sdtt it happened. Writers name the file they were
    # writing (sdtt.errors.naming).
    reason = error.strerror or type(error).__name__
    where = "" if error.filename is None else f"{_shown(str(error.filename))}: "
    return f"{where}{escape(reason)}.{_OS_ERROR_HINTS.get(error.errno or 0, '')}"


_FULL = (
    " Make room (or raise the file-size limit) and run the same command again: what was "
    "written before is kept, and generate and judge resume."
)
_OS_ERROR_HINTS = {errno.ENOSPC: _FULL, errno.EFBIG: _FULL, errno.EDQUOT: _FULL}


class _StatusHandler(logging.Handler):
    """Prints log records as one line each on stderr while a command runs.

    The console is looked up at each line, so a progress display that redirects stderr
    (``generate``'s) prints the line above itself instead of being torn.
    """

    def emit(self, record: logging.LogRecord) -> None:
        label = "retrying" if record.name == RETRY_LOGGER else record.levelname.lower()
        text = _shown(record.getMessage())
        # soft_wrap: one line, however narrow the terminal (it wraps it, not Rich).
        _stderr().print(f"[yellow]{label}:[/] {text}", soft_wrap=True)


RETRY_LOGGER = "sdtt.retries"
"""``sdtt.models.model.status_log``'s name (not imported: it would load trio at start)."""


@contextlib.contextmanager
def _status_lines(*, verbose: bool) -> Iterator[None]:
    # Retries are always shown (an outage or a hung server must not look like a silent
    # run); --verbose adds sdtt's own debug log, without llama.cpp's chatter.
    loggers = [(logging.getLogger(RETRY_LOGGER), logging.INFO)]
    if verbose:
        loggers.append((logging.getLogger("sdtt"), logging.DEBUG))
    handler = _StatusHandler()
    quiet = logging.getLogger("sdtt.models.local.llama_cpp")
    saved = [(logger, logger.level, logger.propagate) for logger, _ in loggers]
    saved_quiet = quiet.level
    for logger, level in loggers:
        logger.setLevel(level)
        logger.addHandler(handler)
    if verbose:
        # The retry lines would reach the "sdtt" logger's handler too: print them once.
        loggers[0][0].propagate = False
        quiet.setLevel(max(saved_quiet, logging.INFO))
    try:
        yield
    finally:
        for logger, level, propagate in saved:
            logger.removeHandler(handler)
            logger.setLevel(level)
            logger.propagate = propagate
        quiet.setLevel(saved_quiet)


def _interrupted() -> int:
    # Every writer flushes each record as it goes, so there is nothing left to save.
    _stderr().print("interrupted; everything written so far is kept")
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
    _stderr().print(f"[bold yellow]warning:[/] {_shown(str(message))}")


def _stderr() -> Console:
    # The commands' console (never wraps a line: a command in an error pastes whole),
    # imported when something is printed: sdtt --help loads no command module.
    from sdtt.commands.console import CliConsole

    return CliConsole(stderr=True, highlight=False)


def _shown(text: str) -> str:
    # Messages quote paths, URLs and file contents: no credentials, no control codes.
    return escape(printable(redact_text(text)))


if __name__ == "__main__":
    sys.exit(main())
