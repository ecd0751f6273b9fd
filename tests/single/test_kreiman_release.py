"""The Kreiman lab's files as their repository (github kreimanlab/TuringTest) releases
them, on fixtures of the same shapes (:mod:`tests.single.kreiman_shapes`): conversation
pages, psiTurk's participants table with ``trueLabel`` and ``isCatch``, the online test's
``trials_all.json`` and the compiled word-association results; and the reproduction
script over a small copy of their folders."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from sklearn.metrics import confusion_matrix

from sdtt.cli import main
from sdtt.errors import InputError
from sdtt.single.theirdata.compiled import read_judgements, score_judgements
from sdtt.single.theirdata.exchange_verdicts import read_verdicts
from sdtt.single.theirdata.pages import CLASSES, read_conversation_html
from sdtt.single.theirdata.trial_scores import judged_human, score_trials
from tests.single import kreiman_shapes as shapes

ROOT = Path(__file__).resolve().parents[2]


def test_their_conversation_page_imports_despite_the_closing_empty_paragraph(
    tmp_path: Path,
) -> None:
    page = tmp_path / "conv35_len9.html"
    page.write_text(shapes.conversation_page(["A: hi , how are you?", "B: fine, and you?"]))
    transcript = read_conversation_html(page)
    assert [(m.side, m.text) for m in transcript.messages] == [
        ("user", "hi , how are you?"),
        ("response", "fine, and you?"),
    ]
    assert transcript.meta["cut"] == 9


def table(tmp_path: Path, rows: list[list[str]]) -> Path:
    path = tmp_path / "new_results_prolific.csv"
    path.write_text(shapes.participants_table(rows), encoding="utf-8")
    return path


def test_their_participants_table_imports_with_true_labels_and_catch_trials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    path = table(tmp_path, [shapes.participant_row("P1", shapes.judge_trials())])
    assert main(["import-kreiman", "psiturk", str(path), "-o", "trials.jsonl"]) == 0
    out = capsys.readouterr().out
    rows = [json.loads(line) for line in Path("trials.jsonl").read_text().splitlines()]
    trials = [row for row in rows if row["record"] == "trial"]
    assert len(trials) == 31
    assert [t["true_label"] for t in trials] == [true for _s, true, _c in shapes.JUDGE]
    assert sum(t["is_catch"] for t in trials) == 3
    assert trials[4]["conversation"] == "conv305"  # a catch page: catch/conv305.html
    (demographics,) = [row for row in rows if row["record"] == "demographics"]
    assert demographics["worker"] == "P1:P1A" and demographics["country"] == "Canada"
    # No --labels needed: the trials carry their true class.
    assert "0.357" in out and "Catch trials (left out above): 3" in out


def test_catch_trials_are_left_out_of_detectability_and_reported_apart(tmp_path: Path) -> None:
    from sdtt.commands.import_kreiman import read_judges

    path = table(tmp_path, [shapes.participant_row("P1", shapes.judge_trials())])
    judges, _empty = read_judges(path)
    scores = score_trials(judges.trials)
    # Their detectability, (p(H|H) + p(M|M)) / 2 over speakers, from an independent
    # confusion matrix of the 28 non-catch trials' 56 speakers.
    truth, said = [], []
    for chose, true, catch in shapes.JUDGE:
        if not catch:
            truth += CLASSES[true]
            said += CLASSES[chose]
    (hh, hm), (mh, mm) = confusion_matrix(truth, said, labels=["human", "machine"])
    expected = (hh / (hh + hm) + mm / (mh + mm)) / 2
    assert scores.by_class["all"].detectability == pytest.approx(expected)
    assert round(expected, 3) == 0.357  # 0.387 when the catch trials are scored too
    assert scores.catch_trials == 3
    assert scores.catch.hh + scores.catch.mh + scores.catch.hm + scores.catch.mm == 6
    assert scores.judge_mean()[0] == pytest.approx(expected)
    assert judged_human(scores.by_class["HH"]) == scores.by_class["HH"].rate("H", "H")


def test_a_participant_without_data_is_left_out_and_counted(tmp_path: Path) -> None:
    from sdtt.commands.import_kreiman import read_judges

    empty = shapes.participant_row("P2", [])
    empty[-1] = ""
    path = table(tmp_path, [shapes.participant_row("P1", shapes.judge_trials()[:2]), empty])
    judges, left_out = read_judges(path)
    assert (len(judges.trials), left_out) == (2, 1)


def test_a_restarted_session_keeps_only_its_last_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # As debugZZw7z in their new_results_prolific.csv: a first run that failed its catch
    # at trial 5, the INSTRUCTIONS phase again, then a full run; their questiondata
    # (correct_humanai) scores the last run only.
    first = [shapes.prolific_trial(n, "HH", "HAI", catch=n == 5) for n in range(1, 6)]
    again = {"phase": "INSTRUCTIONS", "templates": ["prequestionnaire.html"], "action": "Begin"}
    row = shapes.participant_row("P1", [*first, again, *shapes.judge_trials()])
    monkeypatch.chdir(tmp_path)
    path = table(tmp_path, [row])
    assert main(["import-kreiman", "psiturk", str(path), "-o", "trials.jsonl"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    trials = [json.loads(line) for line in Path("trials.jsonl").read_text().splitlines()]
    assert sum(t["record"] == "trial" for t in trials) == 31
    assert "1 restarted sessions, P1:P1A: the 5 trials of their earlier runs left out" in out
    assert "0.357" in out and "Catch trials (left out above): 3" in out


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda trials: trials[1].update(trueLabel="HM"),
            r"new_results_prolific\.csv:2 field 'datastring\.data\[3\]\.trialdata\.trueLabel':"
            r" the true class must be",
        ),
        (
            lambda trials: trials[0].update(isCatch="sometimes"),
            r"field 'datastring\.data\[2\]\.trialdata\.isCatch': isCatch must be true or false",
        ),
    ],
)
def test_bad_trials_in_the_table_are_named_by_line_and_field(
    tmp_path: Path, change: object, message: str
) -> None:
    from sdtt.commands.import_kreiman import read_judges

    trials = shapes.judge_trials()[:3]
    change(trials)  # type: ignore[operator]
    with pytest.raises(InputError, match=message):
        read_judges(table(tmp_path, [shapes.participant_row("P1", trials)]))


def test_a_broken_datastring_is_one_line_naming_the_row(tmp_path: Path) -> None:
    from sdtt.commands.import_kreiman import read_judges

    row = shapes.participant_row("P1", shapes.judge_trials())
    row[-1] = row[-1][:5000]  # cut short, as a truncated export would be
    with pytest.raises(InputError) as caught:
        read_judges(table(tmp_path, [row]))
    text = str(caught.value)
    assert "new_results_prolific.csv:2 field 'datastring'" in text and "not valid JSON" in text
    assert "\n" not in text and len(text) < 200


def test_their_participants_database_reads_like_the_table(tmp_path: Path) -> None:
    import sqlite3

    from sdtt.commands.import_kreiman import read_judges

    path = tmp_path / "participants_prolific.db"
    row = shapes.participant_row("P1", shapes.judge_trials())
    connection = sqlite3.connect(path)
    columns = ", ".join(f'"{name}"' for name in shapes.PARTICIPANT_COLUMNS)
    connection.execute(f"CREATE TABLE turkdemo ({columns})")
    connection.execute(f"INSERT INTO turkdemo VALUES ({', '.join('?' * len(row))})", row)
    connection.commit()
    connection.close()
    judges, _empty = read_judges(path)
    assert len(judges.trials) == 31
    assert round(score_trials(judges.trials).by_class["all"].detectability, 3) == 0.357
    other = tmp_path / "other.db"
    connection = sqlite3.connect(other)
    connection.execute("CREATE TABLE notes (text)")
    connection.close()
    with pytest.raises(InputError, match=r"other\.db: no table with the columns uniqueid"):
        read_judges(other)


def test_the_online_tests_verdicts_with_reasons_become_belief_traces(tmp_path: Path) -> None:
    path = tmp_path / "trials_all.json"
    path.write_text(json.dumps(shapes.online_trials()), encoding="utf-8")
    first, second = read_verdicts(path, study="online")
    assert (first.item_id, first.target_human) == ("11", False)
    assert [p.belief for p in first.points] == [100.0, 0.0, 0.0, 0.0]
    assert first.points[0].reason == "typed in lower case"
    assert second.target_human and second.points[2].reason == "joked \u201cback\u201d"
    assert second.shown.live_to == 4


def test_the_online_verdicts_through_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("trials_all.json").write_text(json.dumps(shapes.online_trials()), encoding="utf-8")
    argv = ["import-kreiman", "verdicts", "trials_all.json", "--study", "k", "-o", "t.jsonl"]
    assert main(argv) == 0
    assert "Wrote 2 belief traces" in capsys.readouterr().out


def test_a_bad_verdict_in_trials_all_names_key_and_field(tmp_path: Path) -> None:
    data = shapes.online_trials()
    data["12.txt"][1]["response"] = "robot"
    path = tmp_path / "trials_all.json"
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    with pytest.raises(InputError, match=r"trials_all\.json:\d+ field '12\.txt\[1\]\.response'"):
        read_verdicts(path, study="online")


def test_json_given_where_a_csv_is_read_gets_one_short_line(tmp_path: Path) -> None:
    from sdtt.single.csvrows import csv_rows

    path = tmp_path / "verdicts.csv"
    path.write_text(json.dumps(shapes.online_trials()), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        list(csv_rows(path, ("judge", "verdict")))
    assert "this is JSON, not a CSV file" in str(caught.value)
    assert len(str(caught.value)) < 200
    path.write_text(",".join(f"column {'x' * 60} {n}" for n in range(40)) + "\n", "utf-8")
    with pytest.raises(InputError) as caught:
        list(csv_rows(path, ("judge", "verdict")))
    assert "and 32 more" in str(caught.value) and len(str(caught.value)) < 600


def test_their_compiled_word_association_results_are_scored_per_machine(
    tmp_path: Path,
) -> None:
    path = tmp_path / "compiled.json"
    path.write_text(json.dumps(shapes.word_results()), encoding="utf-8")
    judgements = read_judgements(path, ["mturk"], task="wordassoc")
    assert len(judgements) == 9 and judgements[0].stimulus == "lantern"
    scores = score_judgements(judgements)
    assert scores.overall.rate("H", "H") == pytest.approx(3 / 4)
    assert scores.overall.rate("M", "M") == pytest.approx(2 / 5)
    assert scores.by_model["word2vec"].rate("M", "M") == pytest.approx(1 / 2)
    assert scores.by_model["gpt3 (prompt davinvci)"].rate("M", "M") == pytest.approx(1 / 3)


def run_script(release: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "examples" / "reproduce_kreiman.py"), str(release), *extra],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "COLUMNS": "200"},
        check=False,
    )


def table_rows(stdout: str) -> dict[str, list[str]]:
    """The printed Markdown table: row name -> source, sdtt, paper, where."""
    cells = [
        [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", line)[1:-1]]
        for line in stdout.splitlines()
        if line.startswith("|") and not line.startswith("|---")
    ]
    return {row[0]: row[1:] for row in cells}


def test_the_reproduction_script_prints_each_published_row_beside_sdtts(tmp_path: Path) -> None:
    release = shapes.write_release(tmp_path / "TuringTest")
    run = run_script(release)
    assert run.returncode == 0, run.stderr
    rows = {name: cells[:3] for name, cells in table_rows(run.stdout).items()}
    # Fig. 4C and 5E from their first collection, the classes from the 2025 run's
    # trueLabel (prolific_may30.csv), worked out by hand from shapes.first_collection:
    # humans 5 of 7 judged human, machines 4 of 7 judged machine.
    zero = "Conversation, zero-shot: "
    assert rows[zero + "human speakers judged human p(H|H)"][1:] == ["0.71", "0.66"]
    assert rows[zero + "machine speakers judged machine p(M|M)"][1:] == ["0.57", "0.47"]
    assert rows[zero + "detectability (p(H|H) + p(M|M)) / 2"][1:] == ["0.64", "0.57"]
    assert rows[zero + "H-H conversations judged human"][1:] == ["0.75", "0.64"]
    assert rows[zero + "AI-AI conversations judged human"][1:] == ["0.25", "0.57"]
    assert rows[zero + "human-AI, the human judged human"][1:] == ["0.67", "0.68"]
    assert rows[zero + "human-AI, the AI judged machine"][1:] == ["0.33", "0.56"]
    # The unlabelled conversation and the judge their 'prolific' group repeats are out;
    # the ChatGPT-4o conversations (other numbers, no classes released) are counted apart.
    source = rows[zero + "human speakers judged human p(H|H)"][0]
    assert "2 judges, 8 trials (1 without a class in prolific_may30.csv" in source
    assert "1 repeated judges left out" in source
    chatgpt = rows[
        "Conversation, ChatGPT-4o conversations (Mranmey_chatgpt_dataset_woGender): judges, trials"
    ]
    assert chatgpt[1:] == ["2 judges, 3 trials", "45 judges, 392 trials; detectability 0.52"]
    # Their feedback run (Fig. 7K prints no number) and its catch trials (Table S3).
    feedback = "Conversation, feedback run: machine speakers judged machine p(M|M)"
    assert rows[feedback][1:] == ["0.29", "-"]
    # P2, stopped at a failed first catch trial, counts in the first catch row only.
    assert rows["Conversation: catch trials, machine speakers judged machine"][1:] == [
        "0.75",
        "0.96",
    ]
    assert rows["Conversation: catch trials of the judges who finished"][:2] == [
        "new_results_prolific.csv: 1 judges, 3 catch trials",
        "1.00",
    ]
    # Fig. 4B: their 'combined' group only (in-lab and AMT); pooling every group would
    # count the in-lab judges three times and take in their SVM judges.
    assert rows["Word association: human judged human p(H|H)"] == [
        "compiled.json group combined: 3 judges, 15 trials",
        "0.71",
        "0.58",
    ]
    assert rows["Word association: machine judged machine p(M|M)"][1:] == ["0.50", "0.47"]
    assert rows["Word association: detectability"][1:] == ["0.61", "0.53"]
    assert rows["Word association: Word2Vec p(M|M)"][1:] == ["0.75", "0.58"]
    assert rows["Word association: GPT3 (prompt DaVinci) p(M|M)"][1:] == ["0.33", "0.41"]
    assert rows["Word association, machine SVM judges: detectability"][1] == "0.50"
    # Captions: the zero-shot judges' results are not released; where it was looked for.
    caption = rows["Image captioning: human judged human p(H|H)"]
    assert caption[1:] == ["-", "0.67"] and "imageCaptioning/" in caption[0]
    assert "benchmarking/" in caption[0] and "not in the repository" in caption[0]
    assert rows["Image captioning, AI experts: human judged human p(H|H)"][1] == "0.50"
    assert rows["Word association, AI experts: human judged human p(H|H)"][1] == "1.00"
    assert rows["Online test: verdicts"][1:] == ["8", "188"]
    assert rows["Online test: machines judged machine, first to last checkpoint"][1] == (
        "0.00 to 1.00"
    )


def test_the_reproduction_script_takes_the_first_collections_classes_from_labels(
    tmp_path: Path,
) -> None:
    release = shapes.write_release(tmp_path / "TuringTest")
    labels = tmp_path / "correct_answers.json"
    # Every original conversation human-human: no machine speaker left to score.
    labels.write_text(json.dumps({f"conv{n}": "HH" for n in range(1, 8)}), encoding="utf-8")
    run = run_script(release, "--labels", str(labels))
    assert run.returncode == 0, run.stderr
    rows = table_rows(run.stdout)
    zero = "Conversation, zero-shot: "
    assert rows[zero + "machine speakers judged machine p(M|M)"][1] == "n/a"
    # 8 trials (conv7 labelled now): 10 of the 16 human speakers judged human.
    assert rows[zero + "human speakers judged human p(H|H)"][1] == "0.62"
    assert (
        "(0 without a class in correct_answers.json"
        in rows[zero + "human speakers judged human p(H|H)"][0]
    )


def test_the_reproduction_script_says_what_to_download_when_folders_are_missing(
    tmp_path: Path,
) -> None:
    run = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "reproduce_kreiman.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert run.returncode == 2
    assert "git clone" in run.stderr and "compiled_original_dataset_first_collection" in run.stderr


def test_reading_their_table_leaves_other_csv_readers_refusing_huge_fields(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """psiTurk's datastring needs fields over 128 KB; the raised limit must not outlive the
    read, or a later answer file in the same process (a study, a notebook) would take a
    200 KB field silently."""
    monkeypatch.chdir(tmp_path)
    before = csv.field_size_limit()
    path = table(tmp_path, [shapes.participant_row("P1", shapes.judge_trials())])
    assert main(["import-kreiman", "psiturk", str(path), "-o", "trials.jsonl"]) == 0
    assert csv.field_size_limit() == before
    huge = tmp_path / "huge.csv"
    huge.write_text('a,b\n1,"' + "x" * 200_000 + '"\n', encoding="utf-8")
    with pytest.raises(csv.Error), huge.open(newline="") as handle:
        list(csv.reader(handle))
