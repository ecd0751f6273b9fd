"""``sdtt persona import FORMAT``: each format's flags, turned into the importer's options.

The importers in :mod:`sdtt.personas.importers` take an
:class:`~sdtt.personas.importers.options.ImportOptions` and return the persona with a
report; this module owns everything about the command line: the flags, reading them into
options, printing the report on stderr and writing the scrub report.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console

from sdtt.commands.console import CliConsole
from sdtt.personas.importers import CORPUS_FORMATS, Importer, chitchat, get_importer
from sdtt.personas.importers.build import MEDIA_TEXT, PreparedImport, WrittenImport
from sdtt.personas.importers.chitchat import (
    DEFAULT_COUNT,
    DEFAULT_HISTORY_TURNS,
    DEFAULT_MIN_MESSAGES,
    ChitchatOptions,
    import_chitchat,
)
from sdtt.personas.importers.file_importer import FileImporter
from sdtt.personas.importers.import_report import ImportReport
from sdtt.personas.importers.options import (
    DEFAULT_TIMEZONE,
    ImportOptions,
    parse_gap,
    parse_timezone,
    split_names,
)
from sdtt.personas.importers.writing import write_scrub_report
from sdtt.personas.persona import Persona
from sdtt.redact import shown


def add_import_arguments(parser: argparse.ArgumentParser, importer: Importer) -> None:
    """Add the options of ``importer``'s format to its ``sdtt persona import`` parser."""
    if importer.name in CORPUS_FORMATS:
        _add_chitchat_arguments(parser)
        return
    assert isinstance(importer, FileImporter)
    add_common_arguments(parser, file_help=importer.file_help)
    for flag in importer.flags:
        parser.add_argument(
            flag.name, dest=flag.field, metavar=flag.metavar, default=flag.default, help=flag.help
        )
    # options_from_args reads the values of the format's own flags with their parsers.
    parser.set_defaults(format_flags=importer.flags)


def add_common_arguments(parser: argparse.ArgumentParser, *, file_help: str) -> None:
    """The options shared by every chat-export format."""
    parser.add_argument("file", metavar="FILE", type=Path, help=file_help)
    parser.add_argument(
        "--me",
        required=True,
        metavar="NAME",
        help="The participant who becomes the persona (as the export spells the name).",
    )
    parser.add_argument(
        "--with",
        dest="partners",
        action="append",
        metavar="NAME",
        help="In a group chat, keep only the persona's messages and those of NAME "
        "(repeatable or comma-separated). Everybody else is left out.",
    )
    parser.add_argument(
        "--merge-others",
        action="store_true",
        help="In a group chat, treat everybody except the persona as one User side.",
    )
    parser.add_argument(
        "--gap",
        default="1h",
        metavar="DURATION",
        help="Silence that starts a new conversation, e.g. 30m, 2h (default: 1h).",
    )
    parser.add_argument(
        "--timezone",
        default=DEFAULT_TIMEZONE,
        metavar="ZONE",
        help="IANA time zone of the chat (default: UTC). Times without a zone keep their "
        "clock value and get this zone; absolute times are converted to it.",
    )
    parser.add_argument(
        "--no-scrub",
        dest="scrub",
        action="store_false",
        help="Keep personal data (contact details, bank, card and id numbers, addresses, "
        "GPS positions, names) as it is. The persona "
        "file records that it was not scrubbed; do not send it to a remote provider.",
    )
    parser.add_argument(
        "--scrub-names",
        action="append",
        metavar="NAMES",
        help="More names to replace, comma-separated (e.g. 'Ann,Bob Smith'); "
        "participants' names are always replaced, other names when found in name lists.",
    )
    parser.add_argument(
        "--scrub-report",
        type=Path,
        metavar="PATH",
        help="Also write which values were replaced by which placeholder to PATH (JSON). "
        "That file holds the personal data: keep it private.",
    )
    parser.add_argument(
        "--name",
        metavar="NAME",
        help="Name of the persona file (default: the format and a hash of the export when "
        "scrubbing, so the person's name is not in it; else the --me name).",
    )
    parser.add_argument(
        "--keep-media",
        action="store_true",
        help=f"Keep photos, stickers and files without caption as '{MEDIA_TEXT}' messages "
        "(default: drop them).",
    )


def _whole_number(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative")
    return value


def _add_chitchat_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--min-messages",
        type=_whole_number,
        default=DEFAULT_MIN_MESSAGES,
        metavar="N",
        help=f"only senders with at least N messages (default {DEFAULT_MIN_MESSAGES})",
    )
    parser.add_argument(
        "--count",
        type=_whole_number,
        default=DEFAULT_COUNT,
        metavar="K",
        help=f"how many senders to pick, most messages first (default {DEFAULT_COUNT})",
    )
    parser.add_argument(
        "--sender",
        action="append",
        default=[],
        metavar="ID",
        help="build this sender (full anonymised id or its first characters); "
        "repeatable; replaces the automatic pick",
    )
    parser.add_argument(
        "--history-turns",
        type=_whole_number,
        default=DEFAULT_HISTORY_TURNS,
        metavar="N",
        help="keep the most recent whole conversations that give at least N burst "
        f"turns (default {DEFAULT_HISTORY_TURNS}; 0 keeps them all)",
    )


def options_from_args(args: argparse.Namespace) -> ImportOptions:
    """The importer options from parsed ``sdtt persona import FORMAT`` arguments: the
    common flags, then the format's own (:attr:`FileImporter.flags`)."""
    name = getattr(args, "name", None)
    own: dict[str, Any] = {}
    for flag in getattr(args, "format_flags", ()):
        value = getattr(args, flag.field)
        if value is not None:
            own[flag.field] = value if flag.parse is None else flag.parse(value)
    return ImportOptions(
        me=args.me,
        partners=split_names(args.partners),
        merge_others=args.merge_others,
        gap=parse_gap(args.gap),
        timezone=parse_timezone(args.timezone),
        scrub=args.scrub,
        scrub_names=split_names(args.scrub_names),
        keep_media=args.keep_media,
        name=name if isinstance(name, str) and name else None,
        **own,
    )


def chitchat_options(args: argparse.Namespace) -> ChitchatOptions:
    """The corpus options from parsed ``sdtt persona import chitchat`` arguments."""
    return ChitchatOptions(
        min_messages=args.min_messages,
        count=args.count,
        senders=tuple(args.sender),
        history_turns=args.history_turns,
    )


def print_import_report(report: ImportReport, console: Console) -> None:
    """Print the report, highlighting warnings and a missing scrub."""
    for line in report.lines():
        flag = f"[bold yellow]{shown(line.flag)}[/]" if line.flag else ""
        console.print(flag + shown(line.text))


def build_personas(args: argparse.Namespace) -> list[Persona]:
    """The personas of the corpus format ``args.format`` (chat exports: see
    :func:`prepare_import`)."""
    console = CliConsole(highlight=False)
    console.print("[dim]chitchat corpus: loading...[/]")
    corpus = chitchat.load_corpus()  # through the module: tests put a small corpus there
    console.print(f"[dim]chitchat corpus: {shown(corpus.report.describe())}[/]")

    def progress(done: int, total: int, sender: str) -> None:
        console.print(f"[dim]persona {done + 1} of {total}: sender {shown(sender)}[/]")

    return import_chitchat(chitchat_options(args), corpus=corpus, progress=progress).personas


def prepare_import(args: argparse.Namespace) -> PreparedImport:
    """The chat export of ``args`` read as far as its persona's name (see
    :class:`PreparedImport`)."""
    importer = get_importer(args.format)
    assert isinstance(importer, FileImporter)
    return importer.prepare(Path(args.file), options_from_args(args))


def report_import(written: WrittenImport, args: argparse.Namespace) -> None:
    """Print the import's report on stderr; write the scrub report if asked."""
    print_import_report(written.report, CliConsole(stderr=True, highlight=False))
    if args.scrub_report is not None:
        write_scrub_report(written, Path(args.scrub_report))
