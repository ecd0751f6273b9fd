"""``sdtt detectors``: a study's pairs for automatic detectors, and their scores beside
the judges' (the formats are described in :mod:`sdtt.questionnaires.detectors`, the
measures in :mod:`sdtt.analysis.detection`)."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from sdtt.analysis.detection import judge_item_scores, score_table
from sdtt.commands.console import CliConsole
from sdtt.commands.detectors_parser import EXPORT_FOLDER
from sdtt.commands.score_common import print_escaped_table, read_table
from sdtt.errors import InputError
from sdtt.files import output_folder
from sdtt.questionnaires import detectors
from sdtt.redact import shown
from sdtt.tasks.questionnaire import load_key, load_questionnaire


def _items(study: Path) -> list[detectors.DetectorItem]:
    questionnaire = load_questionnaire(study)
    key = load_key(study, questionnaire)
    items = detectors.detector_items(questionnaire, key)
    if not items:
        raise InputError(
            "has no test pairs to give detectors.",
            path=study,
            hint="Build a study with test pairs.",
        )
    return items


def run_export(args: argparse.Namespace) -> int:
    """``sdtt detectors export``."""
    items = _items(args.study)
    out = output_folder(args.out or args.study / EXPORT_FOLDER)
    console = CliConsole(highlight=False)
    for fmt in args.format or detectors.FORMATS:
        pairs, key = detectors.write_export(items, fmt, out)
        console.print(f"{len(items)} pairs for detectors: {shown(str(pairs))}")
        console.print(f"  answer key (never give it to the detector): {shown(str(key))}")
    return 0


def run_score(args: argparse.Namespace) -> int:
    """``sdtt detectors score``."""
    items = _items(args.study)
    truth = {item.pair_id: item.second_is_human for item in items}
    scored: dict[str, dict[str, float]] = {}
    for path in args.scores:
        name = f"detector {path.stem}"
        if name in scored:
            raise InputError(
                "names a detector already given (files are named by their stem).",
                path=path,
                hint="Rename one of the files.",
            )
        scored[name] = detectors.read_scores(path, items, args.format)
    if args.judgements:
        frame = read_table(args.judgements, console=CliConsole(stderr=True))
        scored.update(judge_item_scores(frame, truth))
    rows = []
    differ: list[str] = []
    for name, scores in score_table(truth, scored):
        if not math.isclose(scores.c_at_1, scores.c_at_1_pan_code):
            differ.append(f"{name} {_number(scores.c_at_1_pan_code)}")
        cells = [
            scores.roc_auc,
            scores.brier,
            scores.c_at_1,
            scores.f1,
            scores.f05u,
            scores.mean,
            scores.accuracy,
        ]
        rows.append(
            [name, str(scores.items), str(scores.answered), *(_number(value) for value in cells)]
        )
    header = [
        *("scorer", "pairs", "answered", "ROC-AUC", "Brier", "C@1", "F1", "F0.5u", "mean"),
        "accuracy",
    ]
    print_escaped_table(
        CliConsole(highlight=False),
        f"PAN measures on the study's {len(items)} test pairs",
        header,
        rows,
        "Positive class: chat 2's User B is the person (text2 / dialogue B). Judges' "
        "score for a pair: the share of the group saying so; 0.5 = no answer. Brier is "
        "1 - Brier score; mean is PAN's overall figure, of the five before it; accuracy is "
        "the Inverse Turing Bench's (a non-answer counts as wrong); every measure is "
        "higher-is-better.",
    )
    if differ:
        CliConsole(highlight=False).print(
            "C@1 as PAN's evaluator code computes it (it counts a 0.5 on a pair whose "
            "chat 1 is the person as correct), to compare with PAN's leaderboard: "
            + shown("; ".join(differ))
        )
    return 0


def _number(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.3f}"
