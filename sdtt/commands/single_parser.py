"""The parser of ``sdtt single``; the command runs in :mod:`sdtt.commands.single`."""

from __future__ import annotations

import argparse
from pathlib import Path

from sdtt.commands import lazy_command
from sdtt.commands.common import (
    add_actions,
    add_base_url_argument,
    add_concurrency_argument,
    add_out_argument,
)

ANSWERS_FILE = "answers.jsonl"
DEFAULT_CUTS = "3,6,9,12,15,18,21,24"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``sdtt single`` and its subcommands."""
    from sdtt.surveys.tools import TOOLS, either, single_tools

    able = single_tools()
    unable = [name for name in TOOLS if name not in able]
    formats = [*able, *unable]
    sub = add_actions(
        subparsers,
        "single",
        dest="single_command",
        description=(
            "Single-item Turing-like tests (Zhang, Kreiman et al.): a judge reads one item "
            "(a conversation cut after 3, 6, ..., 24 exchanges) and says for each speaker "
            "human or machine. Build balanced forms, export them, import answers, let LLM "
            "judges answer zero- or one-shot, score per class (HH, HM, MH, MM) and cut, and "
            "make machine-machine chats the papers' way."
        ),
    )

    build = sub.add_parser(
        "build",
        help="cut conversations into items and hand out balanced forms",
        description="Cut every conversation (transcript files) at each cut, or read items "
        "(an items file, e.g. from 'sdtt wordassoc items' or 'sdtt captions items'), add "
        "catch items and the topic check, and hand out forms so no judge sees two items of "
        "one conversation (or of one cue or image). Writes single-task.json (what judges "
        "see), single-key.json (researcher-only) and items.jsonl.",
    )
    build.add_argument(
        "sources", type=Path, nargs="+", help="transcript files (.jsonl) or items files"
    )
    add_out_argument(build, folder=True, required=True, help="folder for the study")
    build.add_argument(
        "--force",
        action="store_true",
        help="replace a study already in --out (never one that holds answers)",
    )
    build.add_argument(
        "--cuts",
        default=DEFAULT_CUTS,
        help=f"exchanges shown, comma-separated (default {DEFAULT_CUTS})",
    )
    build.add_argument("--forms", type=int, default=1, help="forms (judge groups; default 1)")
    build.add_argument(
        "--per-judge", type=int, default=20, help="items per form (default 20, as the papers)"
    )
    build.add_argument(
        "--catch-per-judge",
        type=int,
        default=0,
        help="catch items per form (default 0): the items files' own catch items, or made "
        "from the chats",
    )
    build.add_argument("--confidence", action="store_true", help="ask a 1-5 confidence per verdict")
    build.add_argument("--reason", action="store_true", help="ask an optional reason per item")
    build.add_argument(
        "--no-topic-check",
        dest="topic_check",
        action="store_false",
        help="leave out the topic question asked of every item with a topic",
    )
    build.add_argument("--seed", type=int, default=0, help="seed of ids, topics and forms")
    build.set_defaults(func=lazy_command("sdtt.commands.single", "run_build"))

    export = sub.add_parser(
        "export",
        help=f"export a single-item study for {either(able)}",
        description="Write the study for survey tools (default: every supported format). "
        f"The formats {either(unable, 'and')} are not supported for single-item studies.",
    )
    export.add_argument("study", type=Path, help="study folder")
    export.add_argument(
        "--format",
        action="append",
        choices=formats,
        help=f"{either(able)} (repeatable; default all of them)",
    )
    export.add_argument(
        "--data-url", help="jsPsych: where the page POSTs its CSV at the end (default none)"
    )
    add_out_argument(export, folder=True, help="folder for the exports (default STUDY/export)")
    export.set_defaults(func=lazy_command("sdtt.commands.single", "run_export"))

    imp = sub.add_parser(
        "import",
        help=f"import human judges' answers from {either(able)}",
        description="Read response files into the answers table (appended; answers "
        "already there are skipped).",
    )
    imp.add_argument("study", type=Path, help="study folder")
    imp.add_argument("files", type=Path, nargs="+", metavar="FILE", help="response files")
    imp.add_argument(
        "--format",
        required=True,
        choices=formats,
        help=f"the tool that saved FILE: {either(able)} ({either(unable, 'and')} cannot field "
        "single items)",
    )
    add_out_argument(imp, folder=False, help=f"file of answers (default STUDY/{ANSWERS_FILE})")
    imp.set_defaults(func=lazy_command("sdtt.commands.single", "run_import"))

    judge = sub.add_parser(
        "judge",
        help="let an LLM judge every item (zero- or one-shot)",
        description="Ask a model about every item with the papers' prompt (one-shot: one "
        "labelled whole conversation first; its conversation is not judged). Answers are "
        "appended as they arrive; a rerun asks only what is missing. An unreadable answer "
        "is asked again, then recorded as excluded (never guessed).",
    )
    judge.add_argument("study", type=Path, help="study folder")
    judge.add_argument("--model", required=True, help="provider/model of the judge")
    judge.add_argument(
        "--kind",
        choices=("zero-shot", "one-shot"),
        default="zero-shot",
        help="prompt (default zero-shot)",
    )
    judge.add_argument(
        "--example",
        help="one-shot: the item (its readable id, e.g. chat7@24) shown as the example "
        "(default: the longest cut of a conversation whose A is human and B a machine)",
    )
    judge.add_argument("--attempts", type=int, default=3, help="asks per item (default 3)")
    add_concurrency_argument(judge, default=4, help="items asked at once (default 4)")
    add_out_argument(judge, folder=False, help=f"file of answers (default STUDY/{ANSWERS_FILE})")
    add_base_url_argument(judge)
    judge.set_defaults(func=lazy_command("sdtt.commands.single", "run_judge"))

    score = sub.add_parser(
        "score",
        help="p(H|H), p(M|M), detectability and the papers' tests per class and cut",
        description="Score answers per judge group, class and cut: p(H|H) and p(M|M) with "
        "Wilson intervals, detectability with a bootstrap interval over judges, one-sample "
        "Wilcoxon tests against 0.5, Mann-Whitney HH vs MM, permutation tests between cuts "
        "with Bonferroni. Judges below --min-topic-share are left out, and so are trials "
        "with a wrong topic; catch items are reported apart.",
    )
    score.add_argument("study", type=Path, help="study folder")
    score.add_argument(
        "answers", type=Path, nargs="*", help=f"answer files (default STUDY/{ANSWERS_FILE})"
    )
    score.add_argument(
        "--min-topic-share",
        type=float,
        default=0.75,
        help="share of topic checks a human judge must pass (default 0.75, 15 of 20)",
    )
    score.add_argument(
        "--bootstrap", type=int, default=2000, help="bootstrap replicates (default 2000)"
    )
    score.add_argument("--seed", type=int, default=0, help="seed of bootstrap and permutations")
    score.add_argument("--csv", type=Path, help="also write the rows to this CSV file")
    score.set_defaults(func=lazy_command("sdtt.commands.single", "run_score"))

    chats = sub.add_parser(
        "machine-chats",
        help="make machine-machine chats the papers' way",
        description="Two models (or one with itself) talk about a topic under the papers' "
        "prompt; each reply's length is drawn from human word counts and a longer reply "
        "cut at punctuation, a too short or repeated reply is asked again with a rising "
        "temperature. Every setting is recorded in each transcript.",
    )
    chats.add_argument(
        "--model",
        action="append",
        required=True,
        help="provider/model of speaker A; give it twice for a different speaker B",
    )
    chats.add_argument(
        "--lengths-from",
        type=Path,
        action="append",
        required=True,
        help="transcript file(s) whose human messages give the word counts (repeatable)",
    )
    chats.add_argument(
        "--topic", action="append", help="topic (repeatable; default the papers' ten domains)"
    )
    chats.add_argument("--count", type=int, default=1, help="chats to make (default 1)")
    chats.add_argument("--exchanges", type=int, default=24, help="messages per chat (default 24)")
    chats.add_argument(
        "--temperature", type=float, default=0.8, help="first temperature (default 0.8)"
    )
    chats.add_argument(
        "--temperature-step",
        type=float,
        default=0.2,
        help="temperature added per unusable reply (default 0.2)",
    )
    chats.add_argument(
        "--temperature-max", type=float, default=1.4, help="highest temperature (default 1.4)"
    )
    chats.add_argument(
        "--min-words", type=int, default=1, help="shortest usable reply in words (default 1)"
    )
    chats.add_argument("--seed", type=int, default=0, help="seed of names, lengths and calls")
    add_out_argument(chats, folder=False, required=True, help="file of transcripts (.jsonl)")
    chats.add_argument("--force", action="store_true", help="replace --out when it exists")
    add_base_url_argument(chats)
    chats.set_defaults(func=lazy_command("sdtt.commands.single", "run_machine_chats"))
