"""What a kill, a Ctrl-C or a second run on the same output does to research data.

The Ctrl-C tests run ``sdtt`` in a subprocess with a slow mock model (the driver below
makes every mock answer after a delay), wait until it has written something, send
SIGINT and check the exit status, the one line it prints and what it left on disk.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sdtt.cli import main
from sdtt.dialogue.store import read_transcripts
from sdtt.generate.chainfile import read_chain
from sdtt.jsonl import read_jsonl
from sdtt.lock import lock_file, output_lock
from sdtt.tasks.judgements import read_judgements
from sdtt.tasks.questionnaire import save_study
from tests.questionnaires.helpers import fixture_study

DRIVER = """
import sys
import sdtt.models.mock as mock
real = mock.create
delay = float(sys.argv[1])
def slow(model, **options):
    options["delay"] = delay
    return real(model, **options)
mock.create = slow
from sdtt.cli import main
sys.argv = ["sdtt", *sys.argv[2:]]
sys.exit(main(sys.argv[1:]))
"""
INTERRUPTED = "interrupted; everything written so far is kept"
STARTUP = 120.0
"""Seconds a subprocess may take to get going on a busy machine (not a timed test: the
tests wait for what the process writes, and this only bounds a hung run)."""


STARTED: list[subprocess.Popen[str]] = []


@pytest.fixture(autouse=True)
def _no_process_left_behind() -> Iterator[None]:
    yield
    while STARTED:
        process = STARTED.pop()
        if process.poll() is None:
            process.kill()
        process.communicate()


def start(tmp_path: Path, delay: float, *args: str) -> subprocess.Popen[str]:
    """``sdtt ARGS`` in a subprocess whose mock models answer after ``delay`` seconds."""
    process = subprocess.Popen(
        [sys.executable, "-c", DRIVER, str(delay), *args],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
    )
    STARTED.append(process)
    return process


def wait_for(process: subprocess.Popen[str], ready: Callable[[], bool]) -> None:
    deadline = time.monotonic() + STARTUP
    while not ready():
        if process.poll() is not None:
            out, err = process.communicate()
            raise AssertionError(f"sdtt ended early ({process.returncode}):\n{out}\n{err}")
        if time.monotonic() > deadline:
            raise AssertionError("sdtt wrote nothing in time")
        time.sleep(0.1)


def interrupt(process: subprocess.Popen[str]) -> str:
    """Send Ctrl-C; check exit 130 and the one line; return stderr."""
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=STARTUP)
    assert process.returncode == 130, out + err
    assert err.strip().splitlines()[-1] == INTERRUPTED
    assert "Traceback" not in err and "ExceptionGroup" not in err
    return err


def lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


@pytest.fixture
def study(tmp_path: Path) -> Path:
    built = fixture_study()
    folder = tmp_path / "study"
    save_study(folder, built.questionnaire, built.key)
    return folder


def test_ctrl_c_in_simulate_keeps_the_chat_and_says_so(tmp_path: Path) -> None:
    out = tmp_path / "out"
    process = start(
        tmp_path,
        0.2,
        *("simulate", "--persona", "chitchat-32b20fa3", "--model", "mock/chatty"),
        *("--turns", "50", "--t1", "0.5", "--quiet", "--out", str(out)),
    )

    def transcript() -> Path | None:
        found = [p for p in out.glob("*.jsonl") if not p.name.endswith(".events.jsonl")]
        return found[0] if found else None

    wait_for(process, lambda: (path := transcript()) is not None and lines(path) >= 3)
    interrupt(process)
    path = transcript()
    assert path is not None
    assert len(read_transcripts(path)[0].messages) >= 2
    assert list(read_jsonl(path.with_name(path.stem + ".events.jsonl")))


def test_ctrl_c_in_judge_keeps_every_answer_given_and_a_rerun_finishes(
    tmp_path: Path, study: Path
) -> None:
    out = study / "judgements.jsonl"
    judge = ("judge", str(study), "--model", "mock/echo", "--attempts", "1")
    process = start(tmp_path, 0.5, *judge, "--concurrency", "1")
    wait_for(process, lambda: lines(out) >= 1)
    interrupt(process)
    kept = read_judgements(out)
    assert kept
    assert main([*judge]) == 0
    done = read_judgements(out)
    assert done[: len(kept)] == kept
    pairs = [(j.pair_id, j.shown.order) for j in done]
    assert len(pairs) == len(set(pairs)) == 2 * len(fixture_study().questionnaire.items)


def generate_args(out: Path, topics: Path) -> list[str]:
    return [
        *("generate", "--model", "mock/chatty", "--topics", str(topics), "--turns", "6"),
        *("--turns-per-topic", "3", "--history-turns", "20", "--out", str(out)),
    ]


def held(out: Path) -> bool:
    """True once a run holds the lock of folder ``out`` and has said who it is."""
    try:
        return lock_file(out, folder=True).stat().st_size > 0
    except FileNotFoundError:
        return False


def test_a_second_generate_on_the_same_folder_is_refused_naming_the_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    topics = tmp_path / "topics.txt"
    topics.write_text("weekend plans\nnew phones\nbad weather\n")
    out = tmp_path / "chains"
    first = start(tmp_path, 30.0, *generate_args(out, topics))  # stopped long before
    wait_for(first, lambda: held(out))
    capsys.readouterr()
    assert main(generate_args(out, topics)) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "being written by another sdtt run" in err and f"process {first.pid}" in err
    assert "sdtt generate --model mock/chatty" in err
    interrupt(first)
    assert main(generate_args(out, topics)) == 0
    assert not lock_file(out, folder=True).exists()
    (chain,) = out.glob("*.jsonl")
    assert [turn.turn for turn in read_chain(chain).turns] == list(range(6))


def test_judge_and_responses_import_wait_for_nobody(
    tmp_path: Path, study: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "j.jsonl"
    with output_lock(out):
        assert main(["judge", str(study), "--model", "mock/echo", "--out", str(out)]) == 2
        assert f"process {os.getpid()}" in " ".join(capsys.readouterr().err.split())
        answers = Path(__file__).parents[1] / "questionnaires" / "fixtures" / "generic-answers.csv"
        imported = ["responses", "import", str(answers), "--study", str(study)]
        assert main([*imported, "--format", "csv", "-o", str(out), "--append"]) == 2
        assert "being written by another sdtt run" in " ".join(capsys.readouterr().err.split())
    assert not out.exists()


def build(study: Path, *extra: str) -> int:
    workdir = study.parent
    from sdtt.dialogue.store import write_transcripts
    from tests.questionnaires.helpers import bots, humans

    write_transcripts(workdir / "bots.jsonl", bots())
    write_transcripts(workdir / "humans.jsonl", humans())
    return main(
        [
            *("questionnaire", "build", "--bot", str(workdir / "bots.jsonl")),
            *("--human", str(workdir / "humans.jsonl"), "--x", "3", "--name", "fixture"),
            *("--seed", "11", "--out", str(study), *extra),
        ]
    )


def test_a_built_study_is_replaced_only_with_force_and_never_once_fielded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = tmp_path / "study"
    assert build(study) == 0
    key = (study / "answer-key.json").read_bytes()
    assert build(study, "--seed", "12") == 2
    assert "already holds a study" in capsys.readouterr().err
    assert (study / "answer-key.json").read_bytes() == key
    assert build(study, "--seed", "12", "--force") == 0
    assert (study / "answer-key.json").read_bytes() != key
    assert build(study, "--force") == 0
    answers = Path(__file__).parents[1] / "questionnaires" / "fixtures" / "generic-answers.csv"
    out = tmp_path / "responses.jsonl"
    imported = ["responses", "import", str(answers), "--study", str(study), "--format", "csv"]
    assert main([*imported, "-o", str(out)]) == 0
    capsys.readouterr()
    key = (study / "answer-key.json").read_bytes()
    assert build(study, "--seed", "12", "--force") == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "answer key scored 1 judgement file(s)" in err and "responses.jsonl" in err
    assert (study / "answer-key.json").read_bytes() == key
    assert len(read_judgements(out)) == 9


def test_responses_import_replaces_an_existing_file_only_with_force(
    tmp_path: Path, study: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answers = Path(__file__).parents[1] / "questionnaires" / "fixtures" / "generic-answers.csv"
    out = tmp_path / "notes.jsonl"
    out.write_text("my own notes\n")
    imported = ["responses", "import", str(answers), "--study", str(study), "--format", "csv"]
    assert main([*imported, "-o", str(out)]) == 2
    assert "Pass --append" in capsys.readouterr().err
    assert out.read_text() == "my own notes\n"
    assert main([*imported, "-o", str(out), "--force"]) == 0
    assert len(read_judgements(out)) == 9


def test_appending_keeps_a_last_record_that_lost_its_newline(tmp_path: Path, study: Path) -> None:
    answers = Path(__file__).parents[1] / "questionnaires" / "fixtures" / "generic-answers.csv"
    out = tmp_path / "responses.jsonl"
    imported = ["responses", "import", str(answers), "--study", str(study), "--format", "csv"]
    assert main([*imported, "-o", str(out)]) == 0
    out.write_bytes(out.read_bytes().rstrip(b"\n"))  # as another tool might leave it
    assert len(read_judgements(out)) == 9
    assert main([*imported, "-o", str(out), "--append"]) == 0
    assert len(read_judgements(out)) == 18


@pytest.mark.parametrize("line_end", [b"\r", b"\r\n"])
def test_appending_to_a_file_with_other_line_ends_keeps_every_record(
    tmp_path: Path, study: Path, line_end: bytes
) -> None:
    answers = Path(__file__).parents[1] / "questionnaires" / "fixtures" / "generic-answers.csv"
    out = tmp_path / "responses.jsonl"
    imported = ["responses", "import", str(answers), "--study", str(study), "--format", "csv"]
    assert main([*imported, "-o", str(out)]) == 0
    out.write_bytes(out.read_bytes().replace(b"\n", line_end))  # as an old editor saves it
    assert len(read_judgements(out)) == 9
    assert main([*imported, "-o", str(out), "--append"]) == 0
    assert len(read_judgements(out)) == 18
    out.write_bytes(out.read_bytes().rstrip(b"\n").replace(b"\n", line_end).rstrip(line_end))
    assert main([*imported, "-o", str(out), "--append"]) == 0
    assert len(read_judgements(out)) == 27


def test_judge_notes_the_key_so_a_judged_study_is_never_rebuilt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = tmp_path / "study"
    assert build(study) == 0
    out = tmp_path / "judgements.jsonl"
    assert main(["judge", str(study), "--model", "mock/chatty", "--out", str(out)]) == 0
    judged = read_judgements(out)
    capsys.readouterr()
    assert build(study, "--seed", "12", "--force") == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "answer key scored 1 judgement file(s)" in err and "'sdtt judge'" in err
    assert main(["judge", str(study), "--model", "mock/chatty", "--out", str(out)]) == 0
    assert read_judgements(out) == judged


def test_answers_to_two_builds_of_a_study_are_never_mixed_in_one_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    assert build(first) == 0 and build(second, "--seed", "12") == 0
    out = tmp_path / "judgements.jsonl"
    assert main(["judge", str(first), "--model", "mock/chatty", "--out", str(out)]) == 0
    judged = out.read_bytes()
    capsys.readouterr()
    assert main(["judge", str(second), "--model", "mock/chatty", "--out", str(out)]) == 2
    assert "another build of study 'fixture'" in " ".join(capsys.readouterr().err.split())
    answers = Path(__file__).parents[1] / "questionnaires" / "fixtures" / "generic-answers.csv"
    imported = ["responses", "import", str(answers), "--study", str(second), "--format", "csv"]
    assert main([*imported, "-o", str(out), "--append"]) == 2
    assert "another build of study 'fixture'" in " ".join(capsys.readouterr().err.split())
    assert out.read_bytes() == judged


def test_a_second_build_is_refused_before_it_pairs_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sdtt.commands.questionnaire as command

    built: list[object] = []
    real = command.build_study
    monkeypatch.setattr(command, "build_study", lambda *a, **k: built.append(a) or real(*a, **k))
    study = tmp_path / "study"
    with output_lock(study, folder=True):
        assert build(study) == 2
    assert f"process {os.getpid()}" in " ".join(capsys.readouterr().err.split())
    assert not built
    assert build(study) == 0 and built


def test_a_run_refused_while_the_holder_starts_waits_for_its_record(tmp_path: Path) -> None:
    import json
    import socket
    import threading

    from sdtt.lock import describe_holder

    path = tmp_path / ".sdtt.lock"
    path.write_text("")  # taken, record not written yet
    holder = {"pid": os.getpid(), "host": socket.gethostname(), "since": "now", "command": "x"}
    timer = threading.Timer(0.3, lambda: path.write_text(json.dumps(holder)))
    timer.start()
    try:
        assert describe_holder(path).startswith(f"process {os.getpid()} on ")
    finally:
        timer.join()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    path.write_text(json.dumps({**holder, "pid": int(dead.stdout)}))  # a killed run's record
    timer = threading.Timer(0.3, lambda: path.write_text(json.dumps(holder)))
    timer.start()
    try:
        assert describe_holder(path).startswith(f"process {os.getpid()} on ")
    finally:
        timer.join()


CONSOLE = """
import builtins, sys, time
import sdtt.__main__ as entry
case = sys.argv[1]
if case == "import":  # Ctrl-C while the console script imports the command line
    real_import = builtins.__import__
    def importing(name, *args, **kwargs):
        if name == "sdtt.cli":
            raise KeyboardInterrupt
        return real_import(name, *args, **kwargs)
    builtins.__import__ = importing
else:  # Ctrl-C landing in a __del__ method, which Python would ignore
    import sdtt.cli
    class Finalised:
        def __del__(self):
            raise KeyboardInterrupt
    def command(argv=None):
        Finalised()
        time.sleep(30)
        return 0
    sdtt.cli.main = command
sys.exit(entry.main())
"""


@pytest.mark.parametrize("case", ["import", "__del__"])
def test_ctrl_c_at_any_moment_is_exit_130_and_the_one_line(case: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", CONSOLE, case],
        capture_output=True,
        text=True,
        timeout=STARTUP,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
    )
    assert done.returncode == 130, done.stderr
    assert done.stderr.strip().splitlines() == [INTERRUPTED]


def test_the_console_script_imports_the_command_line_inside_its_handler() -> None:
    import tomllib

    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert pyproject["project"]["scripts"]["sdtt"] == "sdtt.__main__:main"
    source = (Path(__file__).parents[2] / "sdtt" / "__main__.py").read_text()
    top = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert all("sdtt" not in line for line in top), top
