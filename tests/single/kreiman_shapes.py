"""Files in the shapes the Kreiman lab released (github kreimanlab/TuringTest), with
synthetic content: the same columns, key names and HTML quirks, none of their text.

``write_release`` lays them out as their repository does, for the reproduction script.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

CONVERSATION_PAGES = (
    "Conversations/Conversations - new dataset, feedback and catch trials (latest version)/"
    "mturk_conversation_paper/templates/instructions"
)
DATASETS = "Conversations/Participants results - datasets"
PARTICIPANTS = f"{DATASETS}/new_results_prolific.csv"
FIRST = f"{DATASETS}/compiled_original_dataset_first_collection.json"
LABELLED = f"{DATASETS}/prolific_may30.csv"
EXPERT_CAPTIONS = (
    "Experiments with AI experts/AI experts databases/image captioning/compiled_AIexperts_may4.json"
)
EXPERT_WORDS = (
    "Experiments with AI experts/AI experts databases/word association/compiled_AIexperts.json"
)
ONLINE = "Conversations/turing_online/trials_all.json"
WORD_RESULTS = "wordAssociation/Plot/savedResults/compiled.json"

# psiTurk's participants table, as their export has it (18 columns, datastring last).
PARTICIPANT_COLUMNS = [
    *("uniqueid", "assignmentid", "workerid", "hitid", "ipaddress", "browser", "platform"),
    *("language", "cond", "counterbalance", "codeversion", "beginhit", "beginexp", "endhit"),
    *("bonus", "status", "mode", "datastring"),
]


def conversation_page(lines: list[str]) -> str:
    """A page as theirs: a resize script, FONT colour tags around styled <p> messages, and
    the empty ``<p> </p>`` spacer at the end."""
    colours = {"A": "darkblue", "B": "crimson"}
    body = "".join(
        f'<FONT COLOR={colours[line[0]]}><p style="margin-bottom:-18px;"> {line} </p>\n</FONT>'
        for line in lines
    )
    return (
        "<script>\n\twindow.addEventListener('load', function() {});\n</script>\n\n"
        f'<font size="3">\n{body}<p> </p>\n</font>'
    )


def prolific_trial(
    number: int,
    said: str,
    true: str,
    *,
    catch: bool = False,
    conversation: int = 0,
    folder: str = "dataset_new",
) -> dict[str, object]:
    """One TEST trialdata object with every key their Prolific task records (``folder``:
    ``dataset_new`` in their feedback run, ``dataset`` in the run of the original 300)."""
    hit = conversation or 100 + number
    length = 3 * (1 + number % 8)
    path = (
        f"/static/{folder}/catch/conv{hit}.html"
        if catch
        else (f"/static/{folder}/conv{hit}_len{length}.html")
    )
    return {
        "phase": "TEST",
        "conversationID": path,
        "response": f"{said}___M___F___2",
        "Aclass": said,
        "Agender": "M",
        "Bgender": "F",
        "topic": "2",
        "hit": hit,
        "hit_len": length,
        "rt": 20000 + number,
        "trial": number,
        "trueLabel": true,
        "submitTime": 1700000000000 + number,
        "isCatch": catch,
        "isFixed": False,
        "fixedType": None,
        "hasFeedback": number <= 16,
    }


def participant_row(
    worker: str, trials: list[dict[str, object]], *, finished: bool = True
) -> list[str]:
    """One row of the participants table: 17 columns and the datastring JSON. A judge
    who finished has the task's closing summary in ``questiondata`` (``total_humanai``);
    one stopped at a failed catch trial has ``failed_catch_trial`` instead."""
    unique = f"{worker}:{worker}A"
    data = [
        {
            "uniqueid": unique,
            "current_trial": 0,
            "dateTime": 1,
            "trialdata": {
                "phase": "INSTRUCTIONS",
                "templates": ["instructions/instruct-1.html"],
                "action": "Begin",
            },
        },
        {
            "uniqueid": unique,
            "current_trial": 1,
            "dateTime": 2,
            "trialdata": {"phase": "prequestionnaire", "status": "submit"},
        },
    ]
    data += [
        {"uniqueid": unique, "current_trial": i + 2, "dateTime": 3 + i, "trialdata": t}
        for i, t in enumerate(trials)
    ]
    data.append(
        {
            "uniqueid": unique,
            "current_trial": len(data),
            "dateTime": 99,
            "trialdata": {"phase": "postquestionnaire", "status": "submit"},
        }
    )
    datastring = {
        "id": unique,
        "condition": 0,
        "counterbalance": 0,
        "assignmentId": f"{worker}A",
        "workerId": worker,
        "hitId": "H1",
        "currenttrial": len(data),
        "bonus": 0,
        "data": data,
        "questiondata": {
            "age": "26-30",
            "gender": "female",
            "education": "bachelor",
            "country": "Canada",
            "native": "yes",
            "catch_trials": [301, 302],
            "fixed_trials": {"7": 270},
            **(
                {"total_trials": len(trials), "total_humanai": len(trials)}
                if finished
                else {"failed_catch_trial": True, "failed_catch_trial_position": len(trials)}
            ),
        },
        "eventdata": [{"eventtype": "initialized", "value": None, "timestamp": 1, "interval": 0}],
        "useragent": "Mozilla/5.0",
        "mode": "live",
    }
    return [
        unique,
        f"{worker}A",
        worker,
        "H1",
        "10.0.0.1",
        "chrome",
        "linux",
        "en-US",
        "0",
        "0",
        "1.0",
        "2025-05-31 10:00:00.000001",
        "2025-05-31 10:00:00.000001",
        "2025-05-31 10:30:00.000001",
        "1.00",
        "3",
        "live",
        json.dumps(datastring),
    ]


def participants_table(rows: list[list[str]]) -> str:
    """The table as their CSV: a header line, then every cell quoted where needed."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(PARTICIPANT_COLUMNS)
    writer.writerows(rows)
    return out.getvalue()


# One judge, 31 trials, 3 of them catch trials: (chosen class, true class, catch).
JUDGE = [
    ("HAI", "AIAI", False),
    ("AIAI", "HH", False),
    ("HH", "AIAI", False),
    ("HH", "HAI", False),
    ("AIAI", "AIH", True),
    ("HH", "HH", False),
    ("AIH", "AIH", False),
    ("HH", "AIAI", False),
    ("HAI", "HH", False),
    ("HH", "AIAI", False),
    ("HAI", "AIH", False),
    ("AIAI", "HAI", True),
    ("AIAI", "HAI", False),
    ("AIH", "AIH", False),
    ("AIAI", "HH", False),
    ("HAI", "AIH", False),
    ("HAI", "AIH", False),
    ("HH", "AIAI", False),
    ("HAI", "AIH", False),
    ("AIAI", "AIAI", False),
    ("HAI", "HH", False),
    ("AIH", "AIAI", False),
    ("AIH", "AIH", True),
    ("HH", "HAI", False),
    ("HAI", "HH", False),
    ("HAI", "HH", False),
    ("AIH", "HAI", False),
    ("AIAI", "HAI", False),
    ("HH", "HH", False),
    ("HH", "AIAI", False),
    ("AIH", "HAI", False),
]


def judge_trials(pattern: list[tuple[str, str, bool]] = JUDGE) -> list[dict[str, object]]:
    return [
        prolific_trial(n, said, true, catch=catch, conversation=300 + n if catch else 0)
        for n, (said, true, catch) in enumerate(pattern, start=1)
    ]


def online_trials() -> dict[str, list[dict[str, str]]]:
    """``trials_all.json``: a key per conversation, four checkpoints each."""
    return {
        "11.txt": [
            {"groundtruth": "machine", "response": "human", "reason": "typed in lower case"},
            {"groundtruth": "machine", "response": "machine", "reason": "too tidy\\n"},
            {"groundtruth": "machine", "response": "machine", "reason": "knew every date"},
            {"groundtruth": "machine", "response": "machine", "reason": "never unsure"},
        ],
        "12.txt": [
            {"groundtruth": "human", "response": "human", "reason": "a typo"},
            {"groundtruth": "human", "response": "machine", "reason": "long answer"},
            {"groundtruth": "human", "response": "human", "reason": "joked \u201cback\u201d"},
            {"groundtruth": "human", "response": "human", "reason": "local slang"},
        ],
    }


def _judge_data(country: str) -> dict[str, object]:
    return {
        "country": country,
        "age": "26-30",
        "gender": "male",
        "education": "bachelor",
        "mode": "live",
        "condition": 0,
        "native": "yes",
        "engagement": "7",
        "difficulty": "5",
    }


def _word_trials(
    worker: str, data: dict[str, object] | None, rows: list[tuple[str, str, str, str]]
) -> list[dict[str, object]]:
    """(cue, truth, said, machine) rows as their trials; no ``workerData`` for their
    machine judges, whose trials keep fewer keys."""
    trials: list[dict[str, object]] = []
    for n, (cue, truth, said, machine) in enumerate(rows, start=1):
        if data is None:
            body: dict[str, object] = {
                "trial": n,
                "caption": cue,
                "response_speaker": said,
                "machine_groundtruth": machine,
                "groundtruth": truth,
                "human_groundtruth": "human" if truth == "human" else "",
            }
            trials.append({"workerID": worker, "trialData": body})
            continue
        body = {
            "rt": 9000 + n,
            "hit": f"participant_{n}",
            "trial": n,
            "response_speaker": said,
            "machine_groundtruth": machine,
            "imageID": n,
            "caption": cue,
            "counterbalance": 0,
            "groundtruth": truth,
            "phase": "TEST",
            "human_groundtruth": "human" if truth == "human" else "",
            "real_gender": "",
            "response_gender": "male",
        }
        trials.append({"workerID": worker, "workerData": data, "trialData": body})
    return trials


def _numbered(trials: list[dict[str, object]]) -> dict[str, object]:
    return {f"Trial_{n}": trial for n, trial in enumerate(trials, start=1)}


MTURK_WORDS = [  # (cue, truth, said, machine)
    ("lantern", "human", "human", ""),
    ("harbor", "human", "machine", ""),
    ("pepper", "human", "human", ""),
    ("violin", "human", "human", ""),
    ("meadow", "machine", "machine", "word2vec"),
    ("copper", "machine", "human", "word2vec"),
    ("glacier", "machine", "human", "gpt3 (prompt davinvci)"),
    ("saddle", "machine", "human", "gpt3 (prompt davinvci)"),
    ("orchid", "machine", "machine", "gpt3 (prompt davinvci)"),
]


def word_results() -> dict[str, dict[str, object]]:
    """Their compiled word-association results as their notebook writes them: ``inlab``
    is ``inlab_gender`` and ``inlab_nogender`` again, ``combined`` is ``inlab`` and
    ``mturk`` again, ``machine`` their SVM judges. Every in-lab person has the same
    ``workerID`` (``LAB``), told apart by ``workerData`` and trial numbers starting over."""
    gender = _word_trials(
        "LAB",
        _judge_data("Singapore"),
        [
            ("anchor", "human", "human", ""),
            ("tide", "machine", "machine", "word2vec"),
            ("ember", "machine", "human", "gpt2"),
        ],
    )
    nogender = _word_trials(
        "LAB",
        _judge_data("India"),
        [
            ("quartz", "human", "machine", ""),
            ("fable", "machine", "machine", "word2vec"),
            ("sprout", "human", "human", ""),
        ],
    )
    mturk = _word_trials("W1", _judge_data("Canada"), MTURK_WORDS)
    machine = _word_trials(
        "word2vec",
        None,
        [
            ("lantern", "human", "machine", ""),
            ("glacier", "machine", "machine", "gpt3 (prompt davinvci)"),
        ],
    )
    return {
        "inlab": _numbered(gender + nogender),
        "inlab_gender": _numbered(gender),
        "inlab_nogender": _numbered(nogender),
        "mturk": _numbered(mturk),
        "machine": _numbered(machine),
        "combined": _numbered(gender + nogender + mturk),
    }


def expert_captions() -> dict[str, dict[str, object]]:
    """Their AI experts' captioning verdicts: image paths, ``hit`` true, participants named."""
    rows = [  # (image, caption, truth, said, machine)
        ("0907.jpg", "a kettle left on a cold stove", "human", "human", ""),
        ("0907.jpg", "a kettle on a stove", "machine", "machine", "blip"),
        ("0912.jpg", "two kites over a grey beach", "human", "machine", ""),
        ("0912.jpg", "kites flying over a beach", "machine", "human", "clipcap"),
    ]
    data = {**_judge_data("Chile"), "imagetype": "in-domain"}
    trials = []
    for n, (image, caption, truth, said, machine) in enumerate(rows, start=1):
        body = {
            "phase": "TEST",
            "imageID": f"/static/images/imgset/{image}",
            "caption": caption,
            "groundtruth": truth,
            "machine_groundtruth": machine,
            "human_groundtruth": f"Participant_{n}" if truth == "human" else "",
            "response_speaker": said,
            "response_gender": "male",
            "hit": True,
            "counterbalance": 17,
            "rt": 8000 + n,
            "trial": n,
        }
        trials.append({"workerID": "debugX1", "workerData": data, "trialData": body})
    return {"AIexperts": _numbered(trials)}


def expert_words() -> dict[str, dict[str, object]]:
    """Their AI experts' word-association verdicts: ``Human`` and ``Machine`` capitalised."""
    trials = _word_trials(
        "debugY2",
        {**_judge_data("Italy"), "ai-experience": "2"},
        [
            ("anchor", "human", "Human", ""),
            ("tide", "machine", "Machine", "other"),
            ("ember", "machine", "Human", "gpt2"),
        ],
    )
    for trial in trials:
        body = trial["trialData"]
        assert isinstance(body, dict)
        body["hit"] = f"{body['imageID']}_a_0.html"
    return {"AIexperts": _numbered(trials)}


# The classes of their original conversations 1-6, as their 2025 run's trueLabel says.
ORIGINAL_CLASSES = {1: "HH", 2: "HAI", 3: "AIH", 4: "AIAI", 5: "HH", 6: "AIAI"}


def labelled_run() -> list[dict[str, object]]:
    """A judge of their 2025 run of the original conversations (``/static/dataset/``),
    whose trials carry ``trueLabel``; a catch trial's label is its own."""
    trials = [
        prolific_trial(n, "HH", true, conversation=conv, folder="dataset")
        for n, (conv, true) in enumerate(ORIGINAL_CLASSES.items(), start=1)
    ]
    catch = prolific_trial(7, "HH", "HAI", catch=True, conversation=301, folder="dataset")
    return [*trials, catch]


def first_trial(conv: int, length: int, said: str, *, folder: str = "static/dataset") -> dict:
    """A trial of their first collection: the class chosen, no true class."""
    return {
        "trialdata": {
            "hit": conv,
            "topic": "1" if folder == "static/dataset" else "movies",
            "hit_len": length,
            "Aclass": said,
            "rt": 30000 + 100 * conv + length,
            "Agender": "M" if folder == "static/dataset" else 0,
            "Bgender": "F" if folder == "static/dataset" else 0,
            "conversationID": f"{folder}/conv{conv}_len{length}.html",
        }
    }


PLACEHOLDER = {
    "trialdata": {
        "hit": 0,
        "topic": 0,
        "hit_len": 0,
        "Aclass": 0,
        "rt": 0,
        "Agender": 0,
        "Bgender": 0,
        "conversationID": ".html",
    }
}


def first_collection() -> dict[str, dict[str, list[dict[str, object]]]]:
    """Their first collection's compiled file: a ``datastring`` list per group, each
    person's ``questiondata`` and ``data`` (a placeholder first trial, then the trials).
    ``prolific`` repeats the ``mturk`` judge; ``chatgpt`` judged their ChatGPT-4o set."""

    def person(country: str, trials: list[dict[str, object]]) -> dict[str, object]:
        answers = {"gender": "female", "age": "21-25", "native": "yes", "education": "pg"}
        return {"questiondata": {**answers, "country": country}, "data": [PLACEHOLDER, *trials]}

    lab = [
        first_trial(1, 3, "HH"),
        first_trial(2, 6, "HH"),
        first_trial(3, 9, "AIAI"),
        first_trial(4, 12, "HAI"),
        first_trial(7, 3, "HH"),  # a conversation no label names
    ]
    online = [first_trial(5, 3, "HAI"), first_trial(6, 6, "AIAI"), first_trial(2, 9, "HH")]
    chat = "Mranmey_chatgpt_dataset_woGender"
    return {
        "inlab": {"datastring": [person("Portugal", lab)]},
        "mturk": {"datastring": [person("United States", online)]},
        "prolific": {"datastring": [person("United States", online)]},
        "chatgpt": {
            "datastring": [
                person("India", [first_trial(1, 7, "HH", folder=chat)]),
                person(
                    "India",
                    [first_trial(2, 14, "AIH", folder=chat), first_trial(1, 21, "HH", folder=chat)],
                ),
            ]
        },
    }


def write_release(root: Path) -> Path:
    """Their repository's folders, holding one file of each shape."""
    pages = root / CONVERSATION_PAGES
    pages.mkdir(parents=True)
    (pages / "conv7_len3.html").write_text(
        conversation_page(["A: morning! slept well?", "B: barely, the dog snored", "A: ha"]),
        encoding="utf-8",
    )
    table = root / PARTICIPANTS
    table.parent.mkdir(parents=True)
    # P2 is stopped at their first catch trial (trial 5), failed, as their task does.
    stopped = judge_trials([("HH", "HH", False)] * 4 + [("HH", "HAI", True)])
    rows = [participant_row("P1", judge_trials()), participant_row("P2", stopped, finished=False)]
    table.write_text(participants_table(rows), encoding="utf-8")
    online = root / ONLINE
    online.parent.mkdir(parents=True)
    online.write_text(json.dumps(online_trials()), encoding="utf-8")
    words = root / WORD_RESULTS
    words.parent.mkdir(parents=True)
    words.write_text(json.dumps(word_results()), encoding="utf-8")
    (root / FIRST).write_text(json.dumps(first_collection()), encoding="utf-8")
    labelled = participants_table([participant_row("L1", labelled_run())])
    (root / LABELLED).write_text(labelled, encoding="utf-8")
    for path, content in ((EXPERT_CAPTIONS, expert_captions()), (EXPERT_WORDS, expert_words())):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(json.dumps(content), encoding="utf-8")
    return root
