"""The parser of ``sdtt questionnaire``; the command runs in :mod:`sdtt.commands.questionnaire`."""

from __future__ import annotations

import argparse
from pathlib import Path

from sdtt.commands import lazy_command
from sdtt.commands.common import add_actions, add_out_argument
from sdtt.surveys.tools import TOOLS, either, reveal_tools
from sdtt.tasks.study import TIMESTAMPS


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``sdtt questionnaire build|export|check``."""
    actions = add_actions(
        subparsers,
        "questionnaire",
        dest="questionnaire_command",
        description=(
            "Pair bot conversations with human-human conversations on the same topic, cut "
            "both to their last X turns, and build a questionnaire (opaque ids only) with a "
            "separate answer key; export it for SurveyJS, Qualtrics, jsPsych, LimeSurvey, "
            "print or CSV."
        ),
    )

    build = actions.add_parser(
        "build",
        help="build a questionnaire and its answer key",
        description=(
            "Build OUT/questionnaire.json (what judges get) and OUT/answer-key.json (never "
            "give it to judges or upload it). Settings come from --spec (TOML or JSON, see "
            "questionnaires/example-study.toml) and are overridden by the flags."
        ),
    )
    build.add_argument("--spec", type=Path, help="study spec file (.toml or .json)")
    build.add_argument(
        "--bot",
        action="append",
        metavar="FILE[#ID]",
        help="bot transcript file (all its conversations) or one conversation; repeatable",
    )
    build.add_argument(
        "--human",
        action="append",
        metavar="corpus|persona|FILE[#ID]",
        help=(
            "human-human conversations to compare with: 'corpus' (same topic, from the "
            "chitchat corpus; the default), 'persona' (the imitated person's own chats "
            "that its persona holds out of every prompt: see 'sdtt persona hold-out'), a "
            "transcript file, or FILE#ID; once for all "
            "--bot or once per --bot"
        ),
    )
    build.add_argument(
        "--x",
        type=int,
        action="append",
        metavar="N",
        dest="x_turns",
        help="last N turns to show (repeatable; default from the spec, else 3 and 10)",
    )
    build.add_argument(
        "--total-turns",
        type=int,
        action="append",
        metavar="T",
        dest="total_turns",
        help="the paper's design: whole live chats at total turn index T = N pseudo + X live "
        "turns (repeatable, e.g. --total-turns 3 --total-turns 10 --total-turns 110)",
    )
    build.add_argument(
        "--chunk",
        type=int,
        action="append",
        metavar="K",
        dest="chunk_turns",
        help="length curve: also show the first K turns of the same chats (repeatable)",
    )
    build.add_argument("--seed", type=int, help="random seed (ids, positions, order)")
    build.add_argument("--name", help="study name (researcher-side only)")
    build.add_argument("--title", help="title judges see")
    build.add_argument("--catch", type=int, metavar="N", help="number of catch pairs (0-3)")
    build.add_argument(
        "--timestamps",
        choices=TIMESTAMPS,
        help="how message times are shown: hidden (the default, as in the paper), relative "
        "(since each chat's first line), time or datetime (both chats of a pair moved onto "
        "the same made-up day and hour)",
    )
    build.add_argument(
        "--drop-meaningless",
        action="store_true",
        help="in ping-pong pairs, leave out human turns with an empty or meaningless message "
        "(no letter or digit) after the conversion to ping-pong (counts reported)",
    )
    build.add_argument(
        "--pairs-per-judge",
        type=int,
        metavar="K",
        help=(
            "split the pairs across judges: each judge sees K test pairs (the paper used "
            "5), every pair gets the same number of judges, bot position and order balanced"
        ),
    )
    build.add_argument(
        "--no-topic-check", action="store_true", help="do not ask the topic of each pair"
    )
    build.add_argument(
        "--completion-url", help="send judges here at the end (e.g. Prolific's completion URL)"
    )
    build.add_argument(
        "--allow-topic-mismatch",
        action="store_true",
        help="use pairs whose topics differ (recorded in the answer key) instead of failing",
    )
    build.add_argument(
        "--skip-invalid",
        action="store_true",
        help="leave out pairs that are too short or unmatched (recorded) instead of failing",
    )
    add_out_argument(
        build, folder=True, required=True, help="folder of the study to write (created if needed)"
    )
    build.add_argument(
        "--force",
        action="store_true",
        help="replace a study already in --out (never one whose answer key scored answers)",
    )
    build.set_defaults(func=lazy_command("sdtt.commands.questionnaire", "run_build"))

    export = actions.add_parser(
        "export",
        help="export a built questionnaire for survey tools",
        description=(
            "Write the questionnaire of STUDY (a folder from 'build') in the chosen formats "
            "into STUDY/export/ (or --out). Formats: "
            + ", ".join(f"{name} ({tool.description})" for name, tool in TOOLS.items())
            + ". When the answer key is beside the questionnaire, every export is scanned "
            "for model, persona and conversation names."
        ),
    )
    export.add_argument("study", type=Path, metavar="STUDY", help="study folder")
    export.add_argument(
        "--format",
        action="append",
        choices=[*TOOLS, "all"],
        dest="formats",
        help="format to write (repeatable; default all)",
    )
    add_out_argument(export, folder=True, help="folder for the files (default STUDY/export)")
    export.add_argument(
        "--data-url", help="jsPsych: URL the page POSTs its CSV to at the end (optional)"
    )
    export.add_argument(
        "--reveal",
        action="store_true",
        help="reveal mode: each pair shown turn by turn with a 0-100 belief slider after "
        f"every turn ({either(reveal_tools(), 'and')} only, which are then the default formats)",
    )
    export.set_defaults(func=lazy_command("sdtt.commands.questionnaire", "run_export"))

    check = actions.add_parser(
        "check",
        help="check a .qsf, LimeSurvey .txt or SurveyJS .json file's structure",
        description=(
            "Structural checks of Qualtrics .qsf, SurveyJS .json and LimeSurvey .txt/.tsv "
            "files: cross-references, question counts, unique names and tags. Exits with 1 "
            "when problems are found."
        ),
    )
    check.add_argument(
        "files", type=Path, nargs="+", metavar="FILE", help="exported questionnaire files to check"
    )
    check.set_defaults(func=lazy_command("sdtt.commands.questionnaire", "run_check"))
