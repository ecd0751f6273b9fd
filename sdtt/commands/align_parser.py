"""The parser of ``sdtt align``; the command runs in :mod:`sdtt.commands.align`."""

from __future__ import annotations

import argparse
from pathlib import Path

from sdtt.commands import lazy_command
from sdtt.commands.common import (
    add_actions,
    add_base_url_argument,
    add_batch_arguments,
    add_out_argument,
)

RATINGS_FILE = "ratings.jsonl"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``sdtt align`` and its subcommands."""
    from sdtt.surveys.tools import TOOLS, either, rating_tools

    able = rating_tools()
    unable = [name for name in TOOLS if name not in able]
    # The tools that cannot field a rating task are choices too, so choosing one says
    # that it cannot (rather than that it does not exist).
    formats = [*able, *unable]
    sub = add_actions(
        subparsers,
        "align",
        dest="align_command",
        description=(
            "Measure how human-like LLM judges are (after Ogg et al.): judges rate how "
            "similar two chat items are; each judge's ratings form a dissimilarity matrix, "
            "compared between groups (Spearman, permutation test, Bonferroni, human noise "
            "ceiling) and between individuals (pairwise alignment, ICC, MDS map)."
        ),
    )

    build = sub.add_parser(
        "build",
        help="build a rating task from a study spec's [rating] section",
        description="Draw items from the sources of the spec's [rating] section and lay out "
        "the pairs (all pairs, or balanced forms with pairs_per_judge). Writes "
        "rating-task.json (what judges see) and rating-key.json (researcher-only).",
    )
    build.add_argument("spec", type=Path, help="study spec (.toml or .json) with [rating]")
    add_out_argument(build, folder=True, required=True, help="folder for the rating task")
    build.set_defaults(func=lazy_command("sdtt.commands.align", "run_build"))

    export = sub.add_parser(
        "export",
        help=f"export a rating task for {either(able)}",
        description="Write the task for survey tools (default: every supported format). "
        f"The formats {either(unable, 'and')} are not supported for rating tasks.",
    )
    export.add_argument("task", type=Path, help="task folder")
    export.add_argument(
        "--format",
        action="append",
        choices=formats,
        help=f"{either(able)} (repeatable; default all of them)",
    )
    add_out_argument(export, folder=True, help="folder for the exports (default TASK/export)")
    export.set_defaults(func=lazy_command("sdtt.commands.align", "run_export"))

    imp = sub.add_parser(
        "import",
        help=f"import human judges' ratings from {either(able)}",
        description="Read response files into the rating table (appended; answers already "
        "there are skipped). An answer off the scale is kept as a missing rating.",
    )
    imp.add_argument("task", type=Path, help="task folder")
    imp.add_argument("files", type=Path, nargs="+", metavar="FILE", help="response files")
    imp.add_argument("--format", required=True, choices=formats, help="response format")
    add_out_argument(imp, folder=False, help=f"file of ratings (default TASK/{RATINGS_FILE})")
    imp.set_defaults(func=lazy_command("sdtt.commands.align", "run_import"))

    judge = sub.add_parser(
        "judge",
        help="let cohorts of LLM participants rate the task",
        description="Run one cohort per model x temperature x prompt variant, each of "
        "--participants participants with their own seed. Every rating is appended as it "
        "arrives; a rerun asks only what is missing. An answer that is not one number on "
        "the scale is asked again, then recorded as missing (never guessed).",
    )
    judge.add_argument("task", type=Path, help="task folder")
    judge.add_argument(
        "--model", action="append", required=True, help="provider/model (repeatable)"
    )
    judge.add_argument("--participants", "-n", type=int, default=10, help="per cohort (default 10)")
    judge.add_argument(
        "--temperature",
        type=float,
        action="append",
        help="sampling temperature (repeatable; the paper swept 0.01 0.7 1.0 1.5; default 1.0)",
    )
    judge.add_argument(
        "--prompt",
        action="append",
        help="prompt variant: plain, participant or style (repeatable; default plain)",
    )
    judge.add_argument(
        "--seed", type=int, default=0, help="seed every participant's own seed derives from"
    )
    judge.add_argument(
        "--identities",
        action="store_true",
        help="address each participant by a surname and honorific (Ogg et al.; at most 24)",
    )
    judge.add_argument(
        "--orders",
        choices=("shown", "both"),
        default="shown",
        help="rate each pair as shown, or in both orders as Ogg et al.'s LLMs did (default shown)",
    )
    judge.add_argument("--attempts", type=int, default=3, help="asks per rating (default 3)")
    judge.add_argument("--concurrency", type=int, default=4, help="ratings asked at once")
    add_out_argument(judge, folder=False, help=f"file of ratings (default TASK/{RATINGS_FILE})")
    add_base_url_argument(judge)
    add_batch_arguments(judge)
    judge.set_defaults(func=lazy_command("sdtt.commands.align", "run_judge"))

    for name, helptext, func in (
        (
            "score",
            "print cohort agreement and alignment with the humans",
            lazy_command("sdtt.commands.align", "run_score"),
        ),
        (
            "report",
            "write alignment.html with matrices, MDS map and alignment bars",
            lazy_command("sdtt.commands.align", "run_report"),
        ),
    ):
        command = sub.add_parser(
            name, help=helptext, description=helptext[0].upper() + helptext[1:] + "."
        )
        command.add_argument("task", type=Path, help="task folder")
        command.add_argument(
            "ratings", type=Path, nargs="*", help=f"rating files (default TASK/{RATINGS_FILE})"
        )
        command.add_argument(
            "--permutations", type=int, default=1000, help="item-label permutations (default 1000)"
        )
        command.add_argument("--seed", type=int, default=0, help="seed of permutations, bootstrap")
        command.add_argument(
            "--judgements",
            type=Path,
            action="append",
            help="judgement file(s) of the Turing verdicts: LLM judges against human judges",
        )
        if name == "report":
            add_out_argument(command, folder=True, required=True, help="folder for the report")
            command.add_argument("--title", default="Judge alignment", help="report title")
        command.set_defaults(func=func)
