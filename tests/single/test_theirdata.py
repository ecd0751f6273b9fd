"""Importers of the Kreiman lab's released formats, on small files written in their
shapes, malformed ones included (errors name file, line and field)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sklearn.metrics import confusion_matrix

from sdtt.beliefs.traces import verdict
from sdtt.errors import InputError
from sdtt.single.theirdata.exchange_verdicts import read_verdicts
from sdtt.single.theirdata.pages import (
    CLASSES,
    read_class_labels,
    read_conversation_folder,
    read_conversation_html,
)
from sdtt.single.theirdata.psiturk import KreimanTrial, read_compiled, read_psiturk
from sdtt.single.theirdata.response_files import read_groundtruth, read_response_file
from sdtt.single.theirdata.trial_scores import score_trials


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_a_word_response_file_is_one_agents_post_processed_answers(tmp_path: Path) -> None:
    path = write(tmp_path / "word.json", '{\n  "bread": "Butter",\n  "river": "the"\n}\n')
    found = read_response_file(path, "wordassoc", agent="gpt2")
    assert [(r.stimulus, r.response, r.exclusion_reason) for r in found] == [
        ("bread", "butter", None),
        ("river", "the", "stop word"),
    ]
    assert {(r.truth, r.agent) for r in found} == {("machine", "gpt2")}
    assert [r.origin for r in found] == ["word.json:2", "word.json:3"]


def test_a_caption_response_file_keeps_captions_as_written(tmp_path: Path) -> None:
    path = write(tmp_path / "caption.json", json.dumps({"0001.jpg": "A dog runs on grass."}))
    (record,) = read_response_file(path, "caption", agent="blip")
    assert (record.stimulus, record.response, record.task) == (
        "0001.jpg",
        "A dog runs on grass.",
        "caption",
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{\n "bread": "butter",\n "river": 3\n}',
            r"word\.json:3 field 'river': the response must",
        ),
        ('["bread"]', r"word\.json:1: expected a JSON object"),
        ('{\n "bread": "butter",\n', r"word\.json:3: the file is not valid JSON"),
    ],
)
def test_malformed_response_files_are_named(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path / "word.json", text)
    with pytest.raises(InputError, match=message):
        read_response_file(path, "wordassoc", agent="x")


GROUNDTRUTH = {
    "0001.jpg": [
        {
            "stimulus_ID": "0001.jpg",
            "response": "A man surfs a wave.",
            "groundtruth": "human",
            "human_groundtruth": "w7",
            "machine_groundtruth": "",
        },
        {
            "stimulus_ID": "0001.jpg",
            "response": "a man riding a wave on a surfboard",
            "groundtruth": "machine",
            "human_groundtruth": "",
            "machine_groundtruth": "git",
        },
    ],
    "0002.jpg": [
        {"response": "Cats on a sofa.", "groundtruth": "human", "machine_groundtruth": ""},
    ],
}


def test_a_groundtruth_dictionary_gives_truth_and_agent(tmp_path: Path) -> None:
    path = write(tmp_path / "gt.json", json.dumps(GROUNDTRUTH, indent=1))
    found = read_groundtruth(path, "caption")
    assert [(r.stimulus, r.truth, r.agent) for r in found] == [
        ("0001.jpg", "human", "w7"),
        ("0001.jpg", "machine", "git"),
        ("0002.jpg", "human", ""),
    ]
    assert found[0].meta == {"stimulus_ID": "0001.jpg"}
    assert len({r.id for r in found}) == 3


def test_a_bad_groundtruth_names_the_entry_and_field(tmp_path: Path) -> None:
    bad = json.loads(json.dumps(GROUNDTRUTH))
    bad["0002.jpg"][0]["groundtruth"] = "robot"
    path = write(tmp_path / "gt.json", json.dumps(bad, indent=1))
    with pytest.raises(InputError, match=r"gt\.json:\d+ field '0002\.jpg\[0\]\.groundtruth'"):
        read_groundtruth(path, "caption")
    bad["0002.jpg"] = "not a list"
    path = write(tmp_path / "gt.json", json.dumps(bad, indent=1))
    with pytest.raises(InputError, match=r"field '0002\.jpg': expected a list"):
        read_groundtruth(path, "caption")


CONVERSATION = """<html><body>
<p> A: Hi! How are you &amp; your cat? </p>
<p> B: Good thanks,<br>and you? </p>
<p> A: Fine. </p>
</body></html>
"""


def test_a_conversation_html_becomes_a_transcript(tmp_path: Path) -> None:
    path = write(tmp_path / "conv12_len3.html", CONVERSATION)
    transcript = read_conversation_html(path, "HAI")
    assert [(m.side, m.text) for m in transcript.messages] == [
        ("user", "Hi! How are you & your cat?"),
        ("response", "Good thanks,\nand you?"),
        ("user", "Fine."),
    ]
    assert transcript.id == "conv12_len3"
    assert transcript.meta["speakers"] == {"A": "human", "B": "machine"}
    assert transcript.meta["cut"] == 3 and transcript.meta["conversation"] == "conv12"
    times = [m.time for m in transcript.messages]
    assert times == sorted(times) and "synthetic" in transcript.meta["times"]


def test_a_folder_of_conversations_with_their_labels(tmp_path: Path) -> None:
    write(tmp_path / "conv12_len3.html", CONVERSATION)
    write(tmp_path / "conv12_len3option1.html", "<p>sports</p>")
    write(tmp_path / "conv40_len3.html", CONVERSATION)
    labels = read_class_labels(
        write(tmp_path / "answers.json", '{"conv12_len3": "AIAI", "conv40": "HH"}')
    )
    found = read_conversation_folder(tmp_path, labels)
    assert [(t.id, t.meta["class"]) for t in found] == [
        ("conv12_len3", "AIAI"),
        ("conv40_len3", "HH"),
    ]


def test_malformed_conversations_and_labels_are_named(tmp_path: Path) -> None:
    path = write(tmp_path / "conv1_len3.html", "<p> A: hi </p>\n<p> C: who? </p>\n")
    with pytest.raises(InputError, match=r"conv1_len3\.html:2 field 'p': a message must start"):
        read_conversation_html(path)
    labels = write(tmp_path / "answers.json", '{\n "conv1_len3": "HH",\n "conv2_len3": "HM"\n}')
    with pytest.raises(InputError, match=r"answers\.json:3 field 'conv2_len3': unknown class 'HM'"):
        read_class_labels(labels)


def trial_row(worker: str, number: int, data: dict[str, object]) -> str:
    body = json.dumps(data).replace('"', '""')
    return f'{worker},{number},1700000000,"{body}"\n'


def test_psiturk_trials_and_demographics(tmp_path: Path) -> None:
    trials = tmp_path / "trialdata.csv"
    trials.write_text(
        trial_row("w1:a1", 0, {"phase": "INSTRUCTIONS"})
        + trial_row("w1:a1", 1, {"phase": "TEST", "conversationID": ".html", "Aclass": 0})
        + trial_row(
            "w1:a1",
            2,
            {
                "phase": "TEST",
                "conversationID": "/static/dataset/conv22_len18.html",
                "Aclass": "HAI",
                "topic": "3",
                "hit_len": 18,
                "rt": 126254,
                "trial": 1,
                "Agender": "M",
                "Bgender": "F",
            },
        ),
        encoding="utf-8",
    )
    questions = write(tmp_path / "questiondata.csv", "w1:a1,age,31-35\nw1:a1,country,Spain\n")
    judges = read_psiturk(trials, questions)
    (trial,) = judges.trials
    assert (trial.conversation, trial.length, trial.said_a, trial.said_b) == (
        "conv22_len18",
        18,
        "human",
        "machine",
    )
    assert (trial.topic, trial.rt_ms, trial.guessed_gender) == ("3", 126254.0, {"A": "M", "B": "F"})
    assert trial.origin == "trialdata.csv:3"
    assert judges.demographics == {"w1:a1": {"age": "31-35", "country": "Spain"}}


def test_malformed_psiturk_rows_are_named(tmp_path: Path) -> None:
    trials = tmp_path / "trialdata.csv"
    trials.write_text(
        trial_row("w1", 1, {"conversationID": "conv1_len3.html", "Aclass": "HH"})
        + trial_row("w1", 2, {"conversationID": "conv2_len3.html", "Aclass": "MM"}),
        encoding="utf-8",
    )
    with pytest.raises(InputError, match=r"trialdata\.csv:2 field 'Aclass': the class must be"):
        read_psiturk(trials)
    trials.write_text("w1,1,1700000000\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"trialdata\.csv:1: expected 4 columns, found 3"):
        read_psiturk(trials)
    trials.write_text('w1,1,1700000000,"{not json"\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"trialdata\.csv:1 field 'datastring': the trial is not"):
        read_psiturk(trials)


def test_their_compiled_json(tmp_path: Path) -> None:
    data = {
        "inlab": {
            "datastring": [
                {
                    "questiondata": {"gender": "male", "age": "36-40"},
                    "data": [
                        {"trialdata": {"hit": 0, "Aclass": 0, "conversationID": ".html"}},
                        {
                            "trialdata": {
                                "hit": 22,
                                "topic": "1",
                                "hit_len": 18,
                                "Aclass": "AIH",
                                "rt": 5000,
                                "conversationID": "static/dataset/conv22_len18.html",
                            }
                        },
                    ],
                }
            ]
        }
    }
    judges = read_compiled(write(tmp_path / "compiled.json", json.dumps(data)))
    assert judges.demographics == {"inlab-1": {"gender": "male", "age": "36-40"}}
    (trial,) = judges.trials
    assert (trial.worker, trial.trial, trial.said_a, trial.said_b) == (
        "inlab-1",
        1,
        "machine",
        "human",
    )
    data["inlab"]["datastring"][0]["data"][1]["trialdata"]["Aclass"] = "??"  # type: ignore[index]
    with pytest.raises(InputError, match=r"field 'inlab\.datastring\[0\]\.data\[1\]\.Aclass'"):
        read_compiled(write(tmp_path / "compiled.json", json.dumps(data)))


def test_per_exchange_verdicts_become_belief_traces(tmp_path: Path) -> None:
    path = write(
        tmp_path / "verdicts.csv",
        "judge,conversation,exchange,speaker,verdict,reason,confidence\n"
        "j1,conv12,2,A,machine,too formal,80\n"
        "j1,conv12,1,A,human,typos,\n"
        "j1,conv12,1,B,human,,\n",
    )
    traces = read_verdicts(path, study="kreiman", labels={"conv12": "AIH"})
    by_item = {t.item_id: t for t in traces}
    a = by_item["conv12/A"]
    assert [(p.turn, p.belief, p.reason) for p in a.points] == [
        (1, 100.0, "typos"),
        (2, 20.0, "too formal"),
    ]
    assert a.target_human is False and a.target == "speaker A" and a.x_turns == 2
    assert verdict(a.final_belief) is False
    assert by_item["conv12/B"].target_human is True


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("j1,conv12,1,C,human,,", r"verdicts\.csv:2 field 'speaker'"),
        ("j1,conv12,x,A,human,,", r"verdicts\.csv:2 field 'exchange'"),
        ("j1,conv12,1,A,robot,,", r"verdicts\.csv:2 field 'verdict'"),
        ("j1,conv12,1,A,human,,30", r"verdicts\.csv:2 field 'confidence'"),
        ("j1,conv99,1,A,human,,", r"verdicts\.csv:2 field 'truth': no truth for conversation"),
    ],
)
def test_malformed_verdicts_are_named(tmp_path: Path, row: str, message: str) -> None:
    path = write(
        tmp_path / "verdicts.csv",
        f"judge,conversation,exchange,speaker,verdict,reason,confidence\n{row}\n",
    )
    with pytest.raises(InputError, match=message):
        read_verdicts(path, study="kreiman", labels={"conv12": "AIH"})


def test_trials_scored_per_class_agree_with_sklearn() -> None:
    labels = {"conv1": "HH", "conv2": "HAI", "conv3": "AIAI"}
    said = [
        ("conv1_len3", "HH"),
        ("conv2_len6", "HH"),
        ("conv2_len3", "HAI"),
        ("conv3_len9", "AIH"),
        ("conv3_len3", "AIAI"),
        ("conv9_len3", "HH"),
    ]
    trials = [
        KreimanTrial("w", n, conv, None, cls, *CLASSES[cls], "1", None)
        for n, (conv, cls) in enumerate(said)
    ]
    scores = score_trials(trials, labels)
    assert scores.unlabelled == 1
    truth: list[str] = []
    guess: list[str] = []
    for conv, cls in said[:5]:
        truth += CLASSES[labels[conv.split("_")[0]]]
        guess += CLASSES[cls]
    (hh, mh), (hm, mm) = confusion_matrix(truth, guess, labels=["human", "machine"])
    c = scores.by_class["all"]
    assert (c.hh, c.mh, c.hm, c.mm) == (hh, mh, hm, mm)
    hai = scores.by_class["HAI"]
    assert (hai.rate("H", "H"), hai.rate("M", "M")) == (1.0, 0.5)
