"""``sdtt import-kreiman compiled``: their compiled single-item results (word association,
image captioning) as an sdtt single-item study that ``sdtt single score`` scores; and
the readers of their compiled files on fixtures of the real shapes
(:mod:`tests.single.kreiman_shapes`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sdtt.cli import main
from sdtt.errors import InputError
from sdtt.single.build import load_key
from sdtt.single.theirdata.compiled import read_judgements, score_judgements
from sdtt.single.theirdata.psiturk import read_compiled
from sdtt.single.theirdata.trial_scores import labels_from_trials
from sdtt.tasks.single_task import read_single_answers
from tests.single import kreiman_shapes as shapes


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main([*map(str, args)])
    out = capsys.readouterr()
    return code, out.out + out.err


@pytest.fixture
def words(tmp_path: Path) -> Path:
    path = tmp_path / "compiled.json"
    path.write_text(json.dumps(shapes.word_results()), encoding="utf-8")
    return path


def test_their_word_association_results_become_a_study_single_score_scores(
    words: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = tmp_path / "wa"
    code, out = run(
        capsys, "import-kreiman", "compiled", words, "--task", "wordassoc", "--group",
        "combined", "--group", "machine", "-o", study,
    )  # fmt: skip
    assert code == 0, out
    assert "Wrote 17 answers of 4 judges" in " ".join(out.split())
    answers = read_single_answers(study / "answers.jsonl")
    # Their in-lab people share one workerID: told apart by workerData and trial numbers.
    people = {a.judge_id for a in answers if a.judge_type == "human"}
    assert people == {"combined:LAB", "combined:LAB#2", "combined:W1"}
    svm = {(a.judge_id, a.judge_model, a.judge_kind) for a in answers if a.judge_type == "llm"}
    assert svm == {("machine:word2vec", "word2vec", "svm")}
    key = load_key(study)
    assert {e.source for e in key.items} >= {"lantern", "quartz", "tide"}
    code, out = run(capsys, "single", "score", study, "--bootstrap", "50")
    assert code == 0, out
    lines = out.splitlines()
    human = lines.index(next(line for line in lines if "Verdicts of human judges" in line))
    # The human judges of Fig. 4B: 5 of 7 humans called human, 4 of 8 machines machine.
    row = next(
        line for line in lines[human:] if line.strip().startswith("│ all") or " all " in line
    )
    assert " 15 " in row  # trials
    assert "0.71 [" in row and "0.50 [" in row and "0.61" in row
    assert any("Verdicts of llm word2vec svm judges" in line for line in lines)


def test_several_groups_need_naming_as_theirs_repeat_trials(
    words: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run(
        capsys, "import-kreiman", "compiled", words, "--task", "wordassoc", "-o", tmp_path / "x"
    )
    assert code != 0
    message = " ".join(out.split())
    assert "compiled.json field '--group': the file has 6 groups of trials: inlab (6)" in message
    assert "combined (15)" in message and "Give --group NAME" in message
    assert not (tmp_path / "x").exists()


def test_their_ai_experts_captions_import_with_image_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "compiled_AIexperts_may4.json"
    path.write_text(json.dumps(shapes.expert_captions()), encoding="utf-8")
    study = tmp_path / "cap"
    code, out = run(capsys, "import-kreiman", "compiled", path, "--task", "caption", "-o", study)
    assert code == 0, out
    key = load_key(study)
    assert sorted(e.source for e in key.items) == ["0907.jpg", "0907.jpg", "0912.jpg", "0912.jpg"]
    assert {e.klass for e in key.items} == {"H", "M"}
    blip = next(e for e in key.items if e.meta.get("model") == "blip")
    assert blip.truth == {"Caption": "machine"} and blip.meta["response"] == "a kettle on a stove"
    code, out = run(capsys, "import-kreiman", "compiled", path, "--task", "caption", "-o", study)
    assert code != 0 and "already holds a study" in out and "--force" in out


def test_their_ai_experts_capitalised_verdicts_are_read(tmp_path: Path) -> None:
    path = tmp_path / "compiled_AIexperts.json"
    path.write_text(json.dumps(shapes.expert_words()), encoding="utf-8")
    judgements = read_judgements(path, task="wordassoc")
    assert [j.said for j in judgements] == ["human", "machine", "human"]
    assert score_judgements(judgements).overall.rate("M", "M") == pytest.approx(1 / 2)


def broken(words: Path, change: object) -> Path:
    data = json.loads(words.read_text())
    change(data)  # type: ignore[operator]
    words.write_text(json.dumps(data), encoding="utf-8")
    return words


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda d: d["mturk"]["Trial_2"]["trialData"].update(response_speaker="robot"),
            "compiled.json field 'mturk.Trial_2.trialData.response_speaker': expected 'human' "
            "or 'machine', not 'robot'.",
        ),
        (
            lambda d: d["mturk"]["Trial_3"].pop("workerID"),
            "compiled.json field 'mturk.Trial_3.workerID': expected the judge's 'workerID'.",
        ),
        (
            lambda d: d["mturk"]["Trial_4"].update(trialData=[1, 2]),
            "compiled.json field 'mturk.Trial_4': expected a 'trialData' object.",
        ),
    ],
)
def test_bad_trials_are_one_line_naming_file_and_field(
    words: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], change: object, message: str
) -> None:
    path = broken(words, change)
    argv = ["import-kreiman", "compiled", path, "--task", "wordassoc", "--group", "mturk"]
    code, out = run(capsys, *argv, "-o", tmp_path / "s")
    assert code != 0
    (line,) = [line for line in out.splitlines() if "compiled.json" in line]
    assert message in line
    assert not (tmp_path / "s" / "answers.jsonl").exists()


def test_a_group_the_file_lacks_is_named_with_those_it_has(words: Path) -> None:
    with pytest.raises(InputError) as caught:
        read_judgements(words, ["amt"])
    assert "field '--group': no group 'amt'; the file has 'inlab', 'inlab_gender'" in str(
        caught.value
    )


def test_a_file_that_is_not_their_object_of_groups_names_line_one(tmp_path: Path) -> None:
    path = tmp_path / "compiled.json"
    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(InputError, match=r"compiled\.json:1: expected a JSON object"):
        read_judgements(path)


def test_their_first_collection_keeps_each_trials_dataset_folder(tmp_path: Path) -> None:
    path = tmp_path / "compiled_original_dataset_first_collection.json"
    path.write_text(json.dumps(shapes.first_collection()), encoding="utf-8")
    judges = read_compiled(path)
    folders = {(t.worker.rsplit("-", 1)[0], t.folder) for t in judges.trials}
    assert folders == {
        ("inlab", "static/dataset"),
        ("mturk", "static/dataset"),
        ("prolific", "static/dataset"),
        ("chatgpt", "Mranmey_chatgpt_dataset_woGender"),
    }
    # The placeholder first trial of every person is skipped.
    assert len([t for t in judges.trials if t.worker == "inlab-1"]) == 5


def test_a_later_runs_true_labels_name_each_conversations_class(tmp_path: Path) -> None:
    from sdtt.commands.import_kreiman import read_judges

    table = tmp_path / "prolific_may30.csv"
    table.write_text(
        shapes.participants_table([shapes.participant_row("L1", shapes.labelled_run())]),
        encoding="utf-8",
    )
    judges, _ = read_judges(table)
    labels = labels_from_trials(judges.trials)
    assert labels == {f"conv{n}": label for n, label in shapes.ORIGINAL_CLASSES.items()}
    # Two runs disagreeing about a conversation: its class is not known, and said so.
    trials = shapes.labelled_run()
    trials[0]["trueLabel"] = "AIAI"
    twice = shapes.participants_table(
        [
            shapes.participant_row("L1", shapes.labelled_run()),
            shapes.participant_row("L2", trials),
        ]
    )
    table.write_text(twice, encoding="utf-8")
    judges, _ = read_judges(table)
    with pytest.raises(InputError) as caught:
        labels_from_trials(judges.trials, source=str(table))
    assert "conv1 is labelled HH and AIAI" in str(caught.value)
    assert "field 'trueLabel'" in str(caught.value) and "--labels" in str(caught.value)
