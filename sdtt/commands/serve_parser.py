"""The parser of ``sdtt serve``; the command runs in :mod:`sdtt.commands.serve`."""

from __future__ import annotations

import argparse

from sdtt.commands import lazy_command
from sdtt.commands.common import add_out_argument

ADMIN_TOKEN_ENV = "SDTT_ADMIN_TOKEN"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``sdtt serve``."""
    parser = subparsers.add_parser(
        "serve",
        description=(
            "Serve a study spec: participants open /s/<name>?PROLIFIC_PID=... (or ?pid=...), "
            "consent, wait in a lobby, chat with the persona bot or a person, and give a "
            "verdict. Everything is kept in the study's SQLite file as it happens. The admin "
            f"token is printed at start (or taken from ${ADMIN_TOKEN_ENV})."
        ),
    )
    parser.add_argument(
        "words",
        nargs="+",
        metavar="[export] STUDY",
        help="the study spec (.toml); 'export STUDY --out DIR' writes its chats, event logs "
        "and judgements for sdtt score and sdtt report",
    )
    add_out_argument(parser, folder=True, help="folder the export writes (sdtt serve export)")
    parser.add_argument(
        "--scrub",
        action="store_true",
        help="sdtt serve export: run the persona scrubber over participants' text (names, "
        "emails, phone numbers... become placeholders) and leave out the bot's event logs",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.set_defaults(func=lazy_command("sdtt.commands.serve"))
