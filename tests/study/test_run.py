"""``sdtt study run``: the whole design, in order, resumable without a repeated call."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from sdtt.cli import main
from sdtt.errors import InputError, OutputInUseError, SdttError
from sdtt.lock import output_lock
from sdtt.models.registry import create_api
from sdtt.study.runner import StudyRunner
from sdtt.study.spec import read_spec
from sdtt.study.status import study_status
from tests.study.conftest import Reference
from tests.study.helpers import CountingMocks, Killed, drive, run_study, write_spec


def test_a_bad_spec_is_one_error_naming_file_line_and_field(tmp_path: Path) -> None:
    spec = write_spec(tmp_path)
    text = spec.read_text(encoding="utf-8").replace(
        "turns = [[0, 2], [6, 2]]", "turns = [[0, 2], [6, 0]]"
    )
    spec.write_text(text, encoding="utf-8")
    line = text.splitlines().index("turns = [[0, 2], [6, 0]]") + 1
    with pytest.raises(InputError) as caught:
        read_spec(spec)
    assert caught.value.line == line
    assert caught.value.field == "design.turns"
    assert f"{spec}:{line}" in str(caught.value)


def test_a_missing_spec_points_to_an_example(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        read_spec(tmp_path / "study.toml")
    message = str(caught.value)
    assert "study.toml: study spec not found" in message and "turns_study.toml" in message


def test_settings_wrong_together_name_their_line_too(tmp_path: Path) -> None:
    spec = write_spec(tmp_path)
    text = spec.read_text("utf-8").replace("[judges.llm]", "[judges.survey]")
    spec.write_text(text, "utf-8")
    with pytest.raises(InputError, match="not 'survey'") as caught:
        read_spec(spec)
    assert (caught.value.field, caught.value.line) == (
        "judges.survey",
        text.splitlines().index("[judges.survey]") + 1,
    )


def test_run_makes_everything_then_a_rerun_calls_nothing(tmp_path: Path) -> None:
    spec = write_spec(tmp_path)
    first = CountingMocks()
    result = run_study(spec, first)
    assert result.finished
    out = tmp_path / "out"
    assert (out / "report" / "report.html").exists()
    assert len(list((out / "pseudo").glob("*.jsonl"))) == 1  # the N = 6 cell's chain
    assert (out / "judgements" / "llm.jsonl").stat().st_size > 0
    assert first.calls
    again = CountingMocks()
    assert run_study(spec, again).finished
    assert again.calls == []


@pytest.mark.parametrize("stage", ["chains", "chats", "judges"])
def test_a_killed_run_resumes_without_repeating_a_call(
    tmp_path: Path, stage: str, reference: Reference
) -> None:
    """Killed in the middle of a stage, then run again: the provider saw exactly the
    calls of an uninterrupted run, each as often, and the report is the same."""
    whole = reference.mocks
    stages = [r["stage"] for r in reference.ledger()]
    assert len(stages) == len(whole.calls)
    kill_after = stages.index(stage) + stages.count(stage) // 2

    spec = write_spec(tmp_path / "killed")
    killed = CountingMocks(kill_after=kill_after)
    with pytest.raises(BaseException) as caught:
        run_study(spec, killed)
    assert (
        caught.group_contains(Killed)
        if isinstance(caught.value, BaseExceptionGroup)
        else caught.type is Killed
    )
    assert len(killed.calls) == kill_after
    resumed = CountingMocks()
    assert run_study(spec, resumed).finished
    assert killed.counted() + resumed.counted() == whole.counted()
    report = json.loads((tmp_path / "killed/out/report/figures.json").read_text("utf-8"))
    assert report == json.loads((reference.out / "report/figures.json").read_text("utf-8"))


def test_status_shows_the_grid_with_done_and_missing(tmp_path: Path, reference: Reference) -> None:
    second = ["N=6" in str(r["condition"]) and r["stage"] == "chats" for r in reference.ledger()]
    spec = write_spec(tmp_path / "cut")
    with pytest.raises(BaseException):  # noqa: B017 - Killed, maybe in a group
        run_study(spec, CountingMocks(kill_after=second.index(True) + sum(second) // 2))
    status = study_status(read_spec(spec))
    assert [(r.n, r.x) for r in status.grid] == [(0, 2), (6, 2)]
    assert status.grid[0].chat == "done"
    assert status.grid[1].chain == "done"
    assert status.grid[1].chat == "running"  # cut short in its chat
    assert [s for _, s in status.steps] == ["missing", "missing", "missing"]
    run_study(spec, CountingMocks())
    status = study_status(read_spec(spec))
    assert {r.chat for r in status.grid} == {"done"}
    assert {s for _, s in status.steps} == {"done"}


def test_the_command_line_runs_the_study_and_shows_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(tmp_path)
    assert main(["study", "run", str(spec), "--quiet"]) == 0
    shown = capsys.readouterr().out
    assert any(line.startswith("study finished") for line in shown.splitlines()), shown
    assert "chats" in shown and "2/2" in shown
    assert main(["study", "status", str(spec)]) == 0
    assert "done" in capsys.readouterr().out


def test_human_chats_stop_the_run_with_the_commands_to_hold_them(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, interrogator="human")
    mocks = CountingMocks()
    result = run_study(spec, mocks)
    assert not result.finished
    assert result.waiting is not None and result.waiting.stage == "chats"
    assert any(
        "sdtt chat --persona chitchat-32b20fa3" in line and "--turns 2" in line
        for line in result.next
    )
    assert any("--pseudo" in line for line in result.next)  # the N = 6 cell gets its chain


def _answer_everything(questionnaire: Path, to: Path) -> None:
    """Three made-up judges who answer 'A' on every pair, as SurveyJS exports them."""
    items = json.loads(questionnaire.read_text("utf-8"))["items"]
    to.write_text(
        json.dumps([{item["id"]: "A" for item in items} | {"judge": str(n)} for n in range(3)]),
        encoding="utf-8",
    )


def test_the_survey_stops_the_run_and_its_answers_finish_it(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, extra='\n[survey]\nformat = "surveyjs"\njudges = 3\n')
    result = run_study(spec, CountingMocks())
    assert not result.finished and result.waiting is not None
    assert result.waiting.id == "survey answers"
    out = tmp_path / "out"
    assert any(str(out / "survey" / "surveyjs.json") in line for line in result.next)
    assert [s.id for s in result.undone] == ["survey answers", "report"]
    assert not (out / "report").exists()
    _answer_everything(out / "questionnaire" / "questionnaire.json", out / "survey" / "answers")
    again = CountingMocks()
    assert run_study(spec, again).finished
    assert again.calls == []  # the LLM judge was done already
    kinds = Counter(
        json.loads(line)["judge_type"]
        for line in (out / "judgements" / "survey.jsonl").read_text("utf-8").splitlines()
    )
    assert kinds == {"human": kinds["human"]} and kinds["human"] > 0
    assert (out / "report" / "report.html").exists()


def test_generated_topics_come_first_and_the_chain_walks_them(tmp_path: Path) -> None:
    spec = write_spec(tmp_path)
    text = spec.read_text("utf-8").replace(
        "turns_per_topic = 3", 'turns_per_topic = 3\ntopics = "generate"\ntopics_count = 2'
    )
    spec.write_text(text, "utf-8")
    mocks = CountingMocks()
    assert run_study(spec, mocks).finished
    topics = [
        line
        for line in (tmp_path / "out/topics.txt").read_text("utf-8").splitlines()
        if line and not line.startswith("#")
    ]
    assert len(topics) == 2
    (chain,) = (tmp_path / "out/pseudo").glob("*.jsonl")
    header = json.loads(chain.read_text("utf-8").splitlines()[0])
    assert [t["topic"] for t in header["spec"]["topics"]] == topics
    assert {s for _, s in study_status(read_spec(spec)).steps} == {"done"}
    assert run_study(spec, CountingMocks()).finished


KILLER = """
import os, signal, sys
from pathlib import Path
from sdtt.study.ledger import call_key
from tests.study.helpers import CountingMocks, run_study

answered = []

class Dying(CountingMocks):
    def __call__(self, name):
        api = super().__call__(name)
        inner = api.generate

        async def generate(prompt, config):
            if len(answered) >= int(sys.argv[3]):  # the next call, while it is in flight
                os.kill(os.getpid(), signal.SIGKILL)
            output = await inner(prompt, config)
            answered.append(call_key(name, prompt, config))
            with open(sys.argv[2], "a") as log:
                log.write(answered[-1] + "\\n")
            return output

        api.generate = generate
        return api

run_study(Path(sys.argv[1]), Dying())
"""


def test_a_real_kill_mid_run_repeats_no_call(tmp_path: Path, reference: Reference) -> None:
    """SIGKILL while a chat's call is in flight: nothing is flushed, closed or cleaned
    up, yet the run again asks only what had not been answered."""
    stages = [r["stage"] for r in reference.ledger()]
    kill_after = stages.index("chats") + stages.count("chats") // 2
    spec = write_spec(tmp_path)
    calls = tmp_path / "calls.txt"
    root = Path(__file__).parents[2]
    done = subprocess.run(
        [sys.executable, "-c", KILLER, str(spec), str(calls), str(kill_after)],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        timeout=600,
    )
    assert done.returncode == -9, done.stderr.decode()
    before = Counter(calls.read_text("utf-8").split())
    assert sum(before.values()) == kill_after
    resumed = CountingMocks()
    assert run_study(spec, resumed).finished
    assert before + resumed.counted() == reference.mocks.counted()


def test_a_judge_added_later_is_run_and_the_report_made_again(tmp_path: Path) -> None:
    spec = write_spec(tmp_path)
    assert run_study(spec, CountingMocks()).finished
    figures = tmp_path / "out/report/figures.json"
    before = json.loads(figures.read_text("utf-8"))
    with spec.open("a", encoding="utf-8") as file:
        file.write('\n[judges.second]\nmodel = "mock/chatty"\nkind = "zero-shot"\n')
    again = CountingMocks()
    assert run_study(spec, again).finished
    assert again.calls  # only the new judge's
    assert (tmp_path / "out/judgements/second.jsonl").stat().st_size > 0
    titles = {s["title"] for s in json.loads(figures.read_text("utf-8"))["sections"]}
    assert titles - {s["title"] for s in before["sections"]}  # its tables are in the report


def test_a_second_run_of_the_same_study_at_once_is_refused(tmp_path: Path) -> None:
    spec = write_spec(tmp_path)
    mocks = CountingMocks()
    with output_lock(tmp_path / "out", folder=True), pytest.raises(OutputInUseError):
        run_study(spec, mocks)
    assert mocks.calls == []


def test_a_chat_whose_calls_all_fail_is_not_taken_for_done(tmp_path: Path) -> None:
    spec = write_spec(tmp_path)
    spec.write_text(
        spec.read_text("utf-8").replace("turns = [[0, 2], [6, 2]]", "turns = [[0, 2]]"), "utf-8"
    )
    with pytest.raises(SdttError, match=r"no turn of the chat .* was answered"):
        StudyRunner(
            read_spec(spec), drive=drive, api_factory=lambda name: create_api("mock/fail")
        ).run()
    assert study_status(read_spec(spec)).grid[0].chat != "done"
