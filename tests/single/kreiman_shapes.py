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
PARTICIPANTS = "Conversations/Participants results - datasets/new_results_prolific.csv"
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
    number: int, said: str, true: str, *, catch: bool = False, conversation: int = 0
) -> dict[str, object]:
    """One TEST trialdata object with every key their Prolific task records."""
    hit = conversation or 100 + number
    length = 3 * (1 + number % 8)
    path = (
        f"/static/dataset_new/catch/conv{hit}.html"
        if catch
        else (f"/static/dataset_new/conv{hit}_len{length}.html")
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


def word_results() -> dict[str, dict[str, object]]:
    """Their compiled word-association results: a group per cohort, ``Trial_N`` keys."""
    worker = {
        "country": "Canada",
        "age": "26-30",
        "gender": "male",
        "education": "bachelor",
        "mode": "live",
        "condition": 0,
        "native": "yes",
        "engagement": "7",
        "difficulty": "5",
    }
    rows = [  # (cue, truth, said, machine)
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
    trials = {}
    for n, (cue, truth, said, machine) in enumerate(rows, start=1):
        trials[f"Trial_{n}"] = {
            "workerID": "W1",
            "workerData": worker,
            "trialData": {
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
            },
        }
    return {"mturk": trials}


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
    return root
