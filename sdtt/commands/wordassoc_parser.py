"""The parser of ``sdtt wordassoc``; the command runs in :mod:`sdtt.commands.wordassoc`."""

from __future__ import annotations

import argparse
from pathlib import Path

from sdtt.commands import lazy_command
from sdtt.commands.common import add_actions
from sdtt.commands.single_flags import (
    add_judging_actions,
    add_model_arguments,
    add_write_arguments,
)

MODULE = "sdtt.commands.wordassoc"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``sdtt wordassoc cues|generate|import|catch|preview|items|llm-judge|svm``."""
    actions = add_actions(
        subparsers,
        "wordassoc",
        dest="wordassoc_command",
        description=(
            "The word-association task of the Kreiman lab's Turing-like tests: a judge sees a "
            "cue and one association and says whether a human or a machine wrote it. Answers "
            "are post-processed as in the papers (stop words refused, lemmatised, at least 3 "
            "letters, answers too similar to the cue disqualified) and written as response "
            "records (.jsonl)."
        ),
    )

    cues = actions.add_parser(
        "cues",
        help="print the bundled cue list",
        description="Print sdtt's 150 cues (50 nouns, 50 verbs, 50 adjectives), one a line.",
    )
    cues.set_defaults(func=lazy_command(MODULE, "run_cues"))

    generate = actions.add_parser(
        "generate",
        help="ask a model for one association per cue",
        description=(
            "Ask a model 'Name a word that you associate with CUE?' for every cue, post-process "
            "the answer, and ask again (another seed) when post-processing refuses it, up to "
            "--attempts times; what is still refused is kept, marked excluded."
        ),
    )
    add_model_arguments(generate, "openai/gpt-4o-mini or mock/short")
    generate.add_argument(
        "--cues", type=Path, help="file of cue words, one a line (default: the bundled 150)"
    )
    generate.add_argument(
        "--examples",
        type=Path,
        help="CSV (cue,association) of held-out human examples: the papers' prompted version",
    )
    generate.add_argument(
        "--attempts", type=int, default=3, help="asks per cue at most (default 3)"
    )
    add_write_arguments(generate, "machine associations")
    generate.set_defaults(func=lazy_command(MODULE, "run_generate"))

    importing = actions.add_parser(
        "import",
        help="import human associations from CSV",
        description=(
            "Read human associations from a CSV file with the columns cue and association "
            "(optional: participant), post-processed as machine ones are."
        ),
    )
    importing.add_argument("file", type=Path, metavar="FILE", help="CSV of human associations")
    importing.add_argument(
        "--cues", type=Path, help="file of the study's cues: rows naming another cue are refused"
    )
    add_write_arguments(importing, "human associations")
    importing.set_defaults(func=lazy_command(MODULE, "run_import"))

    add_judging_actions(actions, "wordassoc", MODULE)
