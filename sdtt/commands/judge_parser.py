"""The parser of ``sdtt judge``; the command runs in :mod:`sdtt.commands.judge`."""

from __future__ import annotations

import argparse
from pathlib import Path

from sdtt.commands import lazy_command
from sdtt.commands.common import (
    add_base_url_argument,
    add_batch_arguments,
    add_concurrency_argument,
    add_out_argument,
)
from sdtt.judges.classifier_options import DEFAULT_FEATURE_SETS, FEATURE_SETS, GROUPINGS
from sdtt.judges.llm_options import (
    DEFAULT_ATTEMPTS,
    DEFAULT_CONCURRENCY,
    JUDGE_KINDS,
    ORDER_POLICIES,
)

DEFAULT_OUT = "judgements.jsonl"
DEFAULT_TRACES = "traces.jsonl"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``sdtt judge``."""
    parser = subparsers.add_parser(
        "judge",
        description=(
            "Show every pair of a built study to an LLM judge, exactly as human judges see "
            "it, and write one judgement record per answer. The paired judge is asked both "
            "orders of every pair (position bias and order consistency are reported by "
            "'sdtt score'); zero-shot and one-shot judges label each chat alone. Answers "
            "that cannot be read are asked again, then recorded as non-compliant."
        ),
    )
    parser.add_argument("study", type=Path, help="study folder (questionnaire and answer key)")
    parser.add_argument("--model", default=None, help="judge model, provider/model")
    add_base_url_argument(parser)
    parser.add_argument(
        "--classifier",
        action="store_true",
        help="instead of an LLM: cross-validate a linear SVM on side-B messages and print "
        "its accuracy and detectability per feature set (writes no judgements)",
    )
    parser.add_argument(
        "--features",
        default=",".join(DEFAULT_FEATURE_SETS),
        help="classifier feature sets, comma-separated: " + ", ".join(FEATURE_SETS),
    )
    parser.add_argument(
        "--level",
        choices=("message", "side"),
        default="message",
        help="classify single messages or a chat's whole side B (default message)",
    )
    parser.add_argument(
        "--group-by",
        choices=GROUPINGS,
        default="conversation",
        help=(
            "classifier folds never split a source conversation; 'persona' also keeps "
            "each persona's chats on one side of every fold (default conversation)"
        ),
    )
    parser.add_argument(
        "--folds",
        type=int,
        default=10,
        help="classifier: most cross-validation folds (fewer with few conversations; default 10)",
    )
    parser.add_argument(
        "--judge", choices=JUDGE_KINDS, default="paired", help="judge kind (default paired)"
    )
    add_out_argument(
        parser,
        folder=False,
        help=(
            f"file of judgements (default STUDY/{DEFAULT_OUT}); appended to as each answer "
            "arrives, and a rerun asks only what it does not hold yet"
        ),
    )
    parser.add_argument(
        "--attempts",
        type=int,
        default=DEFAULT_ATTEMPTS,
        help=f"asks per judgement before it counts as non-compliant (default {DEFAULT_ATTEMPTS})",
    )
    parser.add_argument(
        "--orders",
        choices=ORDER_POLICIES,
        default="both",
        help=(
            "paired judge: 'both' asks every pair in both orders (two judgements a pair; "
            "measures position bias), 'random' one seeded order a pair (one judgement a "
            "pair, as in the paper) (default both)"
        ),
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the --orders random draw (default 0)"
    )
    parser.add_argument("--run", default=None, help="label of this run (part of the judge id)")
    add_concurrency_argument(
        parser,
        default=DEFAULT_CONCURRENCY,
        help=f"pairs judged at once (default {DEFAULT_CONCURRENCY})",
    )
    parser.add_argument(
        "--reveal",
        action="store_true",
        help="reveal mode: show each pair turn by turn and ask for a belief (0-100) after "
        f"every turn; writes belief traces (default STUDY/{DEFAULT_TRACES})",
    )
    parser.add_argument(
        "--logprobs",
        action="store_true",
        help="with --reveal: also read the belief from token log-probabilities, where the "
        "provider gives them (a second trace per pair)",
    )
    add_batch_arguments(parser)
    parser.set_defaults(func=lazy_command("sdtt.commands.judge"))
