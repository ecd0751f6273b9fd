"""Keys go only where they belong, URL passwords are never shown or stored, and chat text
cannot drive the terminal."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from sdtt.cli import build_parser
from sdtt.models import mock
from sdtt.models.sdk import is_own_host
from sdtt.redact import printable, redact_text, redact_url
from tests.align.helpers import write_sources
from tests.commands.inputs import Outcome, run
from tests.fakes.anthropic_fake import FakeAnthropicServer
from tests.fakes.http_fake import ScriptedReply
from tests.fakes.openai_fake import FakeOpenAIServer

OPENAI_KEY = "sk-PLANTED-openai-1a2b3c"
ANTHROPIC_KEY = "sk-ant-PLANTED-4d5e6f"
OWN_KEY = "server-key-PLANTED-7g8h"


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "script.txt").write_text("hey\n\nwhat are you up to\n")


def simulate(model: str, base_url: str, *extra: str, script: str = "script.txt") -> list[str]:
    return [
        "simulate", "--model", model, "--base-url", base_url, "--script", script,
        "--turns", "1", "--virtual-clock", "--out", "out", *extra,
    ]  # fmt: skip


def test_the_openai_key_is_not_sent_to_another_server() -> None:
    with FakeOpenAIServer(reply="Response: fine") as server:
        outcome = run(*simulate("openai/llama3", server.base_url, "--quiet"))
        sent = [request.headers.get("authorization", "") for request in server.requests]
    assert outcome.code == 0, outcome.text
    assert sent and all(OPENAI_KEY not in header for header in sent)


def test_the_anthropic_key_is_not_sent_to_another_server() -> None:
    with FakeAnthropicServer(reply="Response: fine") as server:
        outcome = run(*simulate("anthropic/claude-x", server.base_url, "--quiet"))
        sent = [
            request.headers.get("x-api-key", "") + request.headers.get("authorization", "")
            for request in server.requests
        ]
    assert outcome.code == 0, outcome.text
    assert sent and all(ANTHROPIC_KEY not in header for header in sent)


def test_a_key_named_with_api_key_env_goes_to_that_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MY_SERVER_KEY", OWN_KEY)
    with FakeOpenAIServer(reply="Response: fine", expected_key=OWN_KEY) as server:
        outcome = run(
            *simulate("openai/llama3", server.base_url, "--quiet", "--api-key-env", "MY_SERVER_KEY")
        )
        sent = {request.headers.get("authorization") for request in server.requests}
    assert outcome.code == 0, outcome.text
    assert sent == {f"Bearer {OWN_KEY}"}
    assert OWN_KEY not in outcome.text


def test_an_unset_api_key_env_is_one_line() -> None:
    outcome = run(*simulate("openai/llama3", "http://127.0.0.1:9/v1", "--api-key-env", "NOPE"))
    assert outcome.code == 2
    assert outcome.err.startswith("error: ")
    assert "NOPE" in outcome.text and "not set" in outcome.text


@pytest.mark.parametrize("command", ["demo", "simulate", "chat", "judge", "topics", "generate"])
def test_every_command_with_a_model_takes_api_key_env(command: str) -> None:
    argv = [command, "--model", "openai/x", "--api-key-env", "MY_KEY"]
    if command == "judge":
        argv.append("study")
    assert build_parser().parse_args(argv).api_key_env == "MY_KEY"


@pytest.mark.parametrize(
    ("url", "own"),
    [
        ("https://api.openai.com/v1", True),
        ("https://API.OpenAI.com./v1", True),
        ("http://api.openai.com/v1", False),  # the key would travel in clear text
        ("https://api.openai.com.example.net/v1", False),
        ("https://api.openai.com@example.net/v1", False),
        ("http://localhost:11434/v1", False),
        ("not a url", False),
    ],
)
def test_only_the_providers_own_https_host_counts_as_its_own(url: str, own: bool) -> None:
    assert is_own_host(url, frozenset({"api.openai.com"})) is own


def test_sdtt_models_says_where_keys_go(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:11434/v1")
    text = run("models").text
    assert "OPENAI_API_KEY is not sent there" in text
    assert "--api-key-env" in text
    assert OPENAI_KEY not in text


def garbage_server() -> FakeOpenAIServer:
    """A server whose every answer is not a chat completion (an error that names it)."""
    server = FakeOpenAIServer()
    server.enqueue(*[ScriptedReply(status=200, body="<html>proxy login</html>")] * 50)
    return server


def test_credentials_in_base_url_are_never_printed_or_stored() -> None:
    with garbage_server() as server:
        url = server.base_url.replace("http://", "http://alice:hunter2-PLANTED@")
        outcome = run(*simulate("openai/llama3", url))
    written = "".join(path.read_text() for path in Path("out").glob("*.jsonl"))
    assert "is not a chat completion" in outcome.text + written
    assert "hunter2" not in outcome.text
    assert "hunter2" not in written
    assert "***@127.0.0.1" in outcome.text + written


def test_credentials_in_base_url_stay_out_of_chain_error_records(
    pristine_inputs: dict[str, Path],
) -> None:
    with garbage_server() as server:
        url = server.base_url.replace("http://", "http://alice:hunter2-PLANTED@")
        outcome = run(
            "generate", "--persona", str(pristine_inputs["persona"]), "--model", "openai/x",
            "--base-url", url, "--turns", "2", "--turns-per-topic", "1",
            "--topics", str(pristine_inputs["topics"]), "--out", "chains",
        )  # fmt: skip
    written = "".join(path.read_text() for path in Path("chains").glob("*.jsonl"))
    assert '"pseudo_error"' in written
    assert "hunter2" not in written + outcome.text
    assert "***@127.0.0.1" in written


def test_redaction_hides_user_and_password_only() -> None:
    assert redact_url("https://u:p@host:8/v1?x=1") == "https://***@host:8/v1?x=1"
    assert redact_url("http://localhost:11434/v1") == "http://localhost:11434/v1"
    assert (
        redact_text("could not reach http://me:pw@a.example/v1 or ftp://x@b/")
        == "could not reach http://***@a.example/v1 or ftp://***@b/"
    )


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("at https://alice:p#ss/w?rd@h.example/v1 now", "at https://***@h.example/v1 now"),
        ("https://u:p@ss@h/v1", "https://***@h/v1"),
        ("--base-url alice:pw-PLANTED@10.0.0.2:8/v1", "--base-url ***@10.0.0.2:8/v1"),
        ("(alice:pw-PLANTED@host)", "(***@host)"),
        ("http://localhost:8080/v1/x@y", "http://localhost:8080/v1/x@y"),
        ("https://medium.com/@name, bob@example.org", "https://medium.com/@name, bob@example.org"),
        ("at 12:30 in http://[::1]:8080/v1", "at 12:30 in http://[::1]:8080/v1"),
    ],
)  # fmt: skip
def test_redaction_finds_passwords_with_odd_characters_and_without_a_scheme(
    text: str, shown: str
) -> None:
    assert redact_text(text) == shown


@pytest.mark.parametrize(
    "url",
    [
        "http://alice:se#cret-PLANTED@127.0.0.1:9/v1",
        "http://alice:se/cret-PLANTED@127.0.0.1:9/v1",
        "http://alice:secret-PLANTED@127.0.0.1:9x/v1",
        "alice:secret-PLANTED@127.0.0.1:9/v1",
    ],
)
def test_a_malformed_base_url_is_one_line_without_the_password(url: str) -> None:
    outcome = run(*simulate("openai/llama3", url))
    assert outcome.code == 2 and "Traceback" not in outcome.err
    assert outcome.err.startswith("error: ") and "not a usable URL" in outcome.text
    assert "PLANTED" not in outcome.text


def test_generate_suggests_the_next_command_without_the_password(
    pristine_inputs: dict[str, Path],
) -> None:
    with FakeOpenAIServer() as server:
        url = server.base_url.replace("http://", "http://alice:hunter2-PLANTED@")
        outcome = run(
            "generate", "--persona", str(pristine_inputs["persona"]), "--model", "openai/x",
            "--base-url", url, "--turns", "2", "--turns-per-topic", "1",
            "--topics", str(pristine_inputs["topics"]), "--out", "chains",
        )  # fmt: skip
    assert outcome.code == 0, outcome.text
    assert "sdtt simulate" in outcome.text and "--base-url 'http://***@127.0.0.1" in outcome.text
    assert "hunter2" not in outcome.text


def test_a_401_from_a_server_that_got_no_key_says_so() -> None:
    with FakeOpenAIServer() as server:
        server.enqueue(*[ScriptedReply(status=401, body={"error": {"message": "no"}})] * 20)
        outcome = run(*simulate("openai/llama3", server.base_url))
    assert outcome.code != 0 and "Traceback" not in outcome.err
    assert "none was sent" in outcome.text and "--api-key-env" in outcome.text
    assert "Check that the OPENAI_API_KEY" not in outcome.text


def test_an_answer_cut_off_midway_is_not_called_unreachable() -> None:
    with FakeOpenAIServer() as server:
        cut = ScriptedReply(status=200, body={"id": "x", "choices": [] * 100}, cut_after=5)
        server.enqueue(*[cut] * 20)
        outcome = run(*simulate("openai/llama3", server.base_url))
    assert "Traceback" not in outcome.err
    assert "hung up before its answer was complete" in outcome.text
    assert "could not reach" not in outcome.text


HOSTILE_LINE = "hi \x1b]0;pwned title\x07there\x1b[2J\x1b[H [bold red]not markup[/] \x9b31m!"


def test_simulate_prints_chat_text_without_control_sequences(tmp_path: Path) -> None:
    (tmp_path / "hostile.txt").write_text(HOSTILE_LINE + "\n")
    with FakeOpenAIServer(reply="Response: \x1b]2;owned\x1b\\ok \x1b[31mred\x07") as server:
        outcome = run(*simulate("openai/llama3", server.base_url, script="hostile.txt"))
    assert outcome.code == 0, outcome.text
    assert not any(char in outcome.out for char in "\x1b\x07\x9b")
    assert "pwned title" not in outcome.out and "owned" not in outcome.out
    assert "hi there [bold red]not markup[/]" in outcome.out
    assert "ok red" in outcome.out


def test_printable_keeps_text_and_layout() -> None:
    assert printable("über 😀\tok\nnext") == "über 😀\tok\nnext"
    assert printable("a\rb\x00c\x7fd\u202ee") == "abcde"
    assert printable("line\nbreak", keep_newlines=False) == "linebreak"


HOSTILE_NAME = "x\x1b]0;owned\x07\x1b[2J\u202e[/] [bold]pick [a] or [b] $5 and $6"


def hostile_persona(pristine_inputs: dict[str, Path]) -> Path:
    lines = pristine_inputs["persona"].read_text(encoding="utf-8").splitlines()
    import json

    header = json.loads(lines[0])
    for field in ("source", "license", "attribution", "description"):
        header[field] = HOSTILE_NAME
    header["timing"]["fallback"] = [HOSTILE_NAME]  # the reasons `persona show` lists
    path = Path("personas") / "hostile.jsonl"
    path.parent.mkdir(exist_ok=True)
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    return path


def hostile_judgements(pristine_inputs: dict[str, Path]) -> Path:
    import json

    records = []
    for line in pristine_inputs["judgements"].read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        record["shown"]["bot"] = {**(record["shown"]["bot"] or {}), "model": HOSTILE_NAME}
        record["shown"]["topic"] = HOSTILE_NAME
        records.append(json.dumps(record))
    path = Path("hostile-judgements.jsonl")
    path.write_text("\n".join(records) + "\n", encoding="utf-8")
    return path


def assert_inert(outcome_text: str) -> None:
    assert "\x1b" not in outcome_text and "\x07" not in outcome_text
    assert "\u202e" not in outcome_text


def test_every_printed_field_from_files_is_shown_as_text(
    pristine_inputs: dict[str, Path],
) -> None:
    persona = hostile_persona(pristine_inputs)
    for argv in (["persona", "show", str(persona)], ["persona", "list"]):
        outcome = run(*argv)
        assert outcome.code == 0 and "Traceback" not in outcome.err, outcome.text
        assert_inert(outcome.out + outcome.err)
    shown = run("persona", "show", str(persona))
    assert "pick [a] or [b]" in shown.text and "[/]" in shown.text
    judgements = hostile_judgements(pristine_inputs)
    scored = run("score", str(judgements), "--bootstrap", "0", "--by", "model,topic")
    assert scored.code == 0 and "Traceback" not in scored.err, scored.text
    assert_inert(scored.out + scored.err)
    reported = run("report", str(judgements), "--bootstrap", "0", "--out", "report")
    assert reported.code == 0 and "Traceback" not in reported.err, reported.text
    with FakeOpenAIServer() as server:
        simulated = run(*simulate("openai/\x1b[2Jllama $3 [/]", server.base_url))
    assert "Traceback" not in simulated.err
    assert_inert(simulated.out + simulated.err)


HOSTILE_PATH = "o\x1b]0;owned\x07\x1b[2J\u202e[bold]pick [a] or [b] $5"
"""A file or folder name that is legal on Linux and would drive a terminal if printed raw
(no ``/``, so it stays one name)."""

PRINTING_COMMANDS: dict[str, Callable[[dict[str, Path]], list[str]]] = {
    "topics": lambda f: ["topics", "--model", "mock/chatty", "-n", "2", "--out", HOSTILE_PATH],
    "generate": lambda f: [
        "generate", "--persona", str(f["persona"]), "--model", "mock/chatty", "--turns", "2",
        "--turns-per-topic", "1", "--topics", str(f["topics"]), "--out", HOSTILE_PATH,
    ],
    "questionnaire build": lambda f: [
        "questionnaire", "build", "--bot", str(f["transcript"]), "--human", str(f["humans"]),
        "--x", "3", "--catch", "0", "--out", HOSTILE_PATH,
    ],
    "questionnaire export": lambda f: [
        "questionnaire", "export", str(f["study"]), "--format", "all", "--out", HOSTILE_PATH,
    ],
    "responses import": lambda f: [
        "responses", "import", "--study", str(f["study"]), "--format", "csv",
        str(f["responses_csv"]), "--out", HOSTILE_PATH,
    ],
    "judge": lambda f: ["judge", str(f["study"]), "--model", "mock/chatty", "--out", HOSTILE_PATH],
    "simulate": lambda f: [
        "simulate", "--persona", str(f["persona"]), "--model", "mock/chatty", "--turns", "2",
        "--virtual-clock", "--quiet", "--out", HOSTILE_PATH,
    ],
    "report": lambda f: ["report", str(f["judgements"]), "--bootstrap", "0", "--out", HOSTILE_PATH],
    "demo": lambda f: ["demo", "--model", "mock/chatty", "--out", HOSTILE_PATH],
}  # fmt: skip


@pytest.mark.parametrize("command", sorted(PRINTING_COMMANDS))
def test_every_printed_path_is_shown_as_text(
    command: str, pristine_inputs: dict[str, Path]
) -> None:
    outcome = run(*PRINTING_COMMANDS[command](pristine_inputs))
    assert outcome.code == 0 and "Traceback" not in outcome.err, outcome.text
    assert_inert(outcome.out + outcome.err)
    assert "pick [a] or [b] $5" in outcome.text  # printed as text, not taken as markup


HOSTILE_MODEL = "mock/m\x1b]0;owned\x07\x1b[2J\u202e[bold]pick [a] or [b] $5"
"""A mock model's name that would drive a terminal if printed raw."""


@pytest.fixture
def hostile_mock(monkeypatch: pytest.MonkeyPatch) -> None:
    """``HOSTILE_MODEL`` answers as ``mock/chatty`` does."""
    monkeypatch.setitem(mock.SCRIPTS, HOSTILE_MODEL.removeprefix("mock/"), mock.chatty_script)


def assert_quiet(outcome: Outcome) -> None:
    """Exit 0, no traceback, nothing that drives the terminal."""
    assert outcome.code == 0 and "Traceback" not in outcome.err, outcome.text
    assert_inert(outcome.out + outcome.err)


def assert_shown(outcome: Outcome) -> None:
    """As :func:`assert_quiet`, and the hostile name was printed as text, not as markup."""
    assert_quiet(outcome)
    assert "pick [a] or [b] $5" in outcome.text


@pytest.mark.usefixtures("hostile_mock")
def test_model_names_and_read_file_names_are_shown_as_text(
    pristine_inputs: dict[str, Path],
) -> None:
    study = Path("study")
    shutil.copytree(pristine_inputs["study"], study)
    assert_shown(run("judge", str(study), "--model", HOSTILE_MODEL, "--out", "j.jsonl"))
    assert_shown(run("judge", str(study), "--model", HOSTILE_MODEL, "--reveal", "--out", "t.jsonl"))
    assert_quiet(run("topics", "--model", HOSTILE_MODEL, "-n", "2", "--out", "topics.txt"))
    chain = Path(HOSTILE_PATH + ".jsonl")
    shutil.copyfile(pristine_inputs["chain"], chain)
    assert_quiet(run("drift", str(chain)))
    survey = Path(HOSTILE_PATH + ".json")
    run("questionnaire", "export", str(study), "--format", "surveyjs", "--out", "export")
    (exported,) = Path("export").glob("*surveyjs*.json")
    shutil.copyfile(exported, survey)
    assert_shown(run("questionnaire", "check", str(survey)))


def test_the_demo_shows_a_hostile_persona_as_text(pristine_inputs: dict[str, Path]) -> None:
    persona = hostile_persona(pristine_inputs)
    outcome = run("demo", "--model", "mock/chatty", "--persona", str(persona), "--out", "demo")
    assert_shown(outcome)


@pytest.mark.usefixtures("hostile_mock")
def test_the_align_commands_show_paths_and_models_as_text(tmp_path: Path) -> None:
    write_sources(tmp_path)
    spec = 'name = "a"\nseed = 3\n[rating]\nquestion = "Alike?"\nunit = "burst"\n'
    spec += "items_per_source = 2\n"
    for path, side in (("bots.jsonl", "bot"), ("humans.jsonl", "human")):
        spec += f'[[rating.sources]]\npath = "{path}"\nside = "{side}"\n'
    Path("spec.toml").write_text(spec, encoding="utf-8")
    task = HOSTILE_PATH
    assert_shown(run("align", "build", "spec.toml", "--out", task))
    assert_shown(run("align", "export", task))
    assert_shown(run("align", "judge", task, "--model", HOSTILE_MODEL, "-n", "2"))
    assert_quiet(run("align", "score", task))
    assert_shown(run("align", "report", task, "--out", HOSTILE_PATH + "-report"))


def test_hostile_judge_ids_answers_topics_and_base_urls_stay_inert(
    pristine_inputs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = pristine_inputs["responses_csv"].read_text(encoding="utf-8")
    study = str(pristine_inputs["study"])
    Path("answers.csv").write_text(answers.replace("Woman", HOSTILE_NAME), encoding="utf-8")
    refused = run(
        "responses", "import", "--study", study, "--format", "csv", "answers.csv", "--out", "r"
    )
    assert refused.code == 2 and "Traceback" not in refused.err, refused.text
    assert_inert(refused.out + refused.err)  # the error quotes the answer
    hostile = answers.replace("PID001", "P\x1b]0;owned\x07[/]")
    Path("answers.csv").write_text(hostile, encoding="utf-8")
    imported = run(
        "responses", "import", "--study", study, "--format", "csv", "answers.csv",
        "--out", "j.jsonl",
    )  # fmt: skip
    assert_quiet(imported)
    assert_quiet(run("score", "j.jsonl", "--bootstrap", "0", "--by", "gender"))
    Path("topics.txt").write_text(HOSTILE_NAME + "\npets\n", encoding="utf-8")
    generated = run(
        "generate", "--persona", str(hostile_persona(pristine_inputs)), "--model", "mock/chatty",
        "--turns", "2", "--turns-per-topic", "1", "--topics", "topics.txt", "--out", "chains",
    )  # fmt: skip
    assert_quiet(generated)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://h\x1b[2J\u202e[/]x:pw-PLANTED@h.example/v1")
    listed = run("models")
    assert_quiet(listed)
    assert "PLANTED" not in listed.text
