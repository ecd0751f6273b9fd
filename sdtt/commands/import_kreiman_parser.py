"""The parser of ``sdtt import-kreiman``; it runs in :mod:`sdtt.commands.import_kreiman`."""

from __future__ import annotations

import argparse
from pathlib import Path

from sdtt.commands import lazy_command
from sdtt.commands.common import add_actions, add_out_argument
from sdtt.commands.single_flags import add_write_arguments

MODULE = "sdtt.commands.import_kreiman"
TASKS = ("wordassoc", "caption")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``sdtt import-kreiman
    responses|groundtruth|conversations|psiturk|compiled|verdicts``."""
    actions = add_actions(
        subparsers,
        "import-kreiman",
        dest="kreiman_command",
        description=(
            "Import the files of the Kreiman lab's released Turing-test code and data into "
            "sdtt's records: response files and ground-truth dictionaries (response records), "
            "conversations (transcripts), psiTurk judge trials, compiled single-item results "
            "(a study 'sdtt single score' scores) and per-exchange verdicts (belief traces)."
        ),
    )

    responses = actions.add_parser(
        "responses",
        help='one agent\'s {"stimulus": "response"} file',
        description=(
            'Read a {"cue": "association"} or {"0001.jpg": "caption"} file, all written by one '
            "agent (--agent). Word associations are post-processed as sdtt's own are."
        ),
    )
    responses.add_argument("file", type=Path, metavar="FILE", help="the JSON response file")
    responses.add_argument("--task", choices=TASKS, required=True, help="what the file answers")
    responses.add_argument(
        "--agent", required=True, help="who wrote the responses (a model's name, or a label)"
    )
    responses.add_argument(
        "--human", action="store_true", help="the agent is a person (default: a machine)"
    )
    add_write_arguments(responses, "response records")
    responses.set_defaults(func=lazy_command(MODULE, "run_responses"))

    truth = actions.add_parser(
        "groundtruth",
        help="a ground-truth dictionary {stimulus: [{response, groundtruth, ...}]}",
        description=(
            "Read a ground-truth dictionary: every response of every stimulus with its "
            "groundtruth (human or machine) and machine_groundtruth (the model)."
        ),
    )
    truth.add_argument("file", type=Path, metavar="FILE", help="the JSON dictionary")
    truth.add_argument("--task", choices=TASKS, required=True, help="what the file answers")
    add_write_arguments(truth, "response records")
    truth.set_defaults(func=lazy_command(MODULE, "run_groundtruth"))

    conversations = actions.add_parser(
        "conversations",
        help="a folder of <p> A: ... </p> conversation files",
        description=(
            "Read every convN_lenL.html of a folder (one <p> A: ... </p> or <p> B: ... </p> per "
            "message) as transcripts; --labels (their correct_answers.json) says who each "
            "speaker was. Their files hold no times: messages get synthetic ones, marked."
        ),
    )
    conversations.add_argument("folder", type=Path, metavar="DIR", help="folder of .html files")
    conversations.add_argument(
        "--labels", type=Path, help='JSON of classes, e.g. {"conv12_len6": "HAI"}'
    )
    add_write_arguments(conversations, "transcripts")
    conversations.set_defaults(func=lazy_command(MODULE, "run_conversations"))

    psiturk = actions.add_parser(
        "psiturk",
        help="judges' trials and demographics from psiTurk (or their compiled JSON)",
        description=(
            "Read their judges' answers into one JSON line per conversation trial "
            "(conversation, length, the class the judge chose, the true class and whether it "
            "was a catch trial when recorded, topic, reaction time) followed by one per "
            "judge's demographics. FILE is psiTurk's participants table as they released it "
            "(new_results_prolific.csv: a header line, 18 columns, the trials in the "
            "datastring JSON; or a participants_*.db), psiTurk's trialdata.csv (no header, "
            "4 columns), or their compiled .json. When the trials carry their true class "
            "(trueLabel) or --labels is given, prints p(H|H), p(M|M) and detectability per "
            "class, catch trials left out and reported apart."
        ),
        epilog=(
            "examples:\n"
            '  sdtt import-kreiman psiturk "Participants results - datasets/'
            'new_results_prolific.csv" -o trials.jsonl\n'
            "  sdtt import-kreiman psiturk trialdata.csv --questions questiondata.csv "
            "--labels correct_answers.json -o trials.jsonl"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    psiturk.add_argument(
        "file",
        type=Path,
        metavar="FILE",
        help="participants table (.csv or .db), trialdata.csv, or the compiled .json",
    )
    psiturk.add_argument("--questions", type=Path, help="psiTurk's questiondata.csv")
    psiturk.add_argument(
        "--labels",
        type=Path,
        help="their class labels (correct_answers.json): print p(H|H), p(M|M) and "
        "detectability per class of conversation",
    )
    add_write_arguments(psiturk, "trials and demographics")
    psiturk.set_defaults(func=lazy_command(MODULE, "run_psiturk"))

    compiled = actions.add_parser(
        "compiled",
        help="their compiled single-item results, as a study 'sdtt single score' scores",
        description=(
            "Read their compiled word-association or image-captioning results "
            '({group: {"Trial_N": {workerID, workerData, trialData: {groundtruth, '
            "response_speaker, machine_groundtruth, caption, ...}}}}, e.g. "
            "wordAssociation/Plot/savedResults/compiled.json) into a single-item study "
            "folder: its key (one entry per response judged) and its answers (one per "
            "trial). Score it with 'sdtt single score DIR'. Their groups can repeat each "
            "other's trials: with more than one, name those to read with --group."
        ),
        epilog=(
            "examples:\n"
            "  sdtt import-kreiman compiled compiled.json --task wordassoc --group combined "
            "-o runs/wa\n"
            "  sdtt single score runs/wa"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    compiled.add_argument("file", type=Path, metavar="FILE", help="their compiled results .json")
    compiled.add_argument("--task", choices=TASKS, required=True, help="what the judges judged")
    compiled.add_argument(
        "--group",
        action="append",
        default=[],
        metavar="NAME",
        help="a group of trials to read (repeat for more; needed when the file has several)",
    )
    add_out_argument(
        compiled, folder=True, required=True, help="folder of the study to write (key, answers)"
    )
    compiled.add_argument("--force", action="store_true", help="replace the study in --out")
    compiled.set_defaults(func=lazy_command(MODULE, "run_compiled"))

    verdicts = actions.add_parser(
        "verdicts",
        help="per-exchange verdicts with reasons, as belief traces",
        description=(
            "Read per-exchange verdicts into belief traces: their online test's "
            'trials_all.json ({"51.txt": [{"groundtruth", "response", "reason"}, ...]}: one '
            "trace per conversation, a point per exchange), or a CSV (judge, conversation, "
            "exchange, speaker, verdict; optional reason, confidence, judge_type, truth), one "
            "trace per judge and speaker."
        ),
    )
    verdicts.add_argument(
        "file", type=Path, metavar="FILE", help="trials_all.json, or the verdict CSV"
    )
    verdicts.add_argument("--study", required=True, help="the study name the traces belong to")
    verdicts.add_argument(
        "--labels", type=Path, help="their class labels, for rows without a truth column"
    )
    add_write_arguments(verdicts, "belief traces")
    verdicts.set_defaults(func=lazy_command(MODULE, "run_verdicts"))
