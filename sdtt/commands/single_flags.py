"""The flags the single-item commands share (``sdtt wordassoc``, ``sdtt captions``):
declared once, imported by their parsers (light: no numpy, no trio)."""

from __future__ import annotations

import argparse
from pathlib import Path

from sdtt.commands import lazy_command
from sdtt.commands.common import add_base_url_argument, add_out_argument
from sdtt.single.svm_options import DEFAULT_EMBEDDING, DEFAULT_FOLDS, EMBEDDINGS


def add_model_arguments(parser: argparse.ArgumentParser, example: str) -> None:
    """``--model`` (required), ``--seed``, ``--base-url`` and ``--api-key-env``."""
    parser.add_argument("--model", required=True, help=f"provider/model, e.g. {example}")
    parser.add_argument("--seed", type=int, default=0, help="seed of every call (default 0)")
    add_base_url_argument(parser)


def add_write_arguments(parser: argparse.ArgumentParser, what: str, suffix: str = ".jsonl") -> None:
    """``--out`` (the file written, required) and ``--force``."""
    add_out_argument(
        parser, folder=False, required=True, help=f"file of {what} to write ({suffix})"
    )
    parser.add_argument("--force", action="store_true", help="replace --out when it exists")


def add_verdicts_out(parser: argparse.ArgumentParser) -> None:
    """``--out`` (optional: the per-response verdicts of a judge) and ``--force``."""
    add_out_argument(parser, folder=False, help="file of per-response verdicts to write (.jsonl)")
    parser.add_argument("--force", action="store_true", help="replace --out when it exists")


def add_svm_parser(
    actions: argparse._SubParsersAction[argparse.ArgumentParser], task: str, module: str
) -> None:
    """The ``svm`` action: the papers' SVM judge, cross-validated on response files."""
    held_out = "cues" if task == "wordassoc" else "images"
    parser = actions.add_parser(
        "svm",
        help="cross-validate the papers' SVM judge on response files",
        description=(
            "Train and test a linear SVM telling human from machine responses by their "
            f"embeddings, in folds that never put one of the {held_out} in both the training "
            "and the test part. Prints p(H|H), p(M|M) and detectability, overall and per "
            "machine; --out writes each response's verdict. Excluded responses are left out."
        ),
    )
    parser.add_argument(
        "files",
        nargs="+",
        type=Path,
        metavar="FILE",
        help="response files (.jsonl), human and machine",
    )
    parser.add_argument(
        "--embedding",
        choices=EMBEDDINGS,
        default=DEFAULT_EMBEDDING,
        help=f"char: hashed character n-grams, offline; minilm: all-MiniLM-L6-v2 (the "
        f"embeddings extra) (default {DEFAULT_EMBEDDING})",
    )
    parser.add_argument(
        "--folds", type=int, default=DEFAULT_FOLDS, help=f"folds at most (default {DEFAULT_FOLDS})"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the fold split (default 0)")
    add_verdicts_out(parser)
    parser.set_defaults(func=lazy_command(module, "run_svm"))


def add_preview_parser(
    actions: argparse._SubParsersAction[argparse.ArgumentParser], module: str
) -> None:
    """The ``preview`` action: an HTML page of the items as judges see them."""
    parser = actions.add_parser(
        "preview",
        help="write an HTML page of the items, as judges see them",
        description=(
            "Write one HTML page showing every usable response as a judge sees it (cue and "
            "association, or image and caption), escaped, shuffled, without who wrote it: to "
            "check the items before a survey is built."
        ),
    )
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE", help="response files")
    parser.add_argument(
        "--images", type=Path, help="folder of the images (captions), embedded as data URIs"
    )
    parser.add_argument(
        "--image-base", help="link images under this URL or folder instead of embedding them"
    )
    add_write_arguments(parser, "the items", ".html")
    parser.set_defaults(func=lazy_command(module, "run_preview"))


def add_llm_judge_parser(
    actions: argparse._SubParsersAction[argparse.ArgumentParser], task: str, module: str
) -> None:
    """The ``llm-judge`` action: the papers' zero-shot LLM judge."""
    several = "10 associations of a cue" if task == "wordassoc" else "7 captions of an image"
    parser = actions.add_parser(
        "llm-judge",
        help="let an LLM judge the responses with the papers' zero-shot prompt",
        description=(
            f"Ask a model the papers' zero-shot question about up to {several} at a time "
            "(shuffled), and read a Human or AI-generated label per response from its "
            "'Summary of Classifications'. Prints p(H|H), p(M|M) and detectability; replies "
            "without a readable summary give no verdict and are counted."
        ),
    )
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE", help="response files")
    add_model_arguments(parser, "openai/gpt-4o")
    if task == "caption":
        parser.add_argument(
            "--images", type=Path, required=True, help="folder of the images, shown to the judge"
        )
    add_verdicts_out(parser)
    parser.set_defaults(func=lazy_command(module, "run_llm_judge"))


def add_catch_parser(
    actions: argparse._SubParsersAction[argparse.ArgumentParser], task: str, module: str
) -> None:
    """The ``catch`` action: the papers' catch trials, as attention checks."""
    example = "the cue repeated" if task == "wordassoc" else "one word repeated four times"
    parser = actions.add_parser(
        "catch",
        help="write catch items (attention checks) as the papers made them",
        description=(
            f"Write COUNT catch items ({example}, as in the papers' Table S3) on stimuli "
            "drawn at random: shown to judges like any item, truth machine, never used by "
            "the SVM or LLM judges."
        ),
    )
    parser.add_argument("--count", type=int, required=True, help="how many catch items")
    if task == "wordassoc":
        parser.add_argument(
            "--cues", type=Path, help="file of cue words (default: the bundled 150)"
        )
    else:
        parser.add_argument("--images", type=Path, required=True, help="folder of the images")
    parser.add_argument("--seed", type=int, default=0, help="seed of the draw (default 0)")
    add_write_arguments(parser, "catch items")
    parser.set_defaults(func=lazy_command(module, "run_catch"))


def add_items_parser(
    actions: argparse._SubParsersAction[argparse.ArgumentParser], task: str, module: str
) -> None:
    """The ``items`` action: response files as single items for ``sdtt single build``."""
    shown = "cue and association" if task == "wordassoc" else "image and caption"
    parser = actions.add_parser(
        "items",
        help="turn response files into single items for sdtt single build",
        description=(
            f"Write every usable response ({shown}) as a single item, the truth kept for "
            "the key: 'sdtt single build' then makes the survey (a judge never sees two "
            "responses to one stimulus), 'sdtt single export/import/score' run it. Catch "
            "responses become catch items (attention checks); disqualified ones are left out."
        ),
    )
    parser.add_argument(
        "files",
        nargs="+",
        type=Path,
        metavar="FILE",
        help="response files (generate, import, catch)",
    )
    if task == "caption":
        where = parser.add_mutually_exclusive_group(required=True)
        where.add_argument(
            "--images", type=Path, help="folder of the images, embedded in the items as data URIs"
        )
        where.add_argument(
            "--image-base", help="link the images under this http(s) URL instead of embedding"
        )
    add_write_arguments(parser, "single items")
    parser.set_defaults(func=lazy_command(module, "run_items"))


def add_judging_actions(
    actions: argparse._SubParsersAction[argparse.ArgumentParser], task: str, module: str
) -> None:
    """The actions every single-item task has after its own generate and import:
    ``catch``, ``preview``, ``items``, ``llm-judge`` and ``svm``."""
    add_catch_parser(actions, task, module)
    add_preview_parser(actions, module)
    add_items_parser(actions, task, module)
    add_llm_judge_parser(actions, task, module)
    add_svm_parser(actions, task, module)
