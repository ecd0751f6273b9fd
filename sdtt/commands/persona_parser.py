"""The parser of ``sdtt persona``; the command runs in :mod:`sdtt.commands.persona`."""

from __future__ import annotations

import argparse

from sdtt.commands import DeferredParser, lazy_command
from sdtt.commands.common import add_actions, add_out_argument, usage_help
from sdtt.personas.importers import IMPORTERS, get_importer
from sdtt.personas.store import LOCAL_DIR


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``sdtt persona list|show|import|hold-out``."""
    actions = add_actions(
        subparsers,
        "persona",
        dest="persona_command",
        parser_class=DeferredParser,
        description=(
            "A persona is a real person's timestamped chat history that a bot is prompted "
            "to write like. Personas are looked up by name in ./personas/ and among the "
            "examples shipped with sdtt."
        ),
    )

    listing = actions.add_parser(
        "list",
        help="list the personas found",
        description=(
            "List the personas in ./personas/ and the shipped examples: name, source, "
            "conversations, messages, whether personal data was scrubbed."
        ),
    )
    listing.set_defaults(func=lazy_command("sdtt.commands.persona", "run_list"))

    show = actions.add_parser(
        "show",
        help="show one persona's style statistics",
        description=(
            "Show a persona's source and style statistics: messages, turns, words per message, "
            "burst sizes, punctuation and emoji habits, and its timing profile if fitted."
        ),
    )
    show.add_argument("persona", metavar="NAME", help="persona name or persona file path")
    show.add_argument(
        "--last",
        type=int,
        default=6,
        metavar="N",
        help="also print the last N messages of the history (default 6; 0 for none)",
    )
    show.set_defaults(func=lazy_command("sdtt.commands.persona", "run_show"))

    holding = actions.add_parser(
        "hold-out",
        help="keep some of a persona's chats out of every prompt, for human = 'persona'",
        description=(
            "Write a persona (NAME-held-out by default) whose COUNT conversations, drawn "
            "with --seed among those of at least --min-turns turns, are never shown in a "
            "prompt (bot, interrogator, pseudo-dialogue): a study with human = 'persona' "
            "(or 'questionnaire build --human persona') pairs its bot chats with them, "
            "so judges compare the bot with the person it imitates. Run the bot as the new "
            "persona. Example: sdtt persona hold-out maya --count 6"
        ),
    )
    holding.add_argument("persona", metavar="NAME", help="persona name or persona file path")
    holding.add_argument(
        "--count", type=int, required=True, metavar="K", help="how many chats to hold out"
    )
    holding.add_argument(
        "--min-turns",
        type=int,
        default=4,
        metavar="T",
        help="hold out only chats of at least T turns (default 4; a pair shows up to the "
        "bot chat's last turn of each held-out chat)",
    )
    holding.add_argument("--seed", type=int, default=0, help="which chats are drawn (default 0)")
    holding.add_argument(
        "--name", metavar="NEW", help="name of the new persona (default NAME-held-out)"
    )
    add_out_argument(
        holding,
        folder=True,
        default=LOCAL_DIR,
        help=f"folder to write the persona file to (default ./{LOCAL_DIR})",
    )
    holding.add_argument(
        "--force", action="store_true", help="overwrite a persona file that already exists"
    )
    holding.set_defaults(func=lazy_command("sdtt.commands.persona", "run_hold_out"))

    importing = actions.add_parser(
        "import",
        help="build persona files from a chat export or corpus",
        description="Build persona files from a source; each FORMAT has its own options.",
    )
    assert isinstance(importing, DeferredParser)  # the actions' parser class
    importing.set_defaults(func=lambda _args: usage_help(importing))
    # The importers (and the PII scrubber they share) load only when 'import' is used.
    importing.defer(_add_formats)


def _add_formats(importing: argparse.ArgumentParser) -> None:
    # The importers (and the PII scrubber they load) are needed only by 'persona import'.
    from sdtt.commands.persona_import import add_import_arguments

    formats = importing.add_subparsers(dest="format", metavar="FORMAT")
    for name in IMPORTERS:
        importer = get_importer(name)
        # "resolve" lets an importer redefine a shared option with its own meaning.
        sub = formats.add_parser(
            name, help=importer.help, description=importer.help, conflict_handler="resolve"
        )
        add_out_argument(
            sub,
            folder=True,
            default=LOCAL_DIR,
            help=f"folder to write the persona files to (default ./{LOCAL_DIR})",
        )
        sub.add_argument(
            "--force", action="store_true", help="overwrite persona files that already exist"
        )
        add_import_arguments(sub, importer)
        sub.set_defaults(func=lazy_command("sdtt.commands.persona", "run_import"))
