"""Bad input files and --out paths end in one line naming the file, never a traceback."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from sdtt.tasks.judgements import read_judgements
from tests.commands.inputs import Outcome, run

DEEP_JSON = "[" * 100_000 + "]" * 100_000
HUGE_INT = "9" * 5000
DEEP_TOML = "a = " + "[" * 100_000 + "]" * 100_000 + "\n"

Command = Callable[[dict[str, Path]], list[str]]

# Which file each command reads, and how to run it.
JSONL_READERS: dict[str, tuple[str, Command]] = {
    "persona show": ("persona", lambda f: ["persona", "show", str(f["persona"])]),
    "simulate --persona": (
        "persona",
        lambda f: [
            "simulate",
            "--persona",
            str(f["persona"]),
            "--model",
            "mock/chatty",
            "--script",
            str(f["script"]),
            "--turns",
            "1",
            "--virtual-clock",
            "--quiet",
            "--out",
            "out",
        ],
    ),
    "questionnaire build --bot": (
        "transcript",
        lambda f: [
            "questionnaire",
            "build",
            "--bot",
            str(f["transcript"]),
            "--human",
            str(f["humans"]),
            "--x",
            "3",
            "--out",
            "built",
        ],
    ),
    "drift": ("chain", lambda f: ["drift", str(f["chain"])]),
    "simulate --pseudo": (
        "chain",
        lambda f: [
            "simulate",
            "--pseudo",
            str(f["chain"]),
            "--model",
            "mock/chatty",
            "--script",
            str(f["script"]),
            "--turns",
            "1",
            "--virtual-clock",
            "--quiet",
            "--out",
            "out",
        ],
    ),
    "score": ("judgements", lambda f: ["score", str(f["judgements"])]),
}
JSON_READERS: dict[str, tuple[str, Command]] = {
    "questionnaire export": (
        "questionnaire", lambda f: ["questionnaire", "export", str(f["study"])]
    ),
    "judge (answer key)": (
        "answer_key", lambda f: ["judge", "--model", "mock/chatty", str(f["study"])]
    ),
    "responses import surveyjs": (
        "responses_surveyjs",
        lambda f: [
            "responses", "import", "--study", str(f["study"]), "--format", "surveyjs",
            str(f["responses_surveyjs"]), "--out", "j.jsonl",
        ],
    ),
    "questionnaire check": (
        "responses_surveyjs",
        lambda f: ["questionnaire", "check", str(f["responses_surveyjs"])],
    ),
}  # fmt: skip


def one_line_error(outcome: Outcome, path: Path, *words: str) -> None:
    assert outcome.code == 2, outcome.text
    assert outcome.err.startswith("error: "), outcome.err
    assert "Traceback" not in outcome.err
    assert path.name in outcome.text
    for word in words:
        assert word in outcome.text


@pytest.mark.parametrize("command", JSONL_READERS)
def test_deep_nesting_in_a_jsonl_file_is_one_line(inputs: dict[str, Path], command: str) -> None:
    kind, argv = JSONL_READERS[command]
    inputs[kind].write_text(DEEP_JSON + "\n", encoding="utf-8")
    one_line_error(run(*argv(inputs)), inputs[kind], ":1:", "nested too deeply")


@pytest.mark.parametrize("command", JSONL_READERS)
def test_a_number_of_5000_digits_in_a_jsonl_file_is_one_line(
    inputs: dict[str, Path], command: str
) -> None:
    kind, argv = JSONL_READERS[command]
    lines = inputs[kind].read_text(encoding="utf-8").splitlines()
    lines[1] = '{"type": "message", "n": ' + HUGE_INT + "}"
    inputs[kind].write_text("\n".join(lines) + "\n", encoding="utf-8")
    one_line_error(run(*argv(inputs)), inputs[kind], ":2:", "more than 4300 digits")


@pytest.mark.parametrize("command", JSON_READERS)
@pytest.mark.parametrize(
    ("content", "problem"),
    [(DEEP_JSON, "nested too deeply"), ('{\n"version":\n' + HUGE_INT + "}", "4300 digits")],
    ids=["deep", "huge-int"],
)
def test_hostile_json_documents_are_one_line(
    inputs: dict[str, Path], command: str, content: str, problem: str
) -> None:
    kind, argv = JSON_READERS[command]
    inputs[kind].write_text(content, encoding="utf-8")
    outcome = run(*argv(inputs))
    one_line_error(outcome, inputs[kind], problem)


@pytest.mark.parametrize(
    ("content", "problem", "line"),
    [
        (DEEP_TOML, "nested too deeply", ":1:"),
        ('topics = "chitchat"\nn = ' + HUGE_INT + "\n", "4300 digits", ":2:"),
    ],
    ids=["deep", "huge-int"],
)
@pytest.mark.parametrize("reader", ["plan", "spec"])
def test_hostile_toml_plans_and_specs_are_one_line(
    inputs: dict[str, Path], reader: str, content: str, problem: str, line: str
) -> None:
    path = inputs["plan_toml"] if reader == "plan" else inputs["spec_toml"]
    path.write_text(content, encoding="utf-8")
    if reader == "plan":
        outcome = run("generate", "--plan", str(path), "--dry-run")
    else:
        outcome = run("questionnaire", "build", "--spec", str(path), "--out", "built")
    one_line_error(outcome, path, problem, line)


@pytest.mark.parametrize("reader", ["plan", "spec"])
def test_hostile_json_plans_and_specs_are_one_line(inputs: dict[str, Path], reader: str) -> None:
    path = Path(f"{reader}.json")
    path.write_text('{"a": ' + DEEP_JSON + "}", encoding="utf-8")
    if reader == "plan":
        outcome = run("generate", "--plan", str(path), "--dry-run")
    else:
        outcome = run("questionnaire", "build", "--spec", str(path), "--out", "built")
    one_line_error(outcome, path, "nested too deeply")


def import_csv(inputs: dict[str, Path], path: Path, out: str = "j.jsonl") -> Outcome:
    return run(
        "responses", "import", "--study", str(inputs["study"]), "--format", "csv",
        str(path), "--out", out,
    )  # fmt: skip


def test_responses_with_cr_only_line_endings_import_like_the_original(
    inputs: dict[str, Path],
) -> None:
    original = inputs["responses_csv"]
    old_mac = Path("cr-only.csv")
    old_mac.write_bytes(original.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r"))
    assert import_csv(inputs, original, "lf.jsonl").code == 0
    outcome = import_csv(inputs, old_mac, "cr.jsonl")
    assert outcome.code == 0, outcome.text

    def answers(path: str) -> list[tuple[str, str, str | None]]:
        return [(j.judge_id, j.pair_id, j.choice) for j in read_judgements(path)]

    assert answers("cr.jsonl") == answers("lf.jsonl")
    assert len(answers("cr.jsonl")) == 9


def test_a_csv_field_over_128_kb_is_one_line_naming_the_line(inputs: dict[str, Path]) -> None:
    path = inputs["responses_csv"]
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[3] = 'PID001,strategy,"' + "x" * 200_000 + '",'
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    one_line_error(import_csv(inputs, path), path, ":4:", "not valid CSV")


FOLDER_OUTS: dict[str, Command] = {
    "demo": lambda f: ["demo", "--model", "mock/chatty", "--persona", str(f["persona"])],
    "persona import": lambda f: [
        "persona",
        "import",
        "jsonl",
        str(f["transcript"]),
        "--me",
        "x",
    ],
    "simulate": lambda f: [
        "simulate",
        "--persona",
        str(f["persona"]),
        "--model",
        "mock/chatty",
        "--script",
        str(f["script"]),
        "--turns",
        "1",
        "--virtual-clock",
        "--quiet",
    ],
    "generate": lambda f: [
        "generate",
        "--persona",
        str(f["persona"]),
        "--model",
        "mock/chatty",
        "--turns",
        "2",
        "--turns-per-topic",
        "1",
        "--topics",
        str(f["topics"]),
    ],
    "questionnaire build": lambda f: [
        "questionnaire",
        "build",
        "--bot",
        str(f["transcript"]),
        "--human",
        str(f["humans"]),
        "--x",
        "3",
    ],
    "questionnaire export": lambda f: ["questionnaire", "export", str(f["study"])],
    "report": lambda f: ["report", str(f["judgements"]), "--bootstrap", "0"],
}
FILE_OUTS: dict[str, Command] = {
    "responses import": lambda f: [
        "responses", "import", "--study", str(f["study"]), "--format", "csv",
        str(f["responses_csv"]),
    ],
    "judge": lambda f: ["judge", "--model", "mock/chatty", str(f["study"])],
    "topics": lambda f: ["topics", "--model", "mock/chatty", "-n", "2"],
}  # fmt: skip


@pytest.mark.parametrize("command", FOLDER_OUTS)
@pytest.mark.parametrize(
    ("out", "problem"),
    [("a-file", "is a file, but --out must be a folder"), ("a-file/sub", "part of the path")],
)
def test_an_out_folder_that_cannot_be_made_is_one_line(
    inputs: dict[str, Path], command: str, out: str, problem: str
) -> None:
    Path("a-file").write_text("keep me\n")
    outcome = run(*FOLDER_OUTS[command](inputs), "--out", out)
    one_line_error(outcome, Path(out), problem)
    assert Path("a-file").read_text() == "keep me\n"


@pytest.mark.parametrize("command", FILE_OUTS)
@pytest.mark.parametrize(
    ("out", "problem"),
    [
        ("a-folder", "is a folder, but --out must be a file"),
        ("a-file/j.jsonl", "cannot create the folder of --out"),
    ],
)
def test_an_out_file_that_cannot_be_written_is_one_line(
    inputs: dict[str, Path], command: str, out: str, problem: str
) -> None:
    Path("a-folder").mkdir()
    Path("a-file").write_text("keep me\n")
    outcome = run(*FILE_OUTS[command](inputs), "--out", out)
    one_line_error(outcome, Path(out), problem)


@pytest.mark.parametrize("name", ["questionnaire", "answer_key"])
@pytest.mark.parametrize("version", [2, 0, "1", True])
def test_a_study_file_of_another_schema_version_is_refused(
    inputs: dict[str, Path], name: str, version: object
) -> None:
    path = inputs[name]
    document = json.loads(path.read_text(encoding="utf-8"))
    document["version"] = version
    path.write_text(json.dumps(document), encoding="utf-8")
    outcome = run("questionnaire", "export", str(inputs["study"]))
    one_line_error(outcome, path, "field 'version'")


def test_a_persona_file_cut_in_half_is_refused(inputs: dict[str, Path]) -> None:
    path = inputs["persona"]
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    outcome = run("persona", "show", str(path))
    one_line_error(outcome, path, "cut off", "incomplete")


@pytest.mark.filterwarnings("default::sdtt.errors.IncompleteFileWarning")
def test_a_judgement_file_cut_in_half_is_scored_with_a_warning(inputs: dict[str, Path]) -> None:
    path = inputs["judgements"]
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    outcome = run("score", str(path), "--bootstrap", "0")
    assert outcome.code == 0, outcome.text
    assert outcome.err.startswith("warning: "), outcome.err
    assert "judgements.jsonl:" in outcome.text and "the last judgement is cut off" in outcome.text


def test_nesting_python_can_parse_but_sdtt_cannot_write_back_is_refused(
    inputs: dict[str, Path],
) -> None:
    # 150 levels parse, but the conversation's metadata would later fail to be written
    # into the answer key.
    path = inputs["transcript"]
    lines = path.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    header["meta"] = {"x": json.loads("[" * 150 + "]" * 150)}
    lines[0] = json.dumps(header)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    outcome = run(*JSONL_READERS["questionnaire build --bot"][1](inputs))
    one_line_error(outcome, path, ":1:", "nested too deeply")


def test_a_lone_surrogate_in_a_transcript_builds_and_exports(inputs: dict[str, Path]) -> None:
    path = inputs["transcript"]
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('"text":"', '"text":"\\ud83d half an emoji '), encoding="utf-8")
    built = run(
        "questionnaire", "build", "--bot", str(path), "--human", str(inputs["humans"]),
        "--x", "3", "--catch", "0", "--out", "built",
    )  # fmt: skip
    assert built.code == 0, built.text
    # Changed on the way in, and said so: how many, and where the first one is.
    assert f"{path.name}:" in built.err and "lone surrogate(s) replaced by U+FFFD" in built.err
    exported = run("questionnaire", "export", "built", "--format", "all")
    assert exported.code == 0, exported.text
    assert not list(Path("built").rglob("*.partial"))
    assert "\ufffd half an emoji" in Path("built/questionnaire.json").read_text(encoding="utf-8")


def test_questionnaire_check_on_a_limesurvey_field_over_128_kb_is_one_line(
    inputs: dict[str, Path],
) -> None:
    assert run("questionnaire", "export", str(inputs["study"]), "--format", "limesurvey").code == 0
    (path,) = (inputs["study"] / "export").glob("*.txt")
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[-1] = lines[-1] + '\t"' + "x" * 200_000
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    one_line_error(run("questionnaire", "check", str(path)), path, "not a valid tab-separated")


@pytest.mark.parametrize("problem", ["missing", "not UTF-8"])
def test_questionnaire_check_on_an_unreadable_file_is_an_error_line_and_exit_2(
    inputs: dict[str, Path], problem: str
) -> None:
    path = inputs["responses_surveyjs"]
    if problem == "missing":
        path.unlink()
    else:
        path.write_bytes(b'{"a": "\xff"}')
    outcome = run("questionnaire", "check", str(path))
    one_line_error(outcome, path)
    assert not outcome.out


TEXT_READERS: dict[str, tuple[str, Command]] = {
    "generate --topics": ("topics", lambda f: [
        "generate", "--topics", str(f["topics"]), "--model", "mock/chatty", "--dry-run",
    ]),
    "simulate --script": ("script", lambda f: [
        "simulate", "--persona", str(f["persona"]), "--model", "mock/chatty", "--script",
        str(f["script"]), "--turns", "1", "--virtual-clock", "--quiet", "--out", "out",
    ]),
}  # fmt: skip


@pytest.mark.parametrize("damage", ["utf-16 without BOM", "NUL-filled"])
@pytest.mark.parametrize("reader", TEXT_READERS)
def test_topic_and_script_files_in_utf16_or_full_of_nuls_are_refused(
    inputs: dict[str, Path], reader: str, damage: str
) -> None:
    kind, command = TEXT_READERS[reader]
    path = inputs[kind]
    text = path.read_text(encoding="utf-8")
    path.write_bytes(text.encode("utf-16-le") if damage.startswith("utf") else b"\0" * 4096)
    one_line_error(run(*command(inputs)), path, "NUL")


def non_regular_inputs(tmp_path: Path) -> dict[str, Path]:
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    return {"/dev/zero": Path("/dev/zero"), "FIFO": fifo}


@pytest.mark.parametrize(
    "reader", ["persona show", "score", "generate --topics", "simulate --script"]
)
def test_devices_as_input_are_refused_at_once(
    inputs: dict[str, Path], tmp_path: Path, reader: str
) -> None:
    kind, command = {**JSONL_READERS, **TEXT_READERS}[reader]
    path = Path("/dev/zero")
    outcome = run(*command({**inputs, kind: path}))
    one_line_error(outcome, path, "not a regular file")


@pytest.mark.parametrize(
    "reader", ["persona show", "score", "generate --topics", "simulate --script"]
)
def test_a_pipe_nobody_writes_is_refused_at_the_deadline(
    inputs: dict[str, Path], tmp_path: Path, reader: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SDTT_PIPE_DEADLINE", "0.2")
    kind, command = {**JSONL_READERS, **TEXT_READERS}[reader]
    path = non_regular_inputs(tmp_path)["FIFO"]
    outcome = run(*command({**inputs, kind: path}))
    one_line_error(outcome, path, "is a pipe that delivered nothing within 0.2 s")


def test_a_device_as_out_file_is_refused(inputs: dict[str, Path]) -> None:
    outcome = run("judge", str(inputs["study"]), "--model", "mock/chatty", "--out", "/dev/full")
    one_line_error(outcome, Path("/dev/full"), "not a regular file")


@pytest.mark.parametrize("command", ["score", "report"])
def test_an_integer_past_64_bits_in_what_a_judge_was_shown_is_no_traceback(
    inputs: dict[str, Path], command: str
) -> None:
    path = inputs["judgements"]
    lines = path.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["shown"]["live_to"] = 10**20  # valid JSON and a valid int; orjson writes none past 2**64
    path.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    argv = [command, str(path), "--bootstrap", "0"]
    outcome = run(*argv, *(["--out", "out"] if command == "report" else []))
    assert "Traceback" not in outcome.err, outcome.err
    assert outcome.code in (0, 1), outcome.text
