"""The parser of ``sdtt detectors``; the command runs in :mod:`sdtt.commands.detectors`."""

from __future__ import annotations

import argparse
from pathlib import Path

from sdtt.commands import lazy_command
from sdtt.commands.common import add_actions, add_out_argument

FORMATS = ("itb", "itb-bench", "pan")
"""Inverse Turing Bench (sdtt's blind JSONL, and the bench's own CSV) and PAN 2024 (kept
here too so the parser stays light; the detectors module checks they agree)."""
EXPORT_FOLDER = "detectors"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``sdtt detectors`` and its subcommands."""
    sub = add_actions(
        subparsers,
        "detectors",
        dest="detectors_command",
        description=(
            "Automatic detectors on a study's own test pairs: export the pairs in the "
            "Inverse Turing Bench shape (itb: blind JSONL with a separate key; itb-bench: "
            "the bench's own CSV, id/dialogueA/dialogueB/who_is_human with I:/W: lines) "
            "or PAN 2024 Voight-Kampff (pan) shape, each with its answer key in a separate "
            "file, then score what a detector answered with PAN's measures (ROC-AUC, "
            "Brier, C@1, F1, F0.5u) and the bench's accuracy beside the human and LLM "
            "judges of the same pairs."
        ),
    )

    export = sub.add_parser(
        "export",
        help="write the study's test pairs for detectors, and their answer key apart",
        description="Write what a detector receives (itb-pairs.jsonl, itb-bench.csv, "
        "pan-pairs.jsonl: the two chats of each test pair as judges saw them) and, beside "
        "it, the answer key (itb-key.jsonl, itb-bench-labelled.csv, pan-truth.jsonl): "
        "never give the key to the detector. Example: sdtt detectors export STUDY "
        "--format itb-bench, then the bench's runner: python run_judge.py -m MODEL "
        "--input STUDY/detectors/itb-bench.csv --output predictions.csv.",
    )
    export.add_argument("study", type=Path, help="study folder (questionnaire and answer key)")
    export.add_argument(
        "--format",
        action="append",
        choices=FORMATS,
        help="itb, itb-bench or pan (repeatable; default all three)",
    )
    add_out_argument(
        export, folder=True, help=f"folder for the files (default STUDY/{EXPORT_FOLDER})"
    )
    export.set_defaults(func=lazy_command("sdtt.commands.detectors", "run_export"))

    score = sub.add_parser(
        "score",
        help="score detectors' answers with PAN's measures, beside the judges",
        description="Read each detector's answer file (JSONL, one answer per line: itb "
        "{id, who_is_human: 'A', 'B', P(A is human) or null}; pan {id, is_human: score "
        "0-1, above 0.5 meaning text2 is human, 0.5 no answer}; itb-bench: the bench "
        "runner's predictions CSV, a who_is_human column of A, B or NA, in row order or "
        "with an id column); pairs a file leaves out "
        "count as no answer. With --judgements, human and LLM judges are scored on the "
        "same pairs (a pair's score: the share of a judge group saying chat 2 is human).",
    )
    score.add_argument("study", type=Path, help="study folder (questionnaire and answer key)")
    score.add_argument(
        "scores",
        type=Path,
        nargs="+",
        metavar="SCORES",
        help="a detector's answer file; its name (without .jsonl) names the detector",
    )
    score.add_argument("--format", required=True, choices=FORMATS, help="itb, itb-bench or pan")
    score.add_argument(
        "--judgements",
        type=Path,
        nargs="+",
        default=[],
        metavar="FILE",
        help="judgement files of the same study, scored beside the detectors",
    )
    score.set_defaults(func=lazy_command("sdtt.commands.detectors", "run_score"))
