"""``sdtt single`` end to end on the command line, offline: build, export, import
fabricated answers, judge with a mock model (zero- and one-shot), score, machine chats."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import pytest

from sdtt.cli import main
from sdtt.dialogue.store import read_transcripts, write_transcripts
from sdtt.single.build import load_key, load_task
from tests.single.helpers import corpus


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["single", *map(str, args)])
    out = capsys.readouterr()
    return code, out.out + out.err


def fabricated_results(study: Path, seed: int) -> list[dict[str, object]]:
    """SurveyJS results of one made-up judge per form, as the host page would save them:
    right about 80% of the speakers, always right about the topic."""
    task, key = load_task(study), load_key(study)
    rng = random.Random(seed)
    results = []
    for number, form in enumerate(task.forms, start=1):
        result: dict[str, object] = {"PROLIFIC_PID": f"judge{number}"}
        for item_id in form:
            item, entry = task.item(item_id), key.entry(item_id)
            for index, judged in enumerate(item.judged, start=1):
                truth = entry.truth.get(judged.key, "human")
                wrong = "machine" if truth == "human" else "human"
                result[item.verdict_name(index)] = truth if rng.random() < 0.8 else wrong
            if item.topic is not None:
                result[item.topic_name] = entry.topic
        results.append(result)
    return results


def test_the_whole_single_item_study_runs_offline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chats = tmp_path / "chats.jsonl"
    write_transcripts(chats, corpus(3, 12))
    study = tmp_path / "study"
    code, out = run(
        capsys, "build", chats, "-o", study, "--cuts", "3,6,12", "--forms", "6",
        "--per-judge", "8", "--catch-per-judge", "1",
    )  # fmt: skip
    assert code == 0, out
    assert "36 items from 12 sources (9 HH, 9 HM, 9 MH, 9 MM), 6 catch items" in out

    code, out = run(capsys, "export", study, "--format", "surveyjs", "--format", "jspsych")
    assert code == 0, out
    exported = {p.name for p in (study / "export").iterdir()}
    assert exported == {f"single-surveyjs-form-{n}.json" for n in range(1, 7)} | {
        "single-jspsych.html"
    }

    results = tmp_path / "results.json"
    results.write_text(json.dumps(fabricated_results(study, 1)), encoding="utf-8")
    code, out = run(capsys, "import", study, results, "--format", "surveyjs")
    assert code == 0 and "54 answer(s) from 6 judge(s)" in out, out
    code, out = run(capsys, "import", study, results, "--format", "surveyjs")
    assert "0 answer(s)" in out and "54 already there, skipped" in out

    code, out = run(capsys, "judge", study, "--model", "mock/chatty")
    assert code == 0 and "42 answer(s) by mock/chatty (zero-shot)" in out, out
    code, out = run(capsys, "judge", study, "--model", "mock/chatty")
    assert "0 answer(s)" in out and "42 from an earlier run kept" in out
    code, out = run(capsys, "judge", study, "--model", "mock/chatty", "--kind", "one-shot")
    # The example is the longest HM cut (hm2@12); nothing made from hm2 is judged.
    asked = [e for e in load_key(study).items if e.source != "hm2"]
    assert len(asked) < 42
    assert code == 0 and f"{len(asked)} answer(s) by mock/chatty (one-shot)" in out, out

    rows = tmp_path / "rows.csv"
    code, out = run(capsys, "score", study, "--bootstrap", "200", "--csv", rows)
    assert code == 0, out
    for title in ("Verdicts of human judges", "Verdicts of llm mock/chatty zero-shot", "Tests"):
        assert title in out
    assert "catch items' machines called machines: human: " in " ".join(out.split())
    table = list(csv.DictReader(rows.read_text(encoding="utf-8").splitlines()))
    groups = {row["judges"] for row in table}
    assert groups == {"human", "llm mock/chatty zero-shot", "llm mock/chatty one-shot"}
    top = next(
        r for r in table if r["judges"] == "human" and r["class"] == "all" and r["cut"] == "all"
    )
    assert float(top["detectability"]) > 0.6
    assert float(top["detectability_low"]) <= float(top["detectability"])


def test_machine_chats_from_the_command_line_record_their_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    humans = tmp_path / "humans.jsonl"
    write_transcripts(humans, corpus(1, 8))
    out_file = tmp_path / "mm.jsonl"
    code, out = run(
        capsys, "machine-chats", "--model", "mock/chatty", "--lengths-from", humans,
        "--count", "2", "--exchanges", "6", "--topic", "music", "-o", out_file,
    )  # fmt: skip
    assert code == 0 and "2 chat(s) of 6 messages" in out, out
    made = read_transcripts(out_file)
    assert [len(t.messages) for t in made] == [6, 6]
    assert all(
        t.topic == "music" and t.meta["speakers"] == {"A": "machine", "B": "machine"} for t in made
    )
    assert made[0].meta["generation"]["settings"]["exchanges"] == 6
    # Their items build like any others.
    code, out = run(
        capsys, "build", out_file, "-o", tmp_path / "mm", "--cuts", "6", "--per-judge", "2"
    )
    assert code == 0 and "2 MM" in out, out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["build", "{chats}", "-o", "{tmp}/s", "--cuts", "3,x"], "--cuts '3,x' is not"),
        (["build", "{chats}", "-o", "{tmp}/s", "--per-judge", "50"], "different sources"),
        (["score", "{tmp}/nothing"], "does not exist. Build the study first"),
        (["import", "{chats}", "{chats}", "--format", "qualtrics"], "qualtrics cannot field"),
    ],
)
def test_mistakes_get_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    chats = tmp_path / "chats.jsonl"
    write_transcripts(chats, corpus(1, 6))
    code, out = run(capsys, *[a.format(chats=chats, tmp=tmp_path) for a in args])
    assert code == 2
    assert message in " ".join(out.split())
    assert "Traceback" not in out


def test_a_built_study_is_replaced_only_with_force_and_never_once_answered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chats = tmp_path / "chats.jsonl"
    write_transcripts(chats, corpus(1, 6))
    study = tmp_path / "study"
    build = ("build", chats, "-o", study, "--cuts", "3,6", "--per-judge", "1")
    assert run(capsys, *build)[0] == 0
    task = (study / "single-task.json").read_text()
    code, out = run(capsys, *build, "--forms", "2")
    assert code == 2 and "pass --force" in " ".join(out.split())
    assert (study / "single-task.json").read_text() == task
    assert run(capsys, *build, "--force")[0] == 0
    results = tmp_path / "results.json"
    results.write_text(json.dumps(fabricated_results(study, seed=1)))
    assert run(capsys, "import", study, results, "--format", "surveyjs")[0] == 0
    task = (study / "single-task.json").read_text()
    code, out = run(capsys, *build, "--forms", "2", "--force")
    assert code == 2 and "answers.jsonl" in out, out
    assert (study / "single-task.json").read_text() == task


def test_machine_chats_keep_an_existing_file_unless_forced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    humans = tmp_path / "humans.jsonl"
    write_transcripts(humans, corpus(1, 8))
    out_file = tmp_path / "mm.jsonl"
    out_file.write_text("kept\n")
    chats = ("machine-chats", "--model", "mock/chatty", "--lengths-from", humans, "--count", "1")
    code, out = run(capsys, *chats, "-o", out_file)
    assert code == 2 and "pass --force" in " ".join(out.split())
    assert out_file.read_text() == "kept\n"
    assert run(capsys, *chats, "-o", out_file, "--force")[0] == 0
    assert len(read_transcripts(out_file)) == 1
