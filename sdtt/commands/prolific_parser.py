"""The parser of ``sdtt prolific``; the command runs in :mod:`sdtt.commands.prolific`."""

from __future__ import annotations

import argparse
from pathlib import Path

from sdtt.commands import lazy_command
from sdtt.commands.common import add_actions

EXAMPLES = """examples:
  export PROLIFIC_TOKEN=...          # the variable [prolific] token_env names
  sdtt prolific create study.toml --url https://chat.example.org
  sdtt prolific publish study.toml
  sdtt prolific status study.toml
  sdtt prolific places study.toml 60          # more places (all a published study can change)
  sdtt prolific review study.toml              # what review would do (nothing done)
  sdtt prolific review study.toml --apply      # approve, reject and ask by the spec's rules
  sdtt serve export study.toml --out export
  sdtt prolific bonus study.toml export/points.csv          # set up, show the total
  sdtt prolific bonus study.toml export/points.csv --pay    # then pay, once
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``sdtt prolific create|publish|status|places|review|bonus``."""
    actions = add_actions(
        subparsers,
        "prolific",
        dest="action",
        description=(
            "Run a serve study on Prolific from its spec's [prolific] table: 'create' makes "
            "a draft study whose link is the server's study page and whose completion codes "
            "are the server's (one per outcome), 'publish' opens it to participants, "
            "'status' shows its places and submissions beside the server's participants, "
            "'bonus' pays points.csv's bonuses once. "
            "The API token is read from the environment variable the spec names; what was "
            "done on Prolific is kept in <name>.prolific.json beside the spec."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
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
    places = actions.add_parser(
        "places",
        help="change the number of places (all a published study can change)",
        description="Set the study's places on Prolific (never below the places taken). "
        "After publishing this is the one setting of a study that can change.",
    )
    places.add_argument("spec", type=Path, help="the serve study spec (TOML)")
    places.add_argument("places", type=int, help="the new number of places")
    places.set_defaults(func=lazy_command("sdtt.commands.prolific", "run_places"))
    check = actions.add_parser(
        "review",
        help="approve submissions whose code the server gave them; reject or ask to "
        "return only by the spec's [prolific.review] rules",
        description="Compare each submission awaiting review with the server's record "
        "and show what will be done with it: approved when the server has the participant "
        "done, in that session, and gave them the code they entered (unless a rule for "
        "their outcome says otherwise); a mismatch (no_record, not_done, other_session, "
        "wrong_code) is rejected or its participant asked to return it only when the "
        "spec's [prolific.review] table says so, and is otherwise left for you. Without a "
        "flag nothing is done. Each rejection and return request is recorded before it is "
        "sent, so a rerun never sends it twice.",
    )
    check.add_argument("spec", type=Path, help="the serve study spec (TOML)")
    check.add_argument("--approve", action="store_true", help="approve those to approve only")
    check.add_argument(
        "--apply",
        action="store_true",
        help="do everything shown: approve, and send the rejections and return requests "
        "the rules state",
    )
    check.set_defaults(func=lazy_command("sdtt.commands.prolific", "run_review"))
    bonus = actions.add_parser(
        "bonus",
        help="bonuses from points.csv through Prolific's bulk bonus (set up, then --pay)",
        description="Set up one bulk bonus for every participant of points.csv (sdtt serve "
        "export) whom no earlier bulk bonus holds: points x [prolific] bonus_per_point. "
        "Shows the total; --pay pays it. Each bulk bonus is recorded before it is paid, so "
        "a rerun, or a run killed at any step, never pays anyone twice.",
    )
    bonus.add_argument("spec", type=Path, help="the serve study spec (TOML)")
    bonus.add_argument("points", type=Path, help="points.csv from sdtt serve export")
    bonus.add_argument("--pay", action="store_true", help="pay what is set up (once)")
    bonus.add_argument(
        "--not-paid",
        metavar="BULK_ID",
        help="a bulk bonus a stopped run was paying that Prolific shows NOT paid: set it "
        "up again so --pay pays it",
    )
    bonus.set_defaults(func=lazy_command("sdtt.commands.prolific", "run_bonus"))
