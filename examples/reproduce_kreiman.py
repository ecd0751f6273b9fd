"""Reproduce the Kreiman lab's published Turing-test figures from their released data.

Their repository, github.com/kreimanlab/TuringTest, is over 500 MB; this needs only five
of its folders. Clone those alone (about 20 MB)::

    git clone --filter=blob:none --sparse https://github.com/kreimanlab/TuringTest
    cd TuringTest
    git sparse-checkout set "Conversations/Participants results - datasets" \\
        Conversations/turing_online wordAssociation/Plot/savedResults \\
        "Experiments with AI experts/AI experts databases"

then run ``python examples/reproduce_kreiman.py path/to/TuringTest``. For every row their
paper publishes it prints sdtt's figure beside the paper's ("Can machines imitate humans?
Integrative Turing-like tests for language and vision demonstrate a narrowing gap",
Zhang et al.; the figure or table named in the last column).

The conversation task's zero-shot figures (Fig. 4C, 5E) come from their first
collection (``compiled_original_dataset_first_collection.json``), whose trials record the
class each judge chose but not the true one: the classes of those 300 conversations are
taken from the ``trueLabel`` their 2025 run of the same conversations recorded
(``prolific_may30.csv``), or from ``--labels FILE`` (``{"conv12_len6": "HAI"}``). The
image-captioning judges' zero-shot results are not in the repository (only notebooks
reading files on the authors' machines); give their compiled results with
``--captions FILE`` to score them too.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from sdtt.analysis.metrics import Confusion
from sdtt.commands.import_kreiman import read_judges
from sdtt.errors import SdttError
from sdtt.single.response import Task
from sdtt.single.tally import add_verdict
from sdtt.single.theirdata.compiled import (
    JudgementScores,
    group_sizes,
    read_judgements,
    score_judgements,
)
from sdtt.single.theirdata.exchange_verdicts import read_verdicts
from sdtt.single.theirdata.pages import read_class_labels
from sdtt.single.theirdata.psiturk import KreimanTrial
from sdtt.single.theirdata.trial_scores import (
    TrialScores,
    judged_human,
    labels_from_trials,
    score_trials,
)

DATASETS = Path("Conversations/Participants results - datasets")
FIRST = DATASETS / "compiled_original_dataset_first_collection.json"
LABELLED = DATASETS / "prolific_may30.csv"
PARTICIPANTS = DATASETS / "new_results_prolific.csv"
ONLINE = Path("Conversations/turing_online/trials_all.json")
WORDS = Path("wordAssociation/Plot/savedResults/compiled.json")
EXPERTS = Path("Experiments with AI experts/AI experts databases")
EXPERT_CAPTIONS = EXPERTS / "image captioning/compiled_AIexperts_may4.json"
EXPERT_WORDS = EXPERTS / "word association/compiled_AIexperts.json"
ORIGINAL = "static/dataset"
"""The folder of their original 300 conversations (Figs. 4C, 5E)."""
CLONE = (
    "git clone --filter=blob:none --sparse https://github.com/kreimanlab/TuringTest && "
    'cd TuringTest && git sparse-checkout set "Conversations/Participants results - '
    'datasets" Conversations/turing_online wordAssociation/Plot/savedResults "Experiments '
    'with AI experts/AI experts databases"'
)
CAPTIONS_SEARCHED = (
    "not in the repository: imageCaptioning/ holds 13 notebooks and a readme (their inputs, "
    "e.g. Data/main_caption_data.json, are files on the authors' machines), "
    "MiscellaneousCode/ the captioning notebooks and ZeroShotJudge/captions_d.json and "
    "groundtruths_d.json (captions and who wrote them, no verdicts), benchmarking/ the "
    "captions and their ground truth (responses/, groundtruth_dictionaries/); only the AI "
    "experts' verdicts are released (rows below)"
)


@dataclass
class Row:
    name: str
    source: str
    ours: str
    paper: str
    where: str


def text(value: float) -> str:
    return "n/a" if value != value else f"{value:.2f}"


def pooled(scores: TrialScores, names: Iterable[str]) -> Confusion:
    """The speakers of several classes of conversation together."""
    total = Confusion()
    for name in names:
        tally = scores.by_class.get(name, Confusion())
        total.hh, total.mh = total.hh + tally.hh, total.mh + tally.mh
        total.hm, total.mm = total.hm + tally.hm, total.mm + tally.mm
    return total


def speaker_rows(
    what: str, scores: TrialScores, source: str, paper: dict[str, str], where: dict[str, str]
) -> list[Row]:
    """The conversation figures of one run: p(H|H), p(M|M), detectability (Fig. 4C) and
    the classes judged human (Fig. 5E); ``paper`` and ``where`` by figure name."""
    every = scores.by_class.get("all", Confusion())
    mixed = pooled(scores, ("HAI", "AIH"))
    figures = {
        "human speakers judged human p(H|H)": every.rate("H", "H"),
        "machine speakers judged machine p(M|M)": every.rate("M", "M"),
        "detectability (p(H|H) + p(M|M)) / 2": every.detectability,
        "H-H conversations judged human": judged_human(scores.by_class.get("HH", Confusion())),
        "AI-AI conversations judged human": judged_human(scores.by_class.get("AIAI", Confusion())),
        "human-AI, the human judged human": mixed.rate("H", "H"),
        "human-AI, the AI judged machine": mixed.rate("M", "M"),
    }
    return [
        Row(f"{what}: {name}", source, text(value), paper.get(name, "-"), where.get(name, ""))
        for name, value in figures.items()
    ]


def without_repeats(trials: list[KreimanTrial]) -> tuple[list[KreimanTrial], int]:
    """Their groups could hold one judge twice (their word-association file does): a
    judge whose every trial (conversation, class chosen, time) an earlier judge already
    has is left out; returns the trials kept and how many judges were left out."""
    by_worker: dict[str, list[KreimanTrial]] = {}
    for trial in trials:
        by_worker.setdefault(trial.worker, []).append(trial)
    seen: set[tuple[object, ...]] = set()
    kept: list[KreimanTrial] = []
    repeats = 0
    for mine in by_worker.values():
        mark = tuple((t.conversation, t.said_class, t.rt_ms) for t in mine)
        if mark in seen:
            repeats += 1
            continue
        seen.add(mark)
        kept += mine
    return kept, repeats


def first_collection_rows(root: Path, labels_file: Path | None) -> list[Row]:
    """Figs. 4C and 5E from their first collection, labelled as the module says."""
    judges, _empty = read_judges(root / FIRST)
    trials, repeats = without_repeats(judges.trials)
    original = [t for t in trials if t.folder == ORIGINAL]
    if labels_file is not None:
        labels, said = read_class_labels(labels_file), labels_file.name
    elif (root / LABELLED).is_file():
        labelled, _ = read_judges(root / LABELLED)
        ours = [t for t in labelled.trials if t.folder == ORIGINAL]
        labels, said = labels_from_trials(ours, source=str(root / LABELLED)), LABELLED.name
    else:
        labels, said = {}, "no labels"
    scores = score_trials(original, labels)
    people = len({t.worker for t in original})
    left = f", {repeats} repeated judges left out" if repeats else ""
    source = (
        f"{FIRST.name}: {people} judges, {len(original)} trials ({scores.unlabelled} "
        f"without a class in {said}, left out{left})"
    )
    rows = speaker_rows(
        "Conversation, zero-shot",
        scores,
        source,
        {
            "human speakers judged human p(H|H)": "0.66",
            "machine speakers judged machine p(M|M)": "0.47",
            "detectability (p(H|H) + p(M|M)) / 2": "0.57",
            "H-H conversations judged human": "0.64",
            "AI-AI conversations judged human": "0.57",
            "human-AI, the human judged human": "0.68",
            "human-AI, the AI judged machine": "0.56",
        },
        {
            "human speakers judged human p(H|H)": "Fig. 4C",
            "machine speakers judged machine p(M|M)": "Fig. 4C",
            "detectability (p(H|H) + p(M|M)) / 2": "Results (0.57 for the Conversation task)",
            "H-H conversations judged human": "Fig. 5E",
            "AI-AI conversations judged human": "Fig. 5E",
            "human-AI, the human judged human": "Fig. 5E",
            "human-AI, the AI judged machine": "Fig. 5E",
        },
    )
    groups: dict[str, list[KreimanTrial]] = {}
    for trial in original:
        groups.setdefault(trial.worker.rsplit("-", 1)[0], []).append(trial)
    for group, mine in groups.items():
        tally = score_trials(mine, labels).by_class.get("all", Confusion())
        judged = len({t.worker for t in mine})
        rows.append(
            Row(
                f"Conversation, zero-shot, {group} judges: detectability",
                f"{FIRST.name} group {group}: {judged} judges, {len(mine)} trials",
                text(tally.detectability),
                "-",
                "Fig. S3C (a plot; Table S2: 366 online judges x 23 trials, 90 in-lab x 17)",
            )
        )
    chatgpt = [t for t in trials if t.folder not in (ORIGINAL, "")]
    for folder in dict.fromkeys(t.folder for t in chatgpt):
        mine = [t for t in chatgpt if t.folder == folder]
        rows.append(
            Row(
                f"Conversation, ChatGPT-4o conversations ({folder}): judges, trials",
                f"{FIRST.name}",
                f"{len({t.worker for t in mine})} judges, {len(mine)} trials",
                "45 judges, 392 trials; detectability 0.52",
                "Table S4 (their classes are not in the repository: not scored)",
            )
        )
    return rows


def feedback_rows(root: Path) -> list[Row]:
    """Their 2025 Prolific run of the feedback task (Fig. 7K, printed only as a plot)."""
    path = root / PARTICIPANTS
    judges, _empty = read_judges(path)
    scores = score_trials(judges.trials)
    # A judge who finished has the task's closing summary in questiondata; one stopped at
    # a failed catch trial (after 5 trials) has not.
    finished = {w for w, answers in judges.demographics.items() if "total_humanai" in answers}
    done = score_trials(t for t in judges.trials if t.worker in finished)
    source = (
        f"{PARTICIPANTS.name}: {len(scores.by_judge)} judges, "
        f"{sum(1 for t in judges.trials if not t.is_catch)} trials"
    )
    where = "Fig. 7K (a plot: no number printed)"
    rows = speaker_rows(
        "Conversation, feedback run",
        scores,
        source,
        {},
        dict.fromkeys(
            [
                "human speakers judged human p(H|H)",
                "machine speakers judged machine p(M|M)",
                "detectability (p(H|H) + p(M|M)) / 2",
            ],
            where,
        ),
    )[:3]
    return [
        *rows,
        Row(
            "Conversation: catch trials, machine speakers judged machine",
            f"{PARTICIPANTS.name}: {scores.catch_trials} catch trials",
            text(scores.catch.rate("M", "M")),
            "0.96",
            "Table S3 (93 judges, 279 trials; this file holds part)",
        ),
        Row(
            "Conversation: catch trials of the judges who finished",
            f"{PARTICIPANTS.name}: {len(finished)} judges, {done.catch_trials} catch trials",
            text(done.catch.rate("M", "M")),
            "0.96",
            "Table S3 (93 judges x 3 = 279: judges who finished, it seems)",
        ),
    ]


def judgement_rows(
    what: str,
    scores: JudgementScores,
    source: str,
    paper: list[tuple[str, str | None, str, str]],
) -> list[Row]:
    """Rows of p(H|H), p(M|M), detectability or one machine's p(M|M): ``paper`` holds
    (label, machine or None, the paper's figure, where)."""
    rows = []
    for label, machine, published, where in paper:
        if machine is not None:
            tally = next(
                (c for m, c in scores.by_model.items() if m.lower().replace(" ", "") == machine),
                Confusion(),
            )
            value = tally.rate("M", "M")
        elif "p(H|H)" in label:
            value = scores.overall.rate("H", "H")
        elif "p(M|M)" in label:
            value = scores.overall.rate("M", "M")
        else:
            value = scores.overall.detectability
        rows.append(Row(f"{what}: {label}", source, text(value), published, where))
    return rows


def word_rows(root: Path) -> list[Row]:
    """Figs. 4B and 5C: their human judges, the file's ``combined`` group (in-lab and
    AMT; its other groups repeat those trials, or are their SVM judges)."""
    path = root / WORDS
    sizes = group_sizes(read_judgements(path))
    groups = ["combined"] if "combined" in sizes else [g for g in ("inlab", "mturk") if g in sizes]
    judgements = read_judgements(path, groups or None, task="wordassoc")
    people = [j for j in judgements if not j.machine_judge]
    source = (
        f"{WORDS.name} group {'+'.join(groups) or 'all'}: "
        f"{len({j.worker for j in people})} judges, {len(people)} trials"
    )
    rows = judgement_rows(
        "Word association",
        score_judgements(people),
        source,
        [
            ("human judged human p(H|H)", None, "0.58", "Fig. 4B"),
            ("machine judged machine p(M|M)", None, "0.47", "Fig. 4B"),
            ("detectability", None, "0.53", "Results (0.53 for Word association)"),
            ("Word2Vec p(M|M)", "word2vec", "0.58", "Fig. 5C"),
            # Their files spell the model "gpt3 (prompt davinvci)".
            ("GPT3 (prompt DaVinci) p(M|M)", "gpt3(promptdavinvci)", "0.41", "Fig. 5C"),
        ],
    )
    for group in ("inlab", "mturk", "machine"):
        if group not in sizes:
            continue
        mine = read_judgements(path, [group], task="wordassoc")
        judged = "SVM judges" if group == "machine" else "judges"
        where = "Fig. 4E (a plot)" if group == "machine" else "Fig. S3B (a plot)"
        rows.append(
            Row(
                f"Word association, {group} {judged}: detectability",
                f"{WORDS.name} group {group}: {len(mine)} trials",
                text(score_judgements(mine).overall.detectability),
                "-",
                where,
            )
        )
    return rows


CAPTION_ROWS = [
    ("human judged human p(H|H)", None, "0.67", "Fig. 4A"),
    ("machine judged machine p(M|M)", None, "0.46", "Fig. 4A"),
    ("detectability", None, "0.57", "Results (0.57 for Image captioning)"),
    ("BLIP p(M|M)", "blip", "0.37", "Fig. 5A"),
    ("ClipCap p(M|M)", "clipcap", "0.60", "Fig. 5A"),
]


def caption_rows(captions: Path | None) -> list[Row]:
    """Figs. 4A and 5A: from ``--captions``, else said to be missing and where from."""
    if captions is None:
        return [
            Row(
                f"Image captioning: {label}",
                CAPTIONS_SEARCHED if n == 0 else "not in the repository (see the first row)",
                "-",
                paper,
                where,
            )
            for n, (label, _model, paper, where) in enumerate(CAPTION_ROWS)
        ]
    judgements = [j for j in read_judgements(captions, task="caption") if not j.machine_judge]
    source = f"{captions.name}: {len(judgements)} trials"
    return judgement_rows("Image captioning", score_judgements(judgements), source, CAPTION_ROWS)


def expert_rows(root: Path) -> list[Row]:
    """Fig. S4: their AI experts as judges (the confusion matrices are plots only)."""
    rows = []
    experts: list[tuple[Path, Task, str, str]] = [
        (EXPERT_CAPTIONS, "caption", "Image captioning, AI experts", "Fig. S4D (a plot)"),
        (EXPERT_WORDS, "wordassoc", "Word association, AI experts", "Fig. S4H (a plot)"),
    ]
    for path, task, what, where in experts:
        if not (root / path).is_file():
            continue
        judgements = read_judgements(root / path, task=task)
        source = (
            f"{path.name}: {len({j.worker for j in judgements})} judges, {len(judgements)} trials"
        )
        rows += judgement_rows(
            what,
            score_judgements(judgements),
            source,
            [
                ("human judged human p(H|H)", None, "-", where),
                ("machine judged machine p(M|M)", None, "-", where),
            ],
        )
    return rows


def online_rows(root: Path) -> list[Row]:
    traces = read_verdicts(root / ONLINE, study="online")
    tally = Confusion()
    for trace in traces:
        for point in trace.points:
            said = "human" if point.belief > 50 else "machine"
            add_verdict(tally, said, "human" if trace.target_human else "machine")
    source = f"{ONLINE.name}: {len(traces)} conversations"

    def machines_caught(checkpoint: int) -> float:
        said = [t.points[checkpoint].belief <= 50 for t in traces if not t.target_human]
        return sum(said) / len(said) if said else float("nan")

    return [
        Row(
            "Online test: verdicts",
            source,
            str(sum(len(t.points) for t in traces)),
            "188",
            "Results (n = 28)",
        ),
        Row(
            "Online test: detectability",
            source,
            text(tally.detectability),
            "-",
            "Fig. S7D (a plot; no number printed)",
        ),
        Row(
            "Online test: machines judged machine, first to last checkpoint",
            source,
            f"{text(machines_caught(0))} to {text(machines_caught(-1))}",
            "rises",
            "Results: rises with exchanges (p = 0.032)",
        ),
    ]


def reproduce(root: Path, labels: Path | None, captions: Path | None) -> list[Row]:
    """Every row, from the files of ``root`` there are (missing ones are said on stderr)."""
    rows: list[Row] = []
    steps: list[tuple[Path, Callable[[], list[Row]]]] = [
        (FIRST, lambda: first_collection_rows(root, labels)),
        (PARTICIPANTS, lambda: feedback_rows(root)),
        (WORDS, lambda: word_rows(root)),
    ]
    for path, make in steps:
        if (root / path).is_file():
            rows += make()
        else:
            print(f"skipped: {path} is not in {root}", file=sys.stderr)
    rows += caption_rows(captions)
    rows += expert_rows(root)
    if (root / ONLINE).is_file():
        rows += online_rows(root)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=f"Get their data with: {CLONE}",
    )
    parser.add_argument("root", type=Path, help="your copy of their repository")
    parser.add_argument(
        "--labels",
        type=Path,
        help="classes of the first collection's conversations (default: the trueLabel of "
        f"{LABELLED.name})",
    )
    parser.add_argument("--captions", type=Path, help="their compiled captioning results")
    args = parser.parse_args(argv)
    needed = [FIRST, PARTICIPANTS, ONLINE, WORDS, EXPERT_CAPTIONS]
    if not any((args.root / path).is_file() for path in needed):
        print(
            f"{args.root}: none of {', '.join(str(p) for p in needed)} found. Get them with: "
            f"{CLONE}",
            file=sys.stderr,
        )
        return 2
    try:
        rows = reproduce(args.root, args.labels, args.captions)
    except SdttError as error:
        print(error, file=sys.stderr)
        return 1
    print("| row | source | sdtt | paper | where |")
    print("|---|---|---|---|---|")
    for row in rows:
        cells = (row.name, row.source, row.ours, row.paper, row.where)
        # A Markdown table: the pipes of p(H|H) are escaped.
        print("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
