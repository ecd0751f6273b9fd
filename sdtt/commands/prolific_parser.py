"""The parser of ``sdtt prolific``; the command runs in :mod:`sdtt.commands.prolific`."""

from __future__ import annotations

import argparse
from pathlib import Path

from sdtt.commands import lazy_command

EXAMPLES = """examples:
  export PROLIFIC_TOKEN=...          # the variable [prolific] token_env names
  sdtt prolific create study.toml --url https://chat.example.org
  sdtt prolific publish study.toml
  sdtt prolific status study.toml
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``sdtt prolific create|publish|status``."""
    parser = subparsers.add_parser(
        "prolific",
        description=(
            "Run a serve study on Prolific from its spec's [prolific] table: 'create' makes "
            "a draft study whose link is the server's study page and whose completion codes "
            "are the server's (one per outcome), 'publish' opens it to participants, "
            "'status' shows its places and submissions beside the server's participants. "
            "The API token is read from the environment variable the spec names; what was "
            "done on Prolific is kept in <name>.prolific.json beside the spec."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    create = actions.add_parser(
        "create",
        help="create the draft study on Prolific (once per spec)",
        description="Create the draft study (UNPUBLISHED) the spec's [prolific] table "
        "describes; its link is URL/s/<name> with Prolific's PROLIFIC_PID, STUDY_ID and "
        "SESSION_ID, its completion codes the server's.",
    )
    create.add_argument("spec", type=Path, help="the serve study spec (TOML)")
    create.add_argument(
        "--url", required=True, help="the public address of the running sdtt serve (https://...)"
    )
    create.set_defaults(func=lazy_command("sdtt.commands.prolific", "run_create"))
    publish = actions.add_parser(
        "publish",
        help="publish the draft study (participants can start)",
        description="Publish the draft study created for the spec. After this only the "
        "number of places can change on Prolific.",
    )
    publish.add_argument("spec", type=Path, help="the serve study spec (TOML)")
    publish.set_defaults(func=lazy_command("sdtt.commands.prolific", "run_publish"))
    status = actions.add_parser(
        "status", help="places and submissions on Prolific, beside the server's participants"
    )
    status.add_argument("spec", type=Path, help="the serve study spec (TOML)")
    status.set_defaults(func=lazy_command("sdtt.commands.prolific", "run_status"))
